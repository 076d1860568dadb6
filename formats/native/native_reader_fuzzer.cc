// libFuzzer target of the .mtrace reader. The first input byte picks how
// the rest is used, so that mutations reach every layer despite the
// checksums and the compression:
//   0: the rest is a whole file;
//   1: the rest patches a valid file (pairs of u16 offset, xor byte), plus
//      a truncation;
//   2: the rest is the protobuf payload of one block (kind and row count
//      from its first bytes), wrapped in a file with a valid rank header,
//      checksum and footer: this reaches the column decoders.
// Any InputError is fine; a crash, hang, leak or sanitizer report is not.
#include <zlib.h>
#include <unistd.h>
#include <zstd.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "formats/errors.h"
#include "formats/native/native_format.h"
#include "formats/native/native_reader.h"
#include "formats/native/native_writer.h"
#include "formats/proto/mtrace.pb.h"
#include "formats/sample_trace.h"
#include "formats/trace_io.h"

namespace {

using namespace moetrace;

void ReadEverything(const std::string& bytes) {
  NativeReadOptions opts;
  opts.max_record_bytes = 16 << 20;
  opts.max_rank_rows = 1 << 20;
  opts.max_rank_bytes = 256 << 20;
  try {
    auto src = OpenNativeBuffer(bytes, "fuzz.mtrace", opts);
    for (size_t i = 0; i < src->rank_count(); ++i) src->ReadRank(i);
  } catch (const InputError&) {
  }
}

std::string Record(uint8_t kind, const std::string& payload) {
  std::string z(ZSTD_compressBound(payload.size()), '\0');
  size_t n = ZSTD_compress(z.data(), z.size(), payload.data(), payload.size(), 1);
  z.resize(n);
  uint8_t h[native::kRecordHeaderSize] = {};
  native::PutU32(h, static_cast<uint32_t>(n));
  native::PutU32(h + 4, static_cast<uint32_t>(payload.size()));
  native::PutU32(h + 8, static_cast<uint32_t>(
                            crc32(0, reinterpret_cast<const Bytef*>(z.data()), z.size())));
  h[12] = kind;
  return std::string(reinterpret_cast<char*>(h), sizeof h) + z;
}

std::string WrapBlock(const uint8_t* data, size_t size) {
  if (size < 3) return "";
  const auto kind = static_cast<native::BlockKind>(data[0] % 3);
  const uint32_t count = 1 + (data[1] | (data[2] & 0x0f) << 8);  // 1..4096
  std::string file(native::kMagic, sizeof native::kMagic);
  file.append("\x01\0\0\0\0\0\0\0", 8);
  native::RankHeader h;
  h.add_strings("a");
  h.add_strings("group");
  native::TrackDescriptor* d = h.add_tracks();
  d->set_kind(kind == native::SAMPLES ? 2 : 1);
  d->set_event_count(kind == native::EVENTS ? count : 0);
  d->set_comm_count(kind == native::COMMS ? count : 0);
  d->set_sample_count(kind == native::SAMPLES ? count : 0);
  native::Footer footer;
  native::RankIndex* ri = footer.add_ranks();
  ri->set_header_offset(file.size());
  std::string rec = Record(native::kRecordRankHeader, h.SerializeAsString());
  ri->set_header_size(static_cast<uint32_t>(rec.size()));
  file += rec;
  native::BlockIndex* bi = ri->add_blocks();
  bi->set_offset(file.size());
  rec = Record(native::kRecordBlock, std::string(reinterpret_cast<const char*>(data + 3), size - 3));
  bi->set_size(static_cast<uint32_t>(rec.size()));
  bi->set_kind(kind);
  bi->set_count(count);
  file += rec;
  const uint64_t footer_at = file.size();
  rec = Record(native::kRecordFooter, footer.SerializeAsString());
  file += rec;
  uint8_t t[native::kTrailerSize];
  native::PutU64(t, footer_at);
  native::PutU32(t + 8, static_cast<uint32_t>(rec.size()));
  native::PutU32(t + 12, native::kVersion);
  std::memcpy(t + 16, native::kEndMagic, 8);
  file.append(reinterpret_cast<char*>(t), sizeof t);
  return file;
}

const std::string& ValidFile() {
  static const std::string* file = [] {
    Trace t = MakeSampleTrace(2, 6, 3);
    std::string path = "/tmp/native_reader_fuzzer_seed.mtrace." + std::to_string(getpid());
    {
      auto sink = CreateNativeSink(path, {1, 5});
      for (const Rank& r : t.ranks) sink->AddRank(r);
      sink->Finish(t.metadata);
    }
    FILE* f = std::fopen(path.c_str(), "rb");
    auto* s = new std::string;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s->append(buf, n);
    std::fclose(f);
    std::remove(path.c_str());
    return s;
  }();
  return *file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0] % 3;
  ++data;
  --size;
  if (mode == 0) {
    ReadEverything(std::string(reinterpret_cast<const char*>(data), size));
  } else if (mode == 1) {
    std::string file = ValidFile();
    size_t i = 0;
    if (size >= 2) {  // first u16: how many bytes to cut from the end
      file.resize(file.size() - std::min<size_t>(file.size(), data[0] | data[1] << 8) % 256);
      i = 2;
    }
    for (; i + 3 <= size && !file.empty(); i += 3) {
      file[(data[i] | data[i + 1] << 8) % file.size()] ^= static_cast<char>(data[i + 2]);
    }
    ReadEverything(file);
  } else {
    std::string file = WrapBlock(data, size);
    if (!file.empty()) ReadEverything(file);
  }
  return 0;
}
