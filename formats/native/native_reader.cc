#include "formats/native/native_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "formats/errors.h"
#include "formats/native/column_codec.h"
#include "formats/native/crc32.h"
#include "formats/native/native_format.h"
#include "formats/native/native_metadata.h"
#include "formats/proto/mtrace.pb.h"

namespace moetrace {
namespace {

using native::Block;
using native::Column;

// Random access to the bytes of a file or of an in-memory copy.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  // Reads exactly `n` bytes at `offset` (the caller checked the range).
  virtual void Read(uint64_t offset, size_t n, void* dst) const = 0;
};

class FileBytes : public ByteSource {
 public:
  explicit FileBytes(const std::string& path) : path_(path) {
    // O_NONBLOCK: opening a FIFO must not hang; it is then rejected below.
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd_ < 0) ThrowInputError(path, "", std::string("cannot open: ") + std::strerror(errno));
    struct stat st;
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      ThrowInputError(path, "", "not a regular file");
    }
    size_ = static_cast<uint64_t>(st.st_size);
  }
  ~FileBytes() override { ::close(fd_); }
  uint64_t size() const override { return size_; }
  void Read(uint64_t offset, size_t n, void* dst) const override {
    char* p = static_cast<char*>(dst);
    while (n > 0) {
      ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        ThrowInputError(path_, "byte " + std::to_string(offset),
                        got == 0 ? "unexpected end of file (was it truncated while reading?)"
                                 : std::string("read error: ") + std::strerror(errno));
      }
      p += got;
      n -= static_cast<size_t>(got);
      offset += static_cast<uint64_t>(got);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

class MemoryBytes : public ByteSource {
 public:
  explicit MemoryBytes(std::string data) : data_(std::move(data)) {}
  uint64_t size() const override { return data_.size(); }
  void Read(uint64_t offset, size_t n, void* dst) const override {
    std::memcpy(dst, data_.data() + offset, n);
  }

 private:
  std::string data_;
};

// A growable byte buffer that, unlike std::string, never zero-fills.
struct Buffer {
  std::unique_ptr<uint8_t[]> data;
  size_t capacity = 0;
  size_t size = 0;
  uint8_t* Resize(size_t n) {
    if (n > capacity) {
      capacity = std::max(n, capacity + capacity / 2);
      data.reset(new uint8_t[capacity]);
    }
    size = n;
    return data.get();
  }
};

struct DCtxDeleter {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};
using DCtxPtr = std::unique_ptr<ZSTD_DCtx, DCtxDeleter>;

constexpr const char* kEventFieldNames[] = {
    "?", "ts", "dur", "name", "category", "phase", "flags", "correlation",
    "step", "micro_batch", "layer", "comm", "flops", "bytes"};
constexpr const char* kCommFieldNames[] = {
    "?", "kind", "comm_class", "group", "sequence", "group_size", "peer", "bytes",
    "group_ranks length", "group_ranks", "send_splits length", "send_splits",
    "recv_splits length", "recv_splits"};
constexpr const char* kSampleFieldNames[] = {"?", "ts", "value"};
constexpr int kEventFields = 14, kCommFields = 14, kSampleFields = 3;

constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

// Appends the `n` values of column `c` to `out`, each within [lo, hi].
template <typename T>
const char* Decode(const Column& c, size_t n, int64_t lo, int64_t hi, std::vector<T>& out,
                   const int64_t* dur = nullptr) {
  return native::DecodeColumn(c, n, dur, lo, hi, out);
}

class NativeSource : public TraceSource {
 public:
  NativeSource(std::unique_ptr<ByteSource> bytes, std::string name, NativeReadOptions opts)
      : bytes_(std::move(bytes)), name_(std::move(name)), opts_(opts) {
    Open();
  }
  const Metadata& metadata() const override { return metadata_; }
  size_t rank_count() const override { return static_cast<size_t>(footer_.ranks_size()); }
  Rank ReadRank(size_t index) const override;

 private:
  // Per-call state of ReadRank (so that concurrent calls share nothing).
  struct Scratch {
    DCtxPtr dctx{ZSTD_createDCtx()};
    Buffer stored, raw;
    Block block;
    std::vector<int64_t> values;    // one column of a block
    std::vector<int64_t> elements;  // flattened comm vectors of a block
  };

  [[noreturn]] void Fail(uint64_t offset, std::string_view what) const {
    ThrowInputError(name_, "byte " + std::to_string(offset), what);
  }
  void Open();
  // Reads, checks and decompresses the record at `offset`, which must end
  // by `limit`, be of `kind` and (when nonzero) `expected_size` bytes.
  // The message bytes are left in s.raw.
  void ReadRecord(uint64_t offset, uint64_t limit, uint32_t expected_size, uint8_t kind,
                  const char* what, Scratch& s) const;
  void DecodeEvents(const Block& b, uint64_t off, size_t strings, Track& t, Scratch& s) const;
  void DecodeComms(const Block& b, uint64_t off, size_t strings, Track& t, size_t start,
                   uint64_t* budget, Scratch& s) const;
  void DecodeSamples(const Block& b, uint64_t off, Track& t, Scratch& s) const;
  // Column pointers of `b` by field id; rejects unknown and repeated ids.
  void IndexColumns(const Block& b, uint64_t off, int fields, const char* kind,
                    const Column** cols) const;
  void CheckColumn(const char* err, uint64_t off, const char* kind, const char* field) const {
    if (err != nullptr) {
      Fail(off, std::string(kind) + " block, column '" + field + "': " + err);
    }
  }

  std::unique_ptr<ByteSource> bytes_;
  std::string name_;
  NativeReadOptions opts_;
  Metadata metadata_;
  native::Footer footer_;  // the index; its metadata moved into metadata_
  uint64_t data_end_ = 0;  // = footer offset: rank records lie in [16, data_end_)
};

void NativeSource::Open() {
  const uint64_t size = bytes_->size();
  uint8_t header[native::kFileHeaderSize] = {};
  bytes_->Read(0, static_cast<size_t>(std::min<uint64_t>(size, sizeof header)), header);
  if (size < sizeof native::kMagic ||
      std::memcmp(header, native::kMagic, sizeof native::kMagic) != 0) {
    Fail(0, "expected the .mtrace magic \\x89MTRACE\\n: not an .mtrace file");
  }
  if (size < native::kFileHeaderSize) Fail(size, "file ends inside the 16-byte header");
  uint32_t version = native::GetU32(header + 8);
  if (version != native::kVersion) {
    Fail(8, "unsupported .mtrace version " + std::to_string(version) +
                " (this reader reads version " + std::to_string(native::kVersion) + ")");
  }
  if (native::GetU32(header + 12) != 0) Fail(12, "reserved header flags are not 0");
  if (size < native::kFileHeaderSize + native::kTrailerSize) {
    Fail(size, "file ends before the 24-byte trailer: it is truncated");
  }
  const uint64_t trailer_at = size - native::kTrailerSize;
  uint8_t trailer[native::kTrailerSize];
  bytes_->Read(trailer_at, sizeof trailer, trailer);
  if (std::memcmp(trailer + 16, native::kEndMagic, sizeof native::kEndMagic) != 0) {
    Fail(trailer_at + 16, "expected the end magic MTRACEND: the file is truncated or was "
                          "never finished");
  }
  if (native::GetU32(trailer + 12) != native::kVersion) {
    Fail(trailer_at + 12, "trailer version " + std::to_string(native::GetU32(trailer + 12)) +
                              " differs from the header's");
  }
  const uint64_t footer_offset = native::GetU64(trailer);
  const uint32_t footer_size = native::GetU32(trailer + 8);
  if (footer_offset < native::kFileHeaderSize || footer_offset > trailer_at ||
      trailer_at - footer_offset != footer_size) {
    Fail(trailer_at, "trailer points at a footer (byte " + std::to_string(footer_offset) +
                         ", " + std::to_string(footer_size) +
                         " bytes) that does not end at the trailer");
  }
  data_end_ = footer_offset;
  Scratch s;
  ReadRecord(footer_offset, trailer_at, footer_size, native::kRecordFooter, "footer", s);
  if (!footer_.ParseFromArray(s.raw.data.get(), static_cast<int>(s.raw.size))) {
    Fail(footer_offset, "footer record does not hold a valid Footer message");
  }
  metadata_ = native::MetadataFromProto(footer_.metadata());
  footer_.clear_metadata();
  // Validate the whole index now, so ReadRank can trust offsets and counts.
  auto in_data = [&](uint64_t offset, uint64_t rec_size) {
    return offset >= native::kFileHeaderSize && rec_size >= native::kRecordHeaderSize &&
           offset <= data_end_ && rec_size <= data_end_ - offset;
  };
  for (int r = 0; r < footer_.ranks_size(); ++r) {
    const native::RankIndex& ri = footer_.ranks(r);
    const std::string where = "footer: rank index " + std::to_string(r) + ": ";
    if (!in_data(ri.header_offset(), ri.header_size())) {
      Fail(footer_offset, where + "rank header record outside the data section");
    }
    for (int b = 0; b < ri.blocks_size(); ++b) {
      const native::BlockIndex& bi = ri.blocks(b);
      if (!in_data(bi.offset(), bi.size())) {
        Fail(footer_offset, where + "block " + std::to_string(b) + " outside the data section");
      }
      if (bi.count() == 0 || bi.count() > native::kMaxBlockRows) {
        Fail(footer_offset, where + "block " + std::to_string(b) + " has " +
                                std::to_string(bi.count()) + " rows (expected 1..65536)");
      }
      if (bi.kind() != native::EVENTS && bi.kind() != native::COMMS &&
          bi.kind() != native::SAMPLES) {
        Fail(footer_offset, where + "block " + std::to_string(b) + " of unknown kind");
      }
    }
  }
}

void NativeSource::ReadRecord(uint64_t offset, uint64_t limit, uint32_t expected_size,
                              uint8_t kind, const char* what, Scratch& s) const {
  if (offset < native::kFileHeaderSize || offset > limit ||
      limit - offset < native::kRecordHeaderSize) {
    Fail(offset, std::string(what) + " record header lies outside the data section");
  }
  uint8_t h[native::kRecordHeaderSize];
  bytes_->Read(offset, sizeof h, h);
  const uint32_t stored = native::GetU32(h);
  const uint32_t raw = native::GetU32(h + 4);
  const uint32_t crc = native::GetU32(h + 8);
  if (h[12] != kind) {
    Fail(offset + 12, std::string("expected a ") + what + " record (kind " +
                          std::to_string(kind) + "), found kind " + std::to_string(h[12]));
  }
  if (h[13] != 0 || h[14] != 0 || h[15] != 0) Fail(offset + 13, "reserved record bytes not 0");
  if (stored > limit - offset - native::kRecordHeaderSize ||
      (expected_size != 0 && native::kRecordHeaderSize + stored != expected_size)) {
    Fail(offset, std::string(what) + " record claims " + std::to_string(stored) +
                     " stored bytes, which do not fit the size the index gives it");
  }
  if (raw > opts_.max_record_bytes) {
    Fail(offset + 4, std::string(what) + " record claims " + std::to_string(raw) +
                         " decompressed bytes, more than the limit of " +
                         std::to_string(opts_.max_record_bytes));
  }
  uint8_t* src = s.stored.Resize(stored);
  bytes_->Read(offset + native::kRecordHeaderSize, stored, src);
  const uint32_t actual = native::Crc32(src, stored);
  if (actual != crc) {
    Fail(offset, std::string("checksum mismatch in the ") + what + " record (" +
                     std::to_string(stored) + " bytes from byte " +
                     std::to_string(offset + native::kRecordHeaderSize) + "): the file is corrupt");
  }
  if (s.dctx == nullptr) throw std::bad_alloc();
  uint8_t* dst = s.raw.Resize(std::max<size_t>(raw, 1));
  s.raw.size = raw;
  size_t n = ZSTD_decompressDCtx(s.dctx.get(), dst, raw, src, stored);
  if (ZSTD_isError(n) || n != raw) {
    Fail(offset + native::kRecordHeaderSize,
         std::string("cannot decompress the ") + what + " record: " +
             (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size differs from its header"));
  }
}

void NativeSource::IndexColumns(const Block& b, uint64_t off, int fields, const char* kind,
                                const Column** cols) const {
  std::fill(cols, cols + fields, nullptr);
  for (const Column& c : b.columns()) {
    if (c.field() == 0 || c.field() >= static_cast<uint32_t>(fields)) {
      Fail(off, std::string(kind) + " block: unknown column " + std::to_string(c.field()));
    }
    if (cols[c.field()] != nullptr) {
      Fail(off, std::string(kind) + " block: column " + std::to_string(c.field()) + " repeated");
    }
    cols[c.field()] = &c;
  }
}

void NativeSource::DecodeEvents(const Block& b, uint64_t off, size_t strings, Track& t,
                                Scratch& s) const {
  const Column* cols[kEventFields];
  IndexColumns(b, off, kEventFields, "events", cols);
  const size_t n = b.count();
  EventTable& e = t.events;
  const size_t start = e.ts.size();
  // Appends the column's rows, or n default values when it is absent.
  auto column = [&](int f, auto& out, auto dflt, int64_t lo, int64_t hi,
                    const int64_t* dur = nullptr) {
    if (cols[f] == nullptr) {
      native::AppendFill(out, n, dflt);
      return;
    }
    CheckColumn(Decode(*cols[f], n, lo, hi, out, dur), off, "events", kEventFieldNames[f]);
  };
  const Event d;
  column(native::EV_DUR, e.dur, d.dur, kI64Min, kI64Max);
  column(native::EV_TS, e.ts, d.ts, kI64Min, kI64Max, e.dur.data() + start);
  column(native::EV_NAME, e.name, d.name, 0, static_cast<int64_t>(strings) - 1);
  column(native::EV_CATEGORY, e.category, d.category, 0, kCategoryCount - 1);
  column(native::EV_PHASE, e.phase, d.phase, 0, static_cast<int64_t>(Phase::kOptimizer));
  column(native::EV_FLAGS, e.flags, d.flags, 0, 0xffff);
  column(native::EV_CORRELATION, e.correlation, d.correlation, kI64Min, kI64Max);
  column(native::EV_STEP, e.step, d.step, kI32Min, kI32Max);
  column(native::EV_MICRO_BATCH, e.micro_batch, d.micro_batch, kI32Min, kI32Max);
  column(native::EV_LAYER, e.layer, d.layer, kI32Min, kI32Max);
  column(native::EV_COMM, e.comm, d.comm, -1, static_cast<int64_t>(t.comms.size()) - 1);
  column(native::EV_FLOPS, e.flops, d.flops, kI64Min, kI64Max);
  column(native::EV_BYTES, e.bytes, d.bytes, kI64Min, kI64Max);
}

void NativeSource::DecodeComms(const Block& b, uint64_t off, size_t strings, Track& t,
                               size_t start, uint64_t* budget, Scratch& s) const {
  const Column* cols[kCommFields];
  IndexColumns(b, off, kCommFields, "comms", cols);
  const size_t n = b.count();
  CommRecord* recs = t.comms.data() + start;
  // Decodes column f within [lo, hi]; returns its n values, or nullptr
  // when the column is absent (the records keep their defaults).
  auto column = [&](int f, int64_t lo, int64_t hi) -> const int64_t* {
    if (cols[f] == nullptr) return nullptr;
    s.values.clear();
    CheckColumn(Decode(*cols[f], n, lo, hi, s.values), off, "comms", kCommFieldNames[f]);
    return s.values.data();
  };
  if (const int64_t* v = column(native::CM_KIND, 0, static_cast<int64_t>(CollectiveKind::kOther))) {
    for (size_t i = 0; i < n; ++i) recs[i].kind = static_cast<CollectiveKind>(v[i]);
  }
  if (const int64_t* v = column(native::CM_CLASS, 0, kCommClassCount - 1)) {
    for (size_t i = 0; i < n; ++i) recs[i].comm_class = static_cast<CommClass>(v[i]);
  }
  if (const int64_t* v = column(native::CM_GROUP, 0, static_cast<int64_t>(strings) - 1)) {
    for (size_t i = 0; i < n; ++i) recs[i].group = static_cast<StringId>(v[i]);
  }
  if (const int64_t* v = column(native::CM_SEQUENCE, kI64Min, kI64Max)) {
    for (size_t i = 0; i < n; ++i) recs[i].sequence = v[i];
  }
  if (const int64_t* v = column(native::CM_GROUP_SIZE, kI32Min, kI32Max)) {
    for (size_t i = 0; i < n; ++i) recs[i].group_size = static_cast<int32_t>(v[i]);
  }
  if (const int64_t* v = column(native::CM_PEER, kI32Min, kI32Max)) {
    for (size_t i = 0; i < n; ++i) recs[i].peer = static_cast<int32_t>(v[i]);
  }
  if (const int64_t* v = column(native::CM_BYTES, kI64Min, kI64Max)) {
    for (size_t i = 0; i < n; ++i) recs[i].bytes = static_cast<uint64_t>(v[i]);
  }
  // A vector field: a length per record, then all elements back to back.
  auto vec = [&](int len_field, int values_field, int64_t lo, int64_t hi, auto member) {
    uint64_t total = 0;
    const int64_t* v =
        column(len_field, 0, static_cast<int64_t>(native::kMaxBlockVectorElements));
    if (v != nullptr) {
      for (size_t i = 0; i < n; ++i) total += static_cast<uint64_t>(v[i]);
    }
    if (total > native::kMaxBlockVectorElements || total > *budget) {
      Fail(off, std::string("comms block: ") + std::to_string(total) + " " +
                    kCommFieldNames[values_field] +
                    " elements exceed the limit of the block or of the rank");
    }
    *budget -= total;
    const Column* values = cols[values_field];
    if (total == 0) {
      if (values != nullptr) {  // must then describe no values at all
        std::vector<int64_t> none;
        CheckColumn(Decode(*values, 0, kI64Min, kI64Max, none), off, "comms",
                    kCommFieldNames[values_field]);
      }
      return;
    }
    if (values == nullptr) {
      Fail(off, std::string("comms block: column '") + kCommFieldNames[values_field] +
                    "' missing although its lengths are not all 0");
    }
    std::vector<int64_t>& elems = s.elements;
    elems.clear();
    elems.reserve(total);
    CheckColumn(Decode(*values, total, lo, hi, elems), off, "comms",
                kCommFieldNames[values_field]);
    size_t pos = 0;
    for (size_t i = 0; i < n; ++i) {
      auto& out = recs[i].*member;
      using T = typename std::remove_reference_t<decltype(out)>::value_type;
      // assign: one allocation and one pass (resize would zero-fill first).
      const size_t len = static_cast<size_t>(v[i]);
      const int64_t* from = elems.data() + pos;
      if constexpr (sizeof(T) == sizeof(int64_t)) {
        const T* f = reinterpret_cast<const T*>(from);  // same bits (uint64 <- int64)
        out.assign(f, f + len);
      } else {
        out.assign(from, from + len);  // range-checked int32 values
      }
      pos += len;
    }
  };
  vec(native::CM_GROUP_RANKS_LEN, native::CM_GROUP_RANKS, kI32Min, kI32Max,
      &CommRecord::group_ranks);
  vec(native::CM_SEND_SPLITS_LEN, native::CM_SEND_SPLITS, kI64Min, kI64Max,
      &CommRecord::send_splits);
  vec(native::CM_RECV_SPLITS_LEN, native::CM_RECV_SPLITS, kI64Min, kI64Max,
      &CommRecord::recv_splits);
}

void NativeSource::DecodeSamples(const Block& b, uint64_t off, Track& t, Scratch& s) const {
  const Column* cols[kSampleFields];
  IndexColumns(b, off, kSampleFields, "samples", cols);
  const size_t n = b.count();
  const size_t start = t.sample_ts.size();
  if (const Column* c = cols[native::SM_TS]) {
    CheckColumn(Decode(*c, n, kI64Min, kI64Max, t.sample_ts), off, "samples",
                kSampleFieldNames[native::SM_TS]);
  } else {
    t.sample_ts.resize(start + n);
  }
  t.sample_value.resize(start + n);
  if (const Column* c = cols[native::SM_VALUE]) {
    s.values.clear();
    CheckColumn(Decode(*c, n, kI64Min, kI64Max, s.values), off, "samples",
                kSampleFieldNames[native::SM_VALUE]);
    const int64_t* v = s.values.data();
    double* out = t.sample_value.data() + start;
    if (b.values_are_integers()) {
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<double>(v[i]);
    } else {
      for (size_t i = 0; i < n; ++i) out[i] = native::DoubleFromBits(static_cast<uint64_t>(v[i]));
    }
  }
}

Rank NativeSource::ReadRank(size_t index) const {
  if (index >= rank_count()) throw std::out_of_range("NativeSource::ReadRank: no such rank");
  const native::RankIndex& ri = footer_.ranks(static_cast<int>(index));
  // One scratch per thread, kept between calls: a fresh zstd context and
  // fresh multi-MiB buffers per rank cost page faults on every call.
  // (ReadRank never re-enters itself on a thread.)
  thread_local Scratch s;
  const uint64_t hoff = ri.header_offset();
  ReadRecord(hoff, data_end_, ri.header_size(), native::kRecordRankHeader, "rank header", s);
  native::RankHeader h;
  if (!h.ParseFromArray(s.raw.data.get(), static_cast<int>(s.raw.size))) {
    Fail(hoff, "rank header record does not hold a valid RankHeader message");
  }
  if (h.rank() != ri.rank()) {
    Fail(hoff, "rank header says rank " + std::to_string(h.rank()) + ", the footer rank " +
                   std::to_string(ri.rank()));
  }
  Rank rank;
  rank.rank = h.rank();
  rank.device_id = h.device_id();
  rank.pid = h.pid();
  rank.host = h.host();
  for (int i = 0; i < h.strings_size(); ++i) {
    if (rank.strings.Intern(h.strings(i)) != static_cast<StringId>(i + 1)) {
      Fail(hoff, "rank header: string " + std::to_string(i + 1) + " repeats an earlier one");
    }
  }
  const size_t strings = rank.strings.size();

  // Rows per track and kind according to the footer; must match the
  // descriptors, and all together fit the rank budget.
  const size_t ntracks = static_cast<size_t>(h.tracks_size());
  // A Track costs ~400 bytes empty; its descriptor can be 2 bytes of file.
  if (ntracks > native::kMaxTracksPerRank) {
    Fail(hoff, "rank header lists " + std::to_string(ntracks) + " tracks, more than " +
                   std::to_string(native::kMaxTracksPerRank));
  }
  std::vector<uint64_t> rows(ntracks * 3, 0);
  uint64_t budget = opts_.max_rank_rows;
  for (const native::BlockIndex& bi : ri.blocks()) {
    if (bi.track() >= ntracks) {
      Fail(bi.offset(), "footer lists a block of track " + std::to_string(bi.track()) +
                            " but the rank has " + std::to_string(ntracks) + " tracks");
    }
    rows[bi.track() * 3 + bi.kind()] += bi.count();
    if (bi.count() > budget) {
      Fail(hoff, "rank holds more rows than the limit of " +
                     std::to_string(opts_.max_rank_rows));
    }
    budget -= bi.count();
  }
  rank.tracks.resize(ntracks);
  for (size_t i = 0; i < ntracks; ++i) {
    const native::TrackDescriptor& d = h.tracks(static_cast<int>(i));
    Track& t = rank.tracks[i];
    if (d.kind() > static_cast<uint32_t>(TrackKind::kCounter) ||
        d.role() > static_cast<uint32_t>(TrackRole::kDeviceOther) ||
        d.counter() >= static_cast<uint32_t>(kCounterKindCount) || d.name() >= strings) {
      Fail(hoff, "rank header: track " + std::to_string(i) +
                     " has a kind, role, counter kind or name id out of range");
    }
    if (d.event_count() != rows[i * 3 + native::EVENTS] ||
        d.comm_count() != rows[i * 3 + native::COMMS] ||
        d.sample_count() != rows[i * 3 + native::SAMPLES]) {
      Fail(hoff, "rank header: track " + std::to_string(i) +
                     " row counts differ from the footer's blocks");
    }
    t.kind = static_cast<TrackKind>(d.kind());
    t.role = static_cast<TrackRole>(d.role());
    t.counter = static_cast<CounterKind>(d.counter());
    t.name = d.name();
    t.native_id = d.native_id();
    t.events.Reserve(d.event_count());  // grown block by block
    t.comms.resize(d.comm_count());
    t.sample_ts.reserve(d.sample_count());
    t.sample_value.reserve(d.sample_count());
  }
  rank.routing.reserve(static_cast<size_t>(h.routing_size()));
  for (const native::RoutingRecord& p : h.routing()) {
    RoutingRecord& r = rank.routing.emplace_back();
    r.ts = p.ts();
    r.step = p.step();
    r.micro_batch = p.micro_batch();
    r.layer = p.layer();
    r.ep_size = p.ep_size();
    r.tokens_per_expert.assign(p.tokens_per_expert().begin(), p.tokens_per_expert().end());
    r.expert_to_ep_rank.assign(p.expert_to_ep_rank().begin(), p.expert_to_ep_rank().end());
  }
  rank.import_stats.reserve(static_cast<size_t>(h.import_stats_size()));
  for (const native::ImportStat& st : h.import_stats()) {
    rank.import_stats.emplace_back(st.key(), st.value());
  }

  s.values.reserve(native::kMaxBlockRows);
  std::vector<uint64_t> cursor(ntracks * 3, 0);
  for (const native::BlockIndex& bi : ri.blocks()) {
    const uint64_t off = bi.offset();
    ReadRecord(off, data_end_, bi.size(), native::kRecordBlock, "block", s);
    Block& b = s.block;
    if (!b.ParseFromArray(s.raw.data.get(), static_cast<int>(s.raw.size))) {
      Fail(off, "block record does not hold a valid Block message");
    }
    if (b.kind() != bi.kind() || b.count() != bi.count()) {
      Fail(off, "block kind or row count differs from the footer's index");
    }
    Track& t = rank.tracks[bi.track()];
    uint64_t& at = cursor[bi.track() * 3 + bi.kind()];
    const size_t start = static_cast<size_t>(at);
    at += bi.count();
    switch (bi.kind()) {
      case native::EVENTS: DecodeEvents(b, off, strings, t, s); break;
      case native::COMMS: DecodeComms(b, off, strings, t, start, &budget, s); break;
      default: DecodeSamples(b, off, t, s); break;
    }
  }
  return rank;
}

}  // namespace

std::unique_ptr<TraceSource> OpenNative(const std::string& path, NativeReadOptions opts) {
  return std::make_unique<NativeSource>(std::make_unique<FileBytes>(path), path, opts);
}

std::unique_ptr<TraceSource> OpenNativeBuffer(std::string data, const std::string& name,
                                              NativeReadOptions opts) {
  return std::make_unique<NativeSource>(std::make_unique<MemoryBytes>(std::move(data)), name,
                                        opts);
}

bool LooksLikeNative(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  char magic[sizeof native::kMagic];
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            ::pread(fd, magic, sizeof magic, 0) == static_cast<ssize_t>(sizeof magic) &&
            std::memcmp(magic, native::kMagic, sizeof magic) == 0;
  ::close(fd);
  return ok;
}

}  // namespace moetrace
