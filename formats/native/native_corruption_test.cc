#include <unistd.h>

#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "formats/errors.h"
#include "formats/native/native_format.h"
#include "formats/native/native_test_util.h"
#include "formats/sample_trace.h"

namespace moetrace {
namespace {

using testing_native::Decode;
using testing_native::Encode;
using testing_native::TempPath;

// Opens `bytes` and reads every rank; returns the InputError message, or ""
// when everything was read.
std::string ReadError(const std::string& bytes) {
  try {
    Decode(bytes);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// "mem.mtrace: byte N: ..." with N inside the file.
void ExpectPositioned(const std::string& message, size_t file_size) {
  std::smatch m;
  ASSERT_TRUE(std::regex_search(message, m, std::regex("^mem\\.mtrace: byte ([0-9]+): ")))
      << message;
  EXPECT_LE(std::stoull(m[1]), file_size) << message;
}

std::string SampleBytes() { return Encode(MakeSampleTrace(3, 40, 2), {1, 50}); }

TEST(NativeCorruption, EveryTruncationIsReported) {
  const std::string full = SampleBytes();
  ASSERT_GT(full.size(), 1000u);
  for (size_t k = 0; k < 64; ++k) {
    const size_t len = full.size() * k / 64;
    std::string msg = ReadError(full.substr(0, len));
    ASSERT_FALSE(msg.empty()) << "truncation at " << len << " was not detected";
    ExpectPositioned(msg, full.size());
  }
  // And through a real file.
  std::string path = TempPath("trunc.mtrace");
  testing_native::WriteTrace(MakeSampleTrace(1, 5), path);
  std::string bytes = testing_native::ReadFileBytes(path);
  { std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() - 1); }
  try {
    OpenNative(path);
    FAIL() << "truncated file opened";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": byte " + std::to_string(bytes.size() - 1 - 8)),
              std::string::npos)
        << e.what();
  }
  std::remove(path.c_str());
}

// A file cut short after it was opened (the index read, the ranks not yet):
// pread names the file and the byte where the read met the end; the ranks
// before the cut still read. (A reader that mapped the file would get SIGBUS
// here instead: bench/README.md "anmmap" for why the reader keeps pread.)
TEST(NativeCorruption, FileTruncatedAfterOpenIsReportedNotACrash) {
  std::string path = TempPath("shrunk.mtrace");
  testing_native::WriteTrace(MakeSampleTrace(4, 40, 2), path);
  const std::string bytes = testing_native::ReadFileBytes(path);
  auto src = OpenNative(path);
  ASSERT_EQ(src->rank_count(), 4u);
  const size_t cut = bytes.size() / 2;
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(cut)), 0);
  // The writer puts the ranks one after the other from byte 16: those that
  // end by the cut read whole.
  int whole = 0;
  for (uint64_t i = 0, end = 16; i < src->rank_count(); ++i) {
    end += src->RankBytes(i);
    whole += end <= cut;
  }
  ASSERT_GT(whole, 0);
  ASSERT_LT(whole, 4);
  int read = 0, failed = 0;
  for (size_t i = 0; i < src->rank_count(); ++i) {
    try {
      Rank r = src->ReadRank(i);
      EXPECT_EQ(r.rank, src->RankId(i));
      ++read;
    } catch (const InputError& e) {
      ++failed;
      std::smatch m;
      const std::string msg = e.what();
      ASSERT_TRUE(std::regex_search(
          msg, m, std::regex("^" + std::regex_replace(path, std::regex("[.^$|()\\[\\]{}*+?\\\\]"), "\\$&") +
                             ": byte ([0-9]+): unexpected end of file \\(was it truncated while "
                             "reading\\?\\)$")))
          << msg;
      // Where the read met the end: at the cut, or at a record after it.
      EXPECT_GE(std::stoull(m[1]), cut) << msg;
      EXPECT_LT(std::stoull(m[1]), bytes.size()) << msg;
    }
  }
  EXPECT_EQ(read, whole);
  EXPECT_EQ(failed, 4 - whole);
  std::remove(path.c_str());
}

TEST(NativeCorruption, FlippedByteInsideABlockFailsItsChecksum) {
  std::string bytes = SampleBytes();
  // The first record (a rank header) starts right after the file header; the
  // record after it is the rank's first block.
  const uint32_t header_stored = native::GetU32(reinterpret_cast<const uint8_t*>(bytes.data()) +
                                                native::kFileHeaderSize);
  const size_t block = native::kFileHeaderSize + native::kRecordHeaderSize + header_stored;
  ASSERT_EQ(bytes[block + 12], native::kRecordBlock);
  const size_t at = block + native::kRecordHeaderSize + 3;
  bytes[at] ^= 0x20;
  std::string msg = ReadError(bytes);
  EXPECT_EQ(msg.rfind("mem.mtrace: byte " + std::to_string(block) +
                          ": checksum mismatch in the block record",
                      0),
            0u)
      << msg;
  // The metadata and index are still readable: only that rank fails.
  auto src = OpenNativeBuffer(bytes, "mem.mtrace");
  EXPECT_THROW(src->ReadRank(0), InputError);
  EXPECT_NO_THROW(src->ReadRank(1));
}

// No byte of the file goes unchecked: flipping any one is reported.
TEST(NativeCorruption, EverySingleByteFlipIsDetected) {
  const std::string full = Encode(MakeSampleTrace(2, 4, 9));
  for (size_t i = 0; i < full.size(); ++i) {
    std::string bytes = full;
    bytes[i] ^= 0x01;
    std::string msg = ReadError(bytes);
    ASSERT_FALSE(msg.empty()) << "flip at byte " << i << " of " << full.size() << " undetected";
    ExpectPositioned(msg, full.size());
  }
}

TEST(NativeCorruption, WrongMagicAndVersion) {
  std::string bytes = SampleBytes();
  std::string bad = bytes;
  bad[1] = 'X';
  EXPECT_EQ(ReadError(bad).rfind("mem.mtrace: byte 0: expected the .mtrace magic", 0), 0u);
  bad = bytes;
  bad[8] = 2;
  EXPECT_EQ(ReadError(bad),
            "mem.mtrace: byte 8: unsupported .mtrace version 2 (this reader reads version 1)");
  EXPECT_EQ(ReadError("").rfind("mem.mtrace: byte 0: expected the .mtrace magic", 0), 0u);
  EXPECT_EQ(ReadError(std::string("{\"traceEvents\":[]}")).rfind("mem.mtrace: byte 0:", 0), 0u);
}

TEST(NativeCorruption, LimitsBoundWhatAFileCanAllocate) {
  std::string bytes = Encode(MakeSampleTrace(1, 200));
  NativeReadOptions small;
  small.max_rank_rows = 100;
  try {
    Decode(bytes, small);
    FAIL() << "rank above the row limit was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("more rows than the limit of 100"), std::string::npos)
        << e.what();
  }
  NativeReadOptions tiny_records;
  tiny_records.max_record_bytes = 64;
  EXPECT_THROW(Decode(bytes, tiny_records), InputError);
}

// A few hundred bytes of constant columns can describe millions of rows:
// the reader refuses a rank whose decoded size exceeds the memory limit
// before allocating it.
TEST(NativeCorruption, MemoryLimitRefusesHugeRanksOfConstantColumns) {
  Trace t;
  Rank& r = t.ranks.emplace_back();
  Track& tr = r.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "t", 1);
  tr.events.Resize(1 << 20);  // every column at its default: nothing stored
  const std::string bytes = Encode(t);
  ASSERT_LT(bytes.size(), 4096u);
  NativeReadOptions limit;
  limit.max_rank_bytes = 64 << 20;  // the rank needs 1 Mi x 64 bytes and a bit
  try {
    Decode(bytes, limit);
    FAIL() << "a rank above the memory limit was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bytes of memory once decoded, more than the limit of "
                                         "67108864"),
              std::string::npos)
        << e.what();
  }
  limit.max_rank_bytes = 128 << 20;
  EXPECT_EQ(Decode(bytes, limit).ranks[0].tracks[0].events.size(), size_t{1} << 20);
}

}  // namespace
}  // namespace moetrace
