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
#include "formats/native/routing_parse.h"
#include "formats/routing_copies.h"
#include "formats/proto/mtrace.pb.h"

namespace moetrace {
namespace {

// Blocks are parsed in place (block_view.h); the accessors match protobuf's.
using Block = native::BlockView;
using Column = native::ColumnView;

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
    "step", "micro_batch", "layer", "comm", "flops", "bytes", "shape"};
constexpr const char* kCommFieldNames[] = {
    "?", "kind", "comm_class", "group", "sequence", "group_size", "peer", "bytes",
    "group_ranks length", "group_ranks", "send_splits length", "send_splits",
    "recv_splits length", "recv_splits"};
constexpr const char* kSampleFieldNames[] = {"?", "ts", "value"};
constexpr int kEventFields = 15, kCommFields = 14, kSampleFields = 3;

// Memory of one event in an EventTable (one element of each column).
// A decoded rank up to this size is written with plain stores, not
// non-temporal ones (column_codec.h, StreamStores): a quarter of the L3 of
// the machines measured (32 MiB), so that it is still in cache when read.
constexpr uint64_t kCacheRankBytes = 8 << 20;
constexpr uint64_t kEventBytes =
    2 * sizeof(TimeNs) + sizeof(StringId) + sizeof(Category) + sizeof(Phase) + sizeof(uint16_t) +
    sizeof(int64_t) + 4 * sizeof(int32_t) + 2 * sizeof(uint64_t);
constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

// Set by SkipColumnsAnalyzeIgnores on this thread.
thread_local bool skip_unread_columns = false;

// Decodes all `n` rows of column `c` into out[0, n), each within [lo, hi].
template <typename T>
const char* Decode(const Column& c, size_t n, int64_t lo, int64_t hi, T* out,
                   const int64_t* dur = nullptr) {
  native::ColumnReader r;
  if (const char* err = r.Init(c, n, lo, hi)) return err;
  const char* err;
  if constexpr (sizeof(T) == 8) {
    err = r.Next(n, native::Out(out), dur);
  } else {
    err = r.Next(n, native::Out(out));
  }
  return err != nullptr ? err : r.Finish();
}

class NativeSource : public TraceSource {
 public:
  NativeSource(std::unique_ptr<ByteSource> bytes, std::string name, NativeReadOptions opts)
      : bytes_(std::move(bytes)), name_(std::move(name)), opts_(opts) {
    max_rank_bytes_ = opts_.max_rank_bytes != 0
                          ? opts_.max_rank_bytes
                          : std::max<uint64_t>(uint64_t{2} << 30, bytes_->size() * 1024);
    Open();
  }
  const Metadata& metadata() const override { return metadata_; }
  size_t rank_count() const override { return static_cast<size_t>(footer_.ranks_size()); }
  int32_t RankId(size_t index) const override {
    return index < rank_count() ? footer_.ranks(int(index)).rank() : kNone;
  }
  Rank ReadRank(size_t index) const override {
    Rank rank;
    ReadRankInto(index, &rank);
    return rank;
  }
  void ReadRankInto(size_t index, Rank* out) const override;
  // From the footer index: the rank's header and blocks as stored.
  uint64_t RankBytes(size_t index) const override {
    const native::RankIndex& ri = footer_.ranks(static_cast<int>(index));
    uint64_t n = ri.header_size();
    for (const native::BlockIndex& b : ri.blocks()) n += b.size();
    return n;
  }
  std::string RankPath(size_t) const override { return name_; }

 private:
  // Per-call state of ReadRank (so that concurrent calls share nothing).
  struct Scratch {
    DCtxPtr dctx{ZSTD_createDCtx()};
    Buffer stored, raw;
    // The rank's records read at once (ReadRankInto), [span_lo, span_hi) of
    // the file; span_hi 0 when none is held.
    Buffer span;
    uint64_t span_lo = 0, span_hi = 0;
    Block block;
    native::RankHeader header;
    std::vector<uint8_t> rest;  // the header less its routing records
    std::vector<std::string_view> string_list;  // the header's strings
    std::vector<int64_t> values;    // one column of a block
    std::vector<uint64_t> rows, cursor;  // per track and block kind
    std::vector<uint8_t> in_place;       // per track: see DecodeEvents
    // Per track: elements of comm_ranks and comm_splits decoded so far.
    std::vector<uint64_t> elements;
    uint64_t memory_left = 0;  // of the rank's memory budget
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
  // Reads the bytes of rank `ri`'s header and blocks into s.span with one
  // system call when they lie together (as the writer puts them) and within
  // kMaxSpanBytes; ReadRecord then takes its records from there. Else
  // leaves no span, and each record is read on its own.
  void ReadSpan(const native::RankIndex& ri, Scratch& s) const;
  // Decode a block into rows [start, start + count) of the track (sized
  // by the caller; every row of the range is written).
  // `in_place`: the track's columns already hold their final sizes and
  // rows [start, start + count) are overwritten; otherwise the rows are
  // appended (into reserved capacity: a fresh Rank's memory is written once).
  // `total`: the track's events (the shape column is sized for all of them).
  void DecodeEvents(const Block& b, uint64_t off, size_t strings, Track& t, size_t start,
                    size_t total, uint64_t* memory_left, bool in_place) const;
  // `used`: elements of the track's comm_ranks and comm_splits so far.
  void DecodeComms(const Block& b, uint64_t off, size_t strings, Track& t, size_t start,
                   uint64_t* budget, uint64_t used[2], Scratch& s) const;
  void DecodeSamples(const Block& b, uint64_t off, Track& t, size_t start, Scratch& s) const;
  // Column pointers of `b` by field id; rejects unknown and repeated ids.
  void IndexColumns(const Block& b, uint64_t off, int fields, const char* kind,
                    const Column** cols) const;
  template <typename T>
  void AppendColumn(const Column* c, size_t n, int64_t lo, int64_t hi, std::vector<T>& out,
                    T dflt, const int64_t* dur, uint64_t off, const char* field) const;
  void CheckColumn(const char* err, uint64_t off, const char* kind, const char* field) const {
    if (err != nullptr) {
      Fail(off, std::string(kind) + " block, column '" + field + "': " + err);
    }
  }

  std::unique_ptr<ByteSource> bytes_;
  uint64_t max_rank_bytes_ = 0;
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
  // When the index gives the record's size, header and bytes come in one
  // read (one system call per record, not two); else the header first.
  const bool whole = expected_size >= native::kRecordHeaderSize &&
                     expected_size <= limit - offset && expected_size <= opts_.max_record_bytes;
  uint8_t header[native::kRecordHeaderSize];
  const uint8_t* h = header;
  if (whole && offset >= s.span_lo && s.span_hi >= offset &&
      s.span_hi - offset >= expected_size) {
    h = s.span.data.get() + (offset - s.span_lo);  // read with the rank's other records
  } else if (whole) {
    h = s.stored.Resize(expected_size);
    bytes_->Read(offset, expected_size, s.stored.data.get());
  } else {
    bytes_->Read(offset, sizeof header, header);
  }
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
  const uint8_t* src;
  if (whole) {
    src = h + native::kRecordHeaderSize;  // stored == expected_size - header, checked above
  } else {
    uint8_t* to = s.stored.Resize(stored);
    bytes_->Read(offset + native::kRecordHeaderSize, stored, to);
    src = to;
  }
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

template <typename T>
void NativeSource::AppendColumn(const Column* c, size_t n, int64_t lo, int64_t hi,
                                std::vector<T>& out, T dflt, const int64_t* dur, uint64_t off,
                                const char* field) const {
  if (c == nullptr) {
    out.resize(out.size() + n, dflt);  // one fill of the reserved memory
    return;
  }
  native::ColumnReader r;
  CheckColumn(r.Init(*c, n, lo, hi), off, "events", field);
  // Decoded through an L1 chunk, appended into the reserved capacity.
  constexpr size_t kChunk = 4096 / sizeof(T);
  T tmp[kChunk];
  for (size_t at = 0; at < n; at += kChunk) {
    const size_t k = std::min(kChunk, n - at);
    const char* err;
    if constexpr (sizeof(T) == 8) {
      err = r.Next(k, native::Out(tmp), dur == nullptr ? nullptr : dur + at);
    } else {
      err = r.Next(k, native::Out(tmp));
    }
    CheckColumn(err, off, "events", field);
    out.insert(out.end(), tmp, tmp + k);
  }
  CheckColumn(r.Finish(), off, "events", field);
}

void NativeSource::DecodeEvents(const Block& b, uint64_t off, size_t strings, Track& t,
                                size_t start, size_t total, uint64_t* memory_left,
                                bool in_place) const {
  const Column* cols[kEventFields];
  IndexColumns(b, off, kEventFields, "events", cols);
  const size_t n = b.count();
  EventTable& e = t.events;
  // Writes the column's rows, or n default values when it is absent.
  const bool skip = skip_unread_columns;
  auto column = [&](int f, auto& vec, auto dflt, int64_t lo, int64_t hi,
                    const int64_t* dur = nullptr) {
    if (skip && (f == native::EV_MICRO_BATCH || f == native::EV_FLOPS || f == native::EV_BYTES)) {
      // Unspecified values (SkipColumnsAnalyzeIgnores): in place, what the
      // rows held; appended, zeros.
      if (!in_place) vec.resize(vec.size() + n);
      return;
    }
    if (!in_place) {
      AppendColumn(cols[f], n, lo, hi, vec, dflt, dur, off, kEventFieldNames[f]);
      return;
    }
    auto* out = vec.data() + start;
    if (cols[f] == nullptr) {
      native::FillValue(native::Out(out), n,
                        static_cast<native::ColumnStorage<decltype(dflt)>>(dflt));
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
  // The lazy shape column: sized (zeros) for the whole track by its first
  // block that has one; a track none of whose blocks has it keeps it empty.
  if (const Column* c = cols[native::EV_SHAPE]) {
    if (e.shape.empty()) {
      const uint64_t bytes = uint64_t(total) * sizeof(StringId);
      if (bytes > *memory_left) {
        Fail(off, "events block: the shape column exceeds the rank's memory limit of " +
                      std::to_string(max_rank_bytes_) + " bytes");
      }
      *memory_left -= bytes;
      e.shape.assign(total, 0);
    }
    CheckColumn(Decode(*c, n, 0, static_cast<int64_t>(strings) - 1, e.shape.data() + start),
                off, "events", kEventFieldNames[native::EV_SHAPE]);
  }
}

void NativeSource::DecodeComms(const Block& b, uint64_t off, size_t strings, Track& t,
                               size_t start, uint64_t* budget, uint64_t used[2],
                               Scratch& s) const {
  const Column* cols[kCommFields];
  IndexColumns(b, off, kCommFields, "comms", cols);
  const size_t n = b.count();
  CommRecord* recs = t.comms.data() + start;
  // Every column is decoded into its own array first, then the records are
  // written in one pass (they are large: one pass per field would stream
  // them through the cache ten times). An absent column holds the
  // default (the records may hold an earlier rank's values).
  constexpr int kScalars = 10;
  s.values.resize(kScalars * n);
  int64_t* v[kCommFields] = {};
  auto column = [&](int f, int64_t lo, int64_t hi, int64_t dflt, int slot) {
    int64_t* out = s.values.data() + slot * n;
    v[f] = out;
    if (cols[f] == nullptr) {
      std::fill(out, out + n, dflt);
      return;
    }
    CheckColumn(Decode(*cols[f], n, lo, hi, out), off, "comms", kCommFieldNames[f]);
  };
  const CommRecord d;
  const int64_t kMaxLen = static_cast<int64_t>(native::kMaxBlockVectorElements);
  column(native::CM_KIND, 0, static_cast<int64_t>(CollectiveKind::kOther),
         static_cast<int64_t>(d.kind), 0);
  column(native::CM_CLASS, 0, kCommClassCount - 1, static_cast<int64_t>(d.comm_class), 1);
  column(native::CM_GROUP, 0, static_cast<int64_t>(strings) - 1, d.group, 2);
  column(native::CM_SEQUENCE, kI64Min, kI64Max, d.sequence, 3);
  column(native::CM_GROUP_SIZE, kI32Min, kI32Max, d.group_size, 4);
  column(native::CM_PEER, kI32Min, kI32Max, d.peer, 5);
  column(native::CM_BYTES, kI64Min, kI64Max, static_cast<int64_t>(d.bytes), 6);
  column(native::CM_GROUP_RANKS_LEN, 0, kMaxLen, 0, 7);
  column(native::CM_SEND_SPLITS_LEN, 0, kMaxLen, 0, 8);
  column(native::CM_RECV_SPLITS_LEN, 0, kMaxLen, 0, 9);
  // The list columns: a length per record, then the elements of all the
  // block's records back to back, decoded in one piece straight into the
  // track's flat arrays: group ranks into comm_ranks, then send splits and
  // recv splits into comm_splits.
  const int len_fields[3] = {native::CM_GROUP_RANKS_LEN, native::CM_SEND_SPLITS_LEN,
                             native::CM_RECV_SPLITS_LEN};
  uint64_t total[3];
  for (int k = 0; k < 3; ++k) {
    const int len_field = len_fields[k], values_field = len_field + 1;
    total[k] = 0;
    for (size_t i = 0; i < n; ++i) total[k] += static_cast<uint64_t>(v[len_field][i]);
    if (total[k] > native::kMaxBlockVectorElements || total[k] > *budget) {
      Fail(off, std::string("comms block: ") + std::to_string(total[k]) + " " +
                    kCommFieldNames[values_field] +
                    " elements exceed the limit of the block or of the rank");
    }
    *budget -= total[k];
    if (total[k] != 0 && cols[values_field] == nullptr) {
      Fail(off, std::string("comms block: column '") + kCommFieldNames[values_field] +
                    "' missing although its lengths are not all 0");
    }
  }
  const uint64_t list_bytes = total[0] * sizeof(int32_t) + (total[1] + total[2]) * sizeof(uint64_t);
  if (list_bytes > s.memory_left) {
    Fail(off, "comms block: " + std::to_string(total[0] + total[1] + total[2]) +
                  " list elements exceed the rank's memory limit of " +
                  std::to_string(max_rank_bytes_) + " bytes");
  }
  s.memory_left -= list_bytes;
  uint64_t& ranks_at = used[0];
  uint64_t& splits_at = used[1];
  if (ranks_at + total[0] > UINT32_MAX || splits_at + total[1] + total[2] > UINT32_MAX) {
    Fail(off, "comms block: more than 2^32 - 1 list elements in one track");
  }
  // Grows only past what a reused Rank already holds (the track is cut to
  // its final size at the end of the rank).
  if (t.comm_ranks.size() < ranks_at + total[0]) t.comm_ranks.resize(ranks_at + total[0]);
  if (t.comm_splits.size() < splits_at + total[1] + total[2]) {
    t.comm_splits.resize(splits_at + total[1] + total[2]);
  }
  uint64_t first[3] = {ranks_at, splits_at, splits_at + total[1]};
  for (int k = 0; k < 3; ++k) {
    const int values_field = len_fields[k] + 1;
    // With no elements, a values column present must describe none.
    static const Column kNoValues;
    const Column& values = cols[values_field] != nullptr ? *cols[values_field] : kNoValues;
    // Group ranks and send splits: sized and counted above, their elements
    // left unspecified (SkipColumnsAnalyzeIgnores).
    if (k < 2 && skip_unread_columns) continue;
    native::ColumnReader r;
    const char* err;
    if (k == 0) {
      err = r.Init(values, total[k], kI32Min, kI32Max);
      if (err == nullptr && total[k] != 0) {
        err = r.Next(total[k], native::Out(t.comm_ranks.data() + first[k]));
      }
    } else {
      err = r.Init(values, total[k], kI64Min, kI64Max);
      if (err == nullptr && total[k] != 0) err = r.Next(total[k], t.comm_splits.data() + first[k]);
    }
    if (err == nullptr) err = r.Finish();
    CheckColumn(err, off, "comms", kCommFieldNames[values_field]);
  }
  ranks_at += total[0];
  splits_at += total[1] + total[2];
  for (size_t i = 0; i < n; ++i) {
    CommRecord& r = recs[i];
    r.kind = static_cast<CollectiveKind>(v[native::CM_KIND][i]);
    r.comm_class = static_cast<CommClass>(v[native::CM_CLASS][i]);
    r.group = static_cast<StringId>(v[native::CM_GROUP][i]);
    r.sequence = v[native::CM_SEQUENCE][i];
    r.group_size = static_cast<int32_t>(v[native::CM_GROUP_SIZE][i]);
    r.peer = static_cast<int32_t>(v[native::CM_PEER][i]);
    r.bytes = static_cast<uint64_t>(v[native::CM_BYTES][i]);
    uint32_t len[3];
    for (int k = 0; k < 3; ++k) len[k] = static_cast<uint32_t>(v[len_fields[k]][i]);
    r.group_ranks = {static_cast<uint32_t>(first[0]), len[0]};
    r.send_splits = {static_cast<uint32_t>(first[1]), len[1]};
    r.recv_splits = {static_cast<uint32_t>(first[2]), len[2]};
    for (int k = 0; k < 3; ++k) first[k] += len[k];
  }
}

void NativeSource::DecodeSamples(const Block& b, uint64_t off, Track& t, size_t start,
                                 Scratch& s) const {
  const Column* cols[kSampleFields];
  IndexColumns(b, off, kSampleFields, "samples", cols);
  const size_t n = b.count();
  int64_t* ts = t.sample_ts.data() + start;
  if (const Column* c = cols[native::SM_TS]) {
    CheckColumn(Decode(*c, n, kI64Min, kI64Max, ts), off, "samples",
                kSampleFieldNames[native::SM_TS]);
  } else {
    std::fill(ts, ts + n, int64_t{0});
  }
  double* out = t.sample_value.data() + start;
  if (const Column* c = cols[native::SM_VALUE]) {
    s.values.resize(n);
    const int64_t* v = s.values.data();
    CheckColumn(Decode(*c, n, kI64Min, kI64Max, s.values.data()), off, "samples",
                kSampleFieldNames[native::SM_VALUE]);
    if (b.values_are_integers()) {
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<double>(v[i]);
    } else {
      for (size_t i = 0; i < n; ++i) out[i] = native::DoubleFromBits(static_cast<uint64_t>(v[i]));
    }
  } else {
    std::fill(out, out + n, 0.0);
  }
}

// One pread per rank, not one per record (~30 a rank on the 718B trace):
// fewer system calls (system time 0.62 -> 0.57 s of `analyze` on it). A rank
// there is ~230 KB; larger ranks (or records spread apart) are read record
// by record as before, so the buffer stays small.
constexpr uint64_t kMaxSpanBytes = 16ull << 20;

void NativeSource::ReadSpan(const native::RankIndex& ri, Scratch& s) const {
  s.span_lo = s.span_hi = 0;
  uint64_t lo = ri.header_offset(), hi = lo + ri.header_size(), sum = ri.header_size();
  if (ri.header_size() == 0) return;  // read header first, size unknown
  for (const native::BlockIndex& bi : ri.blocks()) {
    if (bi.size() == 0) return;
    lo = std::min<uint64_t>(lo, bi.offset());
    hi = std::max<uint64_t>(hi, bi.offset() + bi.size());
    sum += bi.size();
  }
  // Out of range or sparse: ReadRecord checks and reads each record (and
  // names the bad one).
  if (lo < native::kFileHeaderSize || hi > data_end_ || hi <= lo || hi - lo > kMaxSpanBytes ||
      hi - lo > sum + sum / 8) {
    return;
  }
  bytes_->Read(lo, static_cast<size_t>(hi - lo), s.span.Resize(static_cast<size_t>(hi - lo)));
  s.span_lo = lo;
  s.span_hi = hi;
}

void NativeSource::ReadRankInto(size_t index, Rank* out) const {
  if (index >= rank_count()) throw std::out_of_range("NativeSource::ReadRank: no such rank");
  const native::RankIndex& ri = footer_.ranks(static_cast<int>(index));
  // One scratch per thread, kept between calls: a fresh zstd context and
  // fresh multi-MiB buffers per rank cost page faults on every call.
  // (ReadRank never re-enters itself on a thread.)
  thread_local Scratch s;
  const uint64_t hoff = ri.header_offset();
  ReadSpan(ri, s);
  ReadRecord(hoff, data_end_, ri.header_size(), native::kRecordRankHeader, "rank header", s);
  native::RankHeader& h = s.header;
  Rank& rank = *out;
  // The routing records straight into the Rank (routing_parse.h); protobuf
  // parses the rest, or the whole message where the split finds it malformed.
  const bool split =
      native::SplitRankHeader(s.raw.data.get(), s.raw.size, &s.rest, &rank.routing);
  const bool parsed = split ? h.ParseFromArray(s.rest.data(), static_cast<int>(s.rest.size()))
                            : h.ParseFromArray(s.raw.data.get(), static_cast<int>(s.raw.size));
  if (!parsed) Fail(hoff, "rank header record does not hold a valid RankHeader message");
  if (h.rank() != ri.rank()) {
    Fail(hoff, "rank header says rank " + std::to_string(h.rank()) + ", the footer rank " +
                   std::to_string(ri.rank()));
  }
  // `out` may hold an earlier rank: every field is overwritten below, and
  // vectors are resized in place so their capacity is reused.
  rank.rank = h.rank();
  rank.device_id = h.device_id();
  rank.pid = h.pid();
  rank.host = h.host();
  // Assign keeps the strings a reused Rank already holds at the same ids
  // (most of them, from one rank to the next): a fresh table per rank was
  // ~4.6% of `analyze` on the 718B trace.
  s.string_list.clear();
  for (int i = 0; i < h.strings_size(); ++i) s.string_list.emplace_back(h.strings(i));
  if (const int64_t dup = rank.strings.Assign(s.string_list); dup >= 0) {
    Fail(hoff, "rank header: string " + std::to_string(dup + 1) + " repeats an earlier one");
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
  std::vector<uint64_t>& rows = s.rows;
  rows.assign(ntracks * 3, 0);
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
  // The memory the rows will take, before any is allocated; comm list
  // elements are counted as their blocks are decoded (DecodeComms).
  uint64_t memory = ntracks * sizeof(Track);
  for (size_t i = 0; i < ntracks; ++i) {
    memory += rows[i * 3 + native::EVENTS] * kEventBytes +
              rows[i * 3 + native::COMMS] * sizeof(CommRecord) +
              rows[i * 3 + native::SAMPLES] * (sizeof(TimeNs) + sizeof(double));
  }
  if (memory > max_rank_bytes_) {
    Fail(hoff, "rank would take " + std::to_string(memory) + " bytes of memory once decoded, " +
                   "more than the limit of " + std::to_string(max_rank_bytes_) +
                   (opts_.max_rank_bytes == 0 ? " (1024 x the file's size, at least 2 GiB)" : "") +
                   ": the file is corrupt or hostile");
  }
  s.memory_left = max_rank_bytes_ - memory;
  // A rank that fits in cache is decoded with plain stores, to be read from
  // cache by the caller; a larger one would be evicted before it is read.
  const native::StreamStores stream_stores(memory > kCacheRankBytes);
  for (size_t i = 0; i < ntracks; ++i) {
    const native::TrackDescriptor& d = h.tracks(static_cast<int>(i));
    if (d.kind() > static_cast<uint32_t>(TrackKind::kCounter) ||
        d.role() > static_cast<uint32_t>(TrackRole::kDeviceOther) ||
        d.counter() >= static_cast<uint32_t>(kCounterKindCount) || d.name() >= strings ||
        d.after_name() >= strings) {
      Fail(hoff, "rank header: track " + std::to_string(i) +
                     " has a kind, role, counter kind or name id out of range");
    }
    if (d.event_count() != rows[i * 3 + native::EVENTS] ||
        d.comm_count() != rows[i * 3 + native::COMMS] ||
        d.sample_count() != rows[i * 3 + native::SAMPLES]) {
      Fail(hoff, "rank header: track " + std::to_string(i) +
                     " row counts differ from the footer's blocks");
    }
  }
  // Sized only now that the counts are known to fit the budget. Resizing
  // a reused track to the same sizes writes nothing: the blocks then
  // write every row exactly once.
  rank.tracks.resize(ntracks);
  s.in_place.assign(ntracks, 0);
  for (size_t i = 0; i < ntracks; ++i) {
    const native::TrackDescriptor& d = h.tracks(static_cast<int>(i));
    Track& t = rank.tracks[i];
    t.kind = static_cast<TrackKind>(d.kind());
    t.role = static_cast<TrackRole>(d.role());
    t.counter = static_cast<CounterKind>(d.counter());
    t.name = d.name();
    t.native_id = d.native_id();
    t.prior_end = d.has_prior_end() ? d.prior_end() : INT64_MIN;
    t.after_start = d.has_after_start() ? d.after_start() : INT64_MAX;
    t.after_launch = d.has_after_launch() ? d.after_launch() : INT64_MIN;
    t.after_sync = d.has_after_sync() ? d.after_sync() : INT64_MIN;
    t.after_name = d.after_name();
    // A track whose columns already have the right size (a reused Rank
    // holding a rank of the same shape) is overwritten in place; any other
    // is emptied and refilled by appending into reserved capacity, so
    // that fresh memory is written once (resizing would zero it first).
    EventTable& e = t.events;
    const size_t count = d.event_count();
    const bool same = e.ts.size() == count && e.dur.size() == count && e.name.size() == count &&
                      e.category.size() == count && e.phase.size() == count &&
                      e.flags.size() == count && e.correlation.size() == count &&
                      e.step.size() == count && e.micro_batch.size() == count &&
                      e.layer.size() == count && e.comm.size() == count &&
                      e.flops.size() == count && e.bytes.size() == count;
    s.in_place[i] = same;
    if (!same) {
      e.Clear();
      e.Reserve(count);
    }
    e.shape.clear();  // refilled by the blocks that hold shapes (capacity kept)
    t.comms.resize(d.comm_count());
    t.sample_ts.resize(d.sample_count());
    t.sample_value.resize(d.sample_count());
  }
  if (!split) rank.routing.resize(static_cast<size_t>(h.routing_size()));
  for (int i = 0; !split && i < h.routing_size(); ++i) {
    const native::RoutingRecord& p = h.routing(i);
    RoutingRecord& r = rank.routing[i];
    r.ts = p.ts();
    r.step = p.step();
    r.micro_batch = p.micro_batch();
    r.layer = p.layer();
    r.ep_size = p.ep_size();
    r.tokens_per_expert.assign(p.tokens_per_expert().begin(), p.tokens_per_expert().end());
    r.expert_to_ep_rank.assign(p.expert_to_ep_rank().begin(), p.expert_to_ep_rank().end());
    r.copy_expert.assign(p.copy_expert().begin(), p.copy_expert().end());
    r.copy_ep_rank.assign(p.copy_ep_rank().begin(), p.copy_ep_rank().end());
    r.copy_tokens.assign(p.copy_tokens().begin(), p.copy_tokens().end());
  }
  rank.import_stats.resize(static_cast<size_t>(h.import_stats_size()));
  for (int i = 0; i < h.import_stats_size(); ++i) {
    rank.import_stats[i].first = h.import_stats(i).key();
    rank.import_stats[i].second = h.import_stats(i).value();
  }
  // Copy lists come from the file as they are: odd ones counted and dropped.
  DropMalformedCopyLists(&rank);

  std::vector<uint64_t>& cursor = s.cursor;
  cursor.assign(ntracks * 3, 0);
  s.elements.assign(ntracks * 2, 0);
  for (const native::BlockIndex& bi : ri.blocks()) {
    const uint64_t off = bi.offset();
    ReadRecord(off, data_end_, bi.size(), native::kRecordBlock, "block", s);
    Block& b = s.block;
    if (!native::ParseBlockView(s.raw.data.get(), s.raw.size, &b)) {
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
      case native::EVENTS:
        DecodeEvents(b, off, strings, t, start, static_cast<size_t>(rows[bi.track() * 3 + native::EVENTS]),
                     &s.memory_left, s.in_place[bi.track()] != 0);
        break;
      case native::COMMS:
        DecodeComms(b, off, strings, t, start, &budget, &s.elements[bi.track() * 2], s);
        break;
      default: DecodeSamples(b, off, t, start, s); break;
    }
  }
  for (size_t i = 0; i < ntracks; ++i) {
    rank.tracks[i].comm_ranks.resize(s.elements[i * 2]);
    rank.tracks[i].comm_splits.resize(s.elements[i * 2 + 1]);
  }
  native::StreamFence();  // the non-temporal stores are visible to any thread
}

}  // namespace

SkipColumnsAnalyzeIgnores::SkipColumnsAnalyzeIgnores(bool skip) : before_(skip_unread_columns) {
  skip_unread_columns = skip;
}
SkipColumnsAnalyzeIgnores::~SkipColumnsAnalyzeIgnores() { skip_unread_columns = before_; }

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
