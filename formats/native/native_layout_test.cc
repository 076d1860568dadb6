// Reads a written file by hand, following FORMAT.md byte by byte, to check
// that the documented layout is what the writer produces.
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <limits>

#include <gtest/gtest.h>

#include "formats/native/native_format.h"
#include "formats/native/native_test_util.h"
#include "formats/proto/mtrace.pb.h"
#include "formats/sample_trace.h"

namespace moetrace {
namespace {

const uint8_t* U(const std::string& s, size_t at) {
  return reinterpret_cast<const uint8_t*>(s.data()) + at;
}

// Checks the record at `at` and returns its decompressed message bytes.
std::string Record(const std::string& file, size_t at, uint8_t kind, size_t* size) {
  const uint32_t stored = native::GetU32(U(file, at));
  const uint32_t raw = native::GetU32(U(file, at + 4));
  EXPECT_EQ(native::GetU32(U(file, at + 8)),
            static_cast<uint32_t>(crc32(0, U(file, at + 16), stored)));
  EXPECT_EQ(file[at + 12], static_cast<char>(kind));
  EXPECT_EQ(file.substr(at + 13, 3), std::string(3, '\0'));
  std::string out(raw, '\0');
  EXPECT_EQ(ZSTD_decompress(out.data(), raw, U(file, at + 16), stored), raw);
  *size = 16 + stored;
  return out;
}

TEST(NativeLayout, FileFollowsFormatMd) {
  Trace t = MakeSampleTrace(3, 30, 4);
  const std::string f = testing_native::Encode(t, {1, 40});
  ASSERT_EQ(f.substr(0, 8), std::string("\x89MTRACE\n", 8));
  EXPECT_EQ(native::GetU32(U(f, 8)), 1u);
  EXPECT_EQ(native::GetU32(U(f, 12)), 0u);
  const size_t trailer = f.size() - 24;
  EXPECT_EQ(f.substr(trailer + 16), "MTRACEND");
  EXPECT_EQ(native::GetU32(U(f, trailer + 12)), 1u);
  const uint64_t footer_at = native::GetU64(U(f, trailer));
  EXPECT_EQ(footer_at + native::GetU32(U(f, trailer + 8)), trailer);

  size_t size = 0;
  native::Footer footer;
  ASSERT_TRUE(footer.ParseFromString(Record(f, footer_at, native::kRecordFooter, &size)));
  EXPECT_EQ(footer.metadata().source(), "sample");
  ASSERT_EQ(footer.ranks_size(), 3);
  // Records tile the file from byte 16 to the footer, in index order.
  size_t at = 16;
  for (int r = 0; r < 3; ++r) {
    const native::RankIndex& ri = footer.ranks(r);
    EXPECT_EQ(ri.rank(), r);
    EXPECT_EQ(ri.header_offset(), at);
    native::RankHeader h;
    ASSERT_TRUE(h.ParseFromString(Record(f, at, native::kRecordRankHeader, &size)));
    EXPECT_EQ(ri.header_size(), size);
    at += size;
    EXPECT_EQ(h.strings_size() + 1, static_cast<int>(t.ranks[r].strings.size()));
    std::vector<uint64_t> events(h.tracks_size()), samples(h.tracks_size());
    for (const native::BlockIndex& b : ri.blocks()) {
      EXPECT_EQ(b.offset(), at);
      native::Block block;
      const std::string raw = Record(f, at, native::kRecordBlock, &size);
      ASSERT_TRUE(block.ParseFromString(raw));
      // The writer serializes blocks by hand: exactly as protobuf would.
      EXPECT_EQ(block.SerializeAsString(), raw);
      EXPECT_EQ(b.size(), size);
      EXPECT_EQ(block.count(), b.count());
      EXPECT_LE(b.count(), 40u);
      at += size;
      const Track& tr = t.ranks[r].tracks[b.track()];
      if (b.kind() == native::EVENTS) {
        // The index's time range is that of the block's rows.
        int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
        for (size_t i = events[b.track()]; i < events[b.track()] + b.count(); ++i) {
          lo = std::min(lo, tr.events.ts[i]);
          hi = std::max(hi, tr.events.End(i));
        }
        EXPECT_EQ(b.min_ts(), lo);
        EXPECT_EQ(b.max_ts(), hi);
        events[b.track()] += b.count();
      } else if (b.kind() == native::SAMPLES) {
        const size_t s0 = samples[b.track()];
        EXPECT_EQ(b.min_ts(), *std::min_element(tr.sample_ts.begin() + s0,
                                                tr.sample_ts.begin() + s0 + b.count()));
        samples[b.track()] += b.count();
      }
    }
    for (int i = 0; i < h.tracks_size(); ++i) {
      EXPECT_EQ(h.tracks(i).event_count(), events[i]);
      EXPECT_EQ(h.tracks(i).sample_count(), samples[i]);
    }
  }
  EXPECT_EQ(at, footer_at);
}

}  // namespace
}  // namespace moetrace
