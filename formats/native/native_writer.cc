#include "formats/native/native_writer.h"

#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "formats/atomic_file.h"
#include "formats/errors.h"
#include "formats/native/column_codec.h"
#include "formats/native/crc32.h"
#include "formats/native/native_format.h"
#include "formats/export/utf8.h"
#include "formats/native/native_metadata.h"
#include "formats/proto/mtrace.pb.h"

namespace moetrace {
namespace {

using native::Block;
using native::BlockIndex;
using native::Column;

// Takes a C string so that the checks in per-event loops never allocate.
void Require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("native writer: ") + what);
}

// True when p[0..n) are all equal. Checked on the narrow source type
// (native::AllEqual, vectorized), before anything is widened: most columns
// of a block are constant.
template <typename T>
bool IsConstant(const T* p, size_t n) {
  using U = std::conditional_t<sizeof(T) == 1, uint8_t,
            std::conditional_t<sizeof(T) == 2, uint16_t,
            std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  static_assert(sizeof(U) == sizeof(T));
  // Same-width signed/unsigned integers alias legally; one-byte enums are
  // read through uint8_t (a character type).
  return native::AllEqual(reinterpret_cast<const U*>(p), n);
}

// A growable byte buffer that, unlike std::string, does not zero the room
// it hands out: columns are stored straight into it. Growing copies only
// the bytes in use (realloc would copy the whole old capacity).
class ByteBuffer {
 public:
  ByteBuffer() = default;
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;
  ~ByteBuffer() { std::free(data_); }
  size_t size() const { return size_; }
  uint8_t* data() { return data_; }
  void clear() { size_ = 0; }
  // Room for `n` more bytes at the end (not counted until Commit).
  uint8_t* Room(size_t n) {
    if (capacity_ - size_ < n) {
      const size_t cap = std::max(size_ + n, 2 * capacity_);
      auto* bigger = static_cast<uint8_t*>(std::malloc(cap));
      if (bigger == nullptr) throw std::bad_alloc();
      if (size_ != 0) std::memcpy(bigger, data_, size_);
      std::free(data_);
      data_ = bigger;
      capacity_ = cap;
    }
    return data_ + size_;
  }
  void Commit(size_t n) { size_ += n; }
  void Append(const void* p, size_t n) {
    if (n == 0) return;
    std::memcpy(Room(n), p, n);
    size_ += n;
  }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0, capacity_ = 0;
};

// A rank turned into its records (rank header, then per track its event,
// comm and sample blocks), with its index entry; offsets are relative to
// the first byte of `bytes` until the sink appends it to the file.
struct NativeEncodedRank : EncodedRank {
  ByteBuffer bytes;
  native::RankIndex index;
};

// Everything the writer does to a rank except writing it to the file, so
// that several threads can encode (and compress) ranks, each with its own
// encoder, while the sink appends them in order. Also encodes the footer.
class NativeEncoder : public RankEncoder {
 public:
  explicit NativeEncoder(const NativeWriteOptions& opts) : opts_(opts), cctx_(ZSTD_createCCtx()) {
    if (cctx_ == nullptr) throw std::bad_alloc();
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, opts_.zstd_level);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_contentSizeFlag, 1);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 0);
    scratch_.resize(opts_.max_block_rows);
  }
  ~NativeEncoder() override { ZSTD_freeCCtx(cctx_); }
  NativeEncoder(const NativeEncoder&) = delete;
  NativeEncoder& operator=(const NativeEncoder&) = delete;

  std::unique_ptr<EncodedRank> Encode(const Rank& rank, size_t /*index*/) override {
    auto enc = std::make_unique<NativeEncodedRank>();
    // Ranks of a trace have similar sizes: start at the last one's.
    enc->bytes.Room(last_size_);
    out_ = &enc->bytes;
    WriteRank(rank, &enc->index);
    last_size_ = enc->bytes.size();
    return enc;
  }
  // One record holding `msg` into *out; returns its offset in *out and size.
  std::pair<uint64_t, uint32_t> EncodeRecord(native::RecordKind kind,
                                             const google::protobuf::MessageLite& msg,
                                             ByteBuffer* out) {
    out_ = out;
    return WriteRecord(kind, msg);
  }

 private:
  void WriteRank(const Rank& rank, native::RankIndex* index);
  // Appends one record holding `msg` to *out_; returns its offset and total size.
  std::pair<uint64_t, uint32_t> WriteRecord(native::RecordKind kind,
                                            const google::protobuf::MessageLite& msg);
  std::pair<uint64_t, uint32_t> WriteRecordBytes(native::RecordKind kind, const char* raw,
                                                 size_t raw_size);
  void WriteEventBlocks(const Rank& rank, const Track& t, uint32_t track,
                        native::RankIndex* index);
  void WriteCommBlocks(const Rank& rank, const Track& t, uint32_t track, native::RankIndex* index);
  void WriteSampleBlocks(const Track& t, uint32_t track, native::RankIndex* index);
  // Adds column `field` from rows [start, start + n) of a typed vector;
  // every value must lie in [lo, hi] (else `what` is thrown).
  template <typename T>
  void AddTyped(uint32_t field, const std::vector<T>& col, size_t start, size_t n, int64_t dflt,
                int64_t lo = std::numeric_limits<int64_t>::min(),
                int64_t hi = std::numeric_limits<int64_t>::max(), const char* what = "") {
    const T* p = col.data() + start;
    if (IsConstant(p, n)) {
      const int64_t v = static_cast<int64_t>(p[0]);
      Require(v >= lo && v <= hi, what);
      if (v == dflt) return;
      native::ColumnView c;
      c.encoding_ = native::CONSTANT;
      c.constant_ = v;
      PutColumn(field, c);
      return;
    }
    if constexpr (sizeof(T) == 8) {
      if (lo == std::numeric_limits<int64_t>::min() && hi == std::numeric_limits<int64_t>::max()) {
        // Unchecked int64 and uint64 fields are encoded in place, with no
        // widening copy (uint64 and int64 views of the same bits alias).
        static_assert(std::is_integral_v<T>);
        AddColumn(field, reinterpret_cast<const int64_t*>(p), n, dflt);
        return;
      }
    }
    if constexpr (sizeof(T) == 8) {
      const int64_t* v = reinterpret_cast<const int64_t*>(p);
      int64_t range[2];
      native::RangeOf(v, n, &range[0], &range[1]);
      Require(range[0] >= lo && range[1] <= hi, what);
      AddColumn(field, v, n, dflt);
    } else {
      // One pass widens the rows into scratch_ and frames them.
      const native::PlainStats s = native::Widen(Narrow(p), n, scratch_.data());
      Require(s.lo >= lo && s.hi <= hi, what);
      AddColumn(field, scratch_.data(), n, dflt, nullptr, &s);
    }
  }
  // Starts the serialized Block message of the next block. Its kind and
  // count (fields 1, 2, serialized first) are written by AddBlockRecord
  // into the room left in front of the columns.
  void BeginBlock() {
    block_bytes_.clear();
    std::memset(block_bytes_.Room(kBlockPrefix), 0, kBlockPrefix);
    block_bytes_.Commit(kBlockPrefix);
    values_are_integers_ = false;
  }
  // Appends column `field` to the block, serialized as protobuf does (fields
  // in number order, defaults omitted): the sample trace's bytes pin this.
  // `deferred`: size of data the encoder still has to write (see
  // ColumnEncoder::WriteDeferred), stored straight into the block.
  void PutColumn(uint32_t field, const native::ColumnView& c, size_t deferred = 0);
  // Adds column `field` of `n` int64 values unless all equal `dflt`
  // (dflt == nullopt: always stored).
  void AddColumn(uint32_t field, const int64_t* v, size_t n, std::optional<int64_t> dflt,
                 const int64_t* dur = nullptr, const native::PlainStats* plain = nullptr);
  // A narrow column's rows as the type native::Widen takes (one-byte enums
  // as uint8_t, a character type).
  template <typename T>
  static auto Narrow(const T* p) {
    if constexpr (std::is_enum_v<T>) {
      static_assert(sizeof(T) == 1);
      return reinterpret_cast<const uint8_t*>(p);
    } else {
      return p;
    }
  }
  // Appends the elements of `vec` to `out` as int64 (no memcpy call per
  // short vector).
  template <typename T>
  static void AppendWidened(std::span<const T> vec, ByteBuffer* out) {
    const size_t m = vec.size();
    int64_t* dst = reinterpret_cast<int64_t*>(out->Room(m * sizeof(int64_t)));
    const T* src = vec.data();
    size_t k = 0;
    if constexpr (sizeof(T) == sizeof(int64_t)) {
      for (; k + 4 <= m; k += 4) std::memcpy(dst + k, src + k, 32);  // same bits
    }
    for (; k < m; ++k) dst[k] = static_cast<int64_t>(src[k]);
    out->Commit(m * sizeof(int64_t));
  }
  void AddBlockRecord(uint32_t track, native::BlockKind kind, uint32_t count, int64_t min_ts,
                      int64_t max_ts, native::RankIndex* index);

  NativeWriteOptions opts_;
  ZSTD_CCtx* cctx_;
  native::ColumnEncoder encoder_;
  ByteBuffer* out_ = nullptr;  // where records go
  size_t last_size_ = 0;
  // The Block message being built (see BeginBlock), kept between blocks.
  static constexpr size_t kBlockPrefix = 8;  // kind: 2 bytes, count: up to 6
  ByteBuffer block_bytes_;
  bool values_are_integers_ = false;
  std::vector<int64_t> scratch_;
  ByteBuffer comm_cols_;  // the columns of a comm block (int64), Room() only
  ByteBuffer values_[3];            // its flattened vectors (int64)
  std::string serialized_;
};

class NativeSink : public TraceSink {
 public:
  NativeSink(const std::string& path, NativeWriteOptions opts) : file_(path), opts_(opts) {
    opts_.max_block_rows = std::clamp<uint32_t>(opts_.max_block_rows, 1, native::kMaxBlockRows);
    own_ = std::make_unique<NativeEncoder>(opts_);
    uint8_t header[native::kFileHeaderSize] = {};
    std::memcpy(header, native::kMagic, sizeof native::kMagic);
    native::PutU32(header + 8, native::kVersion);
    file_.Write(header, sizeof header);
  }

  void AddRank(const Rank& rank) override {
    Require(!finished_, "AddRank after Finish");
    Require(!failed_, "AddRank after a failed AddRank");
    failed_ = true;  // an invalid rank fails the sink, as a failed write does
    auto enc = own_->Encode(rank, 0);
    failed_ = false;
    AddEncoded(std::move(enc));
  }
  size_t EncodedRanksPerThread() const override { return 16; }  // ~0.25 MB each for 718B
  std::unique_ptr<RankEncoder> CreateEncoder() override {
    return std::make_unique<NativeEncoder>(opts_);
  }
  void AddEncoded(std::unique_ptr<EncodedRank> rank) override {
    Require(!finished_, "AddRank after Finish");
    Require(!failed_, "AddRank after a failed AddRank");
    auto* enc = dynamic_cast<NativeEncodedRank*>(rank.get());
    Require(enc != nullptr, "AddEncoded: a rank encoded by another kind of sink");
    // A rank that fails half-written would leave the index inconsistent:
    // the sink then refuses to finish, and AtomicFile leaves nothing.
    failed_ = true;
    const uint64_t base = file_.offset();
    native::RankIndex& index = enc->index;
    index.set_header_offset(index.header_offset() + base);
    for (native::BlockIndex& b : *index.mutable_blocks()) b.set_offset(b.offset() + base);
    file_.Write(enc->bytes.data(), enc->bytes.size());
    footer_.add_ranks()->Swap(&index);
    failed_ = false;
  }
  void Finish(const Metadata& metadata) override;

 private:
  AtomicFile file_;
  NativeWriteOptions opts_;
  std::unique_ptr<NativeEncoder> own_;  // for AddRank and the footer
  bool finished_ = false;
  bool failed_ = false;
  native::Footer footer_;
};

std::pair<uint64_t, uint32_t> NativeEncoder::WriteRecord(native::RecordKind kind,
                                                      const google::protobuf::MessageLite& msg) {
  serialized_.clear();
  if (!msg.SerializeToString(&serialized_)) {
    throw std::runtime_error("native writer: cannot serialize a protobuf message");
  }
  return WriteRecordBytes(kind, serialized_.data(), serialized_.size());
}

std::pair<uint64_t, uint32_t> NativeEncoder::WriteRecordBytes(native::RecordKind kind,
                                                           const char* raw, size_t raw_size) {
  Require(raw_size <= native::kMaxRecordRawSize, "a record exceeds 1 GiB");
  // (A ByteBuffer: growing a std::string would zero the room each time a
  // large record follows a small one.)
  // Compressed straight behind its header's room in *out_.
  const size_t bound = ZSTD_compressBound(raw_size);
  const uint64_t offset = out_->size();
  uint8_t* header = out_->Room(native::kRecordHeaderSize + bound);
  uint8_t* out = header + native::kRecordHeaderSize;
  size_t n = ZSTD_compress2(cctx_, out, bound, raw, raw_size);
  if (ZSTD_isError(n)) {
    throw std::runtime_error(std::string("native writer: zstd: ") + ZSTD_getErrorName(n));
  }
  std::memset(header, 0, native::kRecordHeaderSize);
  native::PutU32(header, static_cast<uint32_t>(n));
  native::PutU32(header + 4, static_cast<uint32_t>(raw_size));
  native::PutU32(header + 8, native::Crc32(out, n));
  header[12] = kind;
  out_->Commit(native::kRecordHeaderSize + n);
  return {offset, static_cast<uint32_t>(native::kRecordHeaderSize + n)};
}

void NativeEncoder::AddColumn(uint32_t field, const int64_t* v, size_t n, std::optional<int64_t> dflt,
                           const int64_t* dur, const native::PlainStats* plain) {
  native::ColumnView col;
  size_t deferred;
  if (encoder_.Encode(v, n, dflt, dur, &col, plain, &deferred)) PutColumn(field, col, deferred);
}

namespace {
// Appends protobuf's encoding of one varint field (tag, value) to `out`.
uint8_t* PutField(uint8_t* out, uint32_t number, uint64_t value) {
  out = native::PutVarint(out, number << 3);
  return native::PutVarint(out, value);
}
}  // namespace

void NativeEncoder::PutColumn(uint32_t field, const native::ColumnView& c, size_t deferred) {
  // Column: field 1, encoding 2, constant 3 (sint64), data 4 (bytes),
  // width 5, first 6 (sint64); a field at its default is not written.
  uint8_t head[64], tail[32];
  uint8_t* h = head;
  if (field != 0) h = PutField(h, 1, field);
  if (c.encoding() != 0) {  // an enum: int32 widened to 64 bits
    h = PutField(h, 2, static_cast<uint64_t>(static_cast<int64_t>(c.encoding())));
  }
  if (c.constant() != 0) h = PutField(h, 3, native::ZigZag(c.constant()));
  const std::string_view data = c.data();
  const size_t data_size = deferred != 0 ? deferred : data.size();
  if (data_size != 0) {
    *h++ = (4 << 3) | 2;
    h = native::PutVarint(h, data_size);
  }
  uint8_t* t = tail;
  if (c.width() != 0) t = PutField(t, 5, c.width());
  if (c.first() != 0) t = PutField(t, 6, native::ZigZag(c.first()));
  const size_t msg = static_cast<size_t>(h - head) + data_size + static_cast<size_t>(t - tail);
  uint8_t prefix[16];
  uint8_t* q = prefix;
  *q++ = (3 << 3) | 2;  // Block.columns
  q = native::PutVarint(q, msg);
  block_bytes_.Append(prefix, static_cast<size_t>(q - prefix));
  block_bytes_.Append(head, static_cast<size_t>(h - head));
  if (deferred != 0) {
    encoder_.WriteDeferred(block_bytes_.Room(deferred + 8));
    block_bytes_.Commit(deferred);
  } else {
    block_bytes_.Append(data.data(), data.size());
  }
  block_bytes_.Append(tail, static_cast<size_t>(t - tail));
}

void NativeEncoder::AddBlockRecord(uint32_t track, native::BlockKind kind, uint32_t count,
                                int64_t min_ts, int64_t max_ts, native::RankIndex* index) {
  // Block: kind 1, count 2 (into the room in front of the columns), the
  // columns (3), values_are_integers 4.
  uint8_t head[kBlockPrefix];
  uint8_t* h = head;
  if (kind != 0) h = PutField(h, 1, static_cast<uint64_t>(kind));
  h = PutField(h, 2, count);  // count >= 1
  const size_t head_size = static_cast<size_t>(h - head);
  uint8_t* begin = block_bytes_.data() + kBlockPrefix - head_size;
  std::memcpy(begin, head, head_size);
  if (values_are_integers_) {
    block_bytes_.Append("\x20\x01", 2);
    begin = block_bytes_.data() + kBlockPrefix - head_size;  // may have moved
  }
  auto [offset, size] =
      WriteRecordBytes(native::kRecordBlock, reinterpret_cast<const char*>(begin),
                       block_bytes_.size() - (kBlockPrefix - head_size));
  BlockIndex* b = index->add_blocks();
  b->set_offset(offset);
  b->set_size(size);
  b->set_track(track);
  b->set_kind(kind);
  b->set_count(count);
  b->set_min_ts(min_ts);
  b->set_max_ts(max_ts);
}

void NativeEncoder::WriteEventBlocks(const Rank& rank, const Track& t, uint32_t track,
                                  native::RankIndex* index) {
  const EventTable& e = t.events;
  const size_t total = e.size();
  Require(e.dur.size() == total && e.name.size() == total && e.category.size() == total &&
              e.phase.size() == total && e.flags.size() == total &&
              e.correlation.size() == total && e.step.size() == total &&
              e.micro_batch.size() == total && e.layer.size() == total &&
              e.comm.size() == total && e.flops.size() == total && e.bytes.size() == total,
          "EventTable columns of unequal length");
  const bool has_shapes = !e.shape.empty();
  Require(!has_shapes || e.shape.size() == total, "EventTable shape column of another length");
  const int64_t strings = static_cast<int64_t>(rank.strings.size());
  const int64_t comms = static_cast<int64_t>(t.comms.size());
  for (size_t start = 0; start < total; start += opts_.max_block_rows) {
    const size_t n = std::min<size_t>(opts_.max_block_rows, total - start);
    BeginBlock();
    const int64_t* ts = e.ts.data() + start;
    const int64_t* dur = e.dur.data() + start;
    AddTyped(native::EV_DUR, e.dur, start, n, 0);
    if (IsConstant(ts, n)) {
      AddTyped(native::EV_TS, e.ts, start, n, 0);
    } else {
      AddColumn(native::EV_TS, ts, n, 0, dur);
    }
    // After the two columns' passes, while they are in cache.
    int64_t min_ts, max_end;
    native::EndRange(ts, dur, n, &min_ts, &max_end);
    AddTyped(native::EV_NAME, e.name, start, n, 0, 0, strings - 1,
             "event name id not in the string table");
    AddTyped(native::EV_CATEGORY, e.category, start, n, 0, 0, kCategoryCount - 1,
             "event category out of range");
    AddTyped(native::EV_PHASE, e.phase, start, n, 0, 0, static_cast<int64_t>(Phase::kOptimizer),
             "event phase out of range");
    AddTyped(native::EV_FLAGS, e.flags, start, n, 0);
    AddTyped(native::EV_CORRELATION, e.correlation, start, n, -1);
    AddTyped(native::EV_STEP, e.step, start, n, kNone);
    AddTyped(native::EV_MICRO_BATCH, e.micro_batch, start, n, kNone);
    AddTyped(native::EV_LAYER, e.layer, start, n, kNone);
    AddTyped(native::EV_COMM, e.comm, start, n, kNone, -1, comms - 1,
             "event comm index not -1 nor a comm record");
    // uint64 values are stored as the int64 of the same bits.
    AddTyped(native::EV_FLOPS, e.flops, start, n, 0);
    AddTyped(native::EV_BYTES, e.bytes, start, n, 0);
    // Only tracks that record shapes have the column; a block of such a
    // track whose rows have none omits it (constant at the default 0).
    if (has_shapes) {
      AddTyped(native::EV_SHAPE, e.shape, start, n, 0, 0, strings - 1,
               "event shape id not in the string table");
    }
    AddBlockRecord(track, native::EVENTS, static_cast<uint32_t>(n), min_ts, max_end, index);
  }
}

void NativeEncoder::WriteCommBlocks(const Rank& rank, const Track& t, uint32_t track,
                                 native::RankIndex* index) {
  const size_t total = t.comms.size();
  const int64_t strings = static_cast<int64_t>(rank.strings.size());
  for (size_t start = 0; start < total; start += opts_.max_block_rows) {
    const size_t n = std::min<size_t>(opts_.max_block_rows, total - start);
    const CommRecord* c = t.comms.data() + start;
    BeginBlock();
    // One pass over the records fills every column: the scalars into
    // comm_cols_, the list lengths after them, the elements into values_[0..2].
    constexpr size_t kScalars = 7, kVectors = 3;
    int64_t* const cols =
        reinterpret_cast<int64_t*>(comm_cols_.Room((kScalars + kVectors) * n * sizeof(int64_t)));
    int64_t* col[kScalars + kVectors];
    for (size_t f = 0; f < kScalars + kVectors; ++f) col[f] = cols + f * n;
    // The vectors' total sizes first: values_ then never grows mid-pass
    // (a growth copies what is in it, into memory never touched before).
    size_t totals[kVectors] = {0, 0, 0};
    for (size_t i = 0; i < n; ++i) {
      totals[0] += c[i].group_ranks.size;
      totals[1] += c[i].send_splits.size;
      totals[2] += c[i].recv_splits.size;
    }
    for (size_t k = 0; k < kVectors; ++k) {
      values_[k].clear();
      values_[k].Room(totals[k] * sizeof(int64_t));
    }
    for (size_t i = 0; i < n; ++i) {
      const CommRecord& r = c[i];
      Require(r.group < strings, "comm group id not in the string table");
      Require(int(r.kind) <= int(CollectiveKind::kOther) && int(r.comm_class) < kCommClassCount,
              "comm kind or class out of range");
      Require(uint64_t{r.group_ranks.begin} + r.group_ranks.size <= t.comm_ranks.size() &&
                  uint64_t{r.send_splits.begin} + r.send_splits.size <= t.comm_splits.size() &&
                  uint64_t{r.recv_splits.begin} + r.recv_splits.size <= t.comm_splits.size(),
              "comm list range outside the track's element arrays");
      col[0][i] = int64_t(r.kind);
      col[1][i] = int64_t(r.comm_class);
      col[2][i] = int64_t(r.group);
      col[3][i] = r.sequence;
      col[4][i] = int64_t(r.group_size);
      col[5][i] = int64_t(r.peer);
      col[6][i] = int64_t(r.bytes);
      col[7][i] = static_cast<int64_t>(r.group_ranks.size);
      col[8][i] = static_cast<int64_t>(r.send_splits.size);
      col[9][i] = static_cast<int64_t>(r.recv_splits.size);
      AppendWidened(t.Ranks(r.group_ranks), &values_[0]);
      AppendWidened(t.Splits(r.send_splits), &values_[1]);
      AppendWidened(t.Splits(r.recv_splits), &values_[2]);
    }
    AddColumn(native::CM_KIND, col[0], n, 0);
    AddColumn(native::CM_CLASS, col[1], n, 0);
    AddColumn(native::CM_GROUP, col[2], n, 0);
    AddColumn(native::CM_SEQUENCE, col[3], n, -1);
    AddColumn(native::CM_GROUP_SIZE, col[4], n, 0);
    AddColumn(native::CM_PEER, col[5], n, kNone);
    AddColumn(native::CM_BYTES, col[6], n, 0);
    const uint32_t len_fields[kVectors] = {native::CM_GROUP_RANKS_LEN, native::CM_SEND_SPLITS_LEN,
                                           native::CM_RECV_SPLITS_LEN};
    const uint32_t value_fields[kVectors] = {native::CM_GROUP_RANKS, native::CM_SEND_SPLITS,
                                             native::CM_RECV_SPLITS};
    for (size_t k = 0; k < kVectors; ++k) {
      AddColumn(len_fields[k], col[kScalars + k], n, 0);
      const size_t count = values_[k].size() / sizeof(int64_t);
      if (count != 0) {
        AddColumn(value_fields[k], reinterpret_cast<const int64_t*>(values_[k].data()), count,
                  std::nullopt);
      }
    }
    AddBlockRecord(track, native::COMMS, static_cast<uint32_t>(n), 0, 0, index);
  }
}

void NativeEncoder::WriteSampleBlocks(const Track& t, uint32_t track, native::RankIndex* index) {
  const size_t total = t.sample_ts.size();
  Require(t.sample_value.size() == total, "sample_ts and sample_value of unequal length");
  for (size_t start = 0; start < total; start += opts_.max_block_rows) {
    const size_t n = std::min<size_t>(opts_.max_block_rows, total - start);
    BeginBlock();
    const int64_t* ts = t.sample_ts.data() + start;
    AddColumn(native::SM_TS, ts, n, 0);
    // Memory counters are whole bytes: store them as integers when that is
    // exact (it compresses far better than IEEE bits), else as bits.
    const double* d = t.sample_value.data() + start;
    bool integers = true;
    for (size_t i = 0; i < n && integers; ++i) {
      integers = d[i] >= -9223372036854775808.0 && d[i] < 9223372036854775808.0 &&
                 static_cast<double>(static_cast<int64_t>(d[i])) == d[i] &&
                 !(d[i] == 0 && std::signbit(d[i]));
    }
    for (size_t i = 0; i < n; ++i) {
      scratch_[i] = integers ? static_cast<int64_t>(d[i])
                             : static_cast<int64_t>(native::DoubleBits(d[i]));
    }
    AddColumn(native::SM_VALUE, scratch_.data(), n, 0);
    values_are_integers_ = integers;
    int64_t min_ts = *std::min_element(ts, ts + n), max_ts = *std::max_element(ts, ts + n);
    AddBlockRecord(track, native::SAMPLES, static_cast<uint32_t>(n), min_ts, max_ts, index);
  }
}

void NativeEncoder::WriteRank(const Rank& rank, native::RankIndex* index) {
  Require(rank.tracks.size() <= native::kMaxTracksPerRank, "more than 2^20 tracks in a rank");
  native::RankHeader h;
  h.set_rank(rank.rank);
  h.set_device_id(rank.device_id);
  h.set_pid(rank.pid);
  h.set_host(SanitizedUtf8(rank.host));  // protobuf strings must be UTF-8 to read back
  const auto& strings = rank.strings.all();
  for (size_t i = 1; i < strings.size(); ++i) h.add_strings(std::string(strings[i]));
  for (const Track& t : rank.tracks) {
    Require(t.name < rank.strings.size(), "track name id not in the string table");
    native::TrackDescriptor* d = h.add_tracks();
    d->set_kind(static_cast<uint32_t>(t.kind));
    d->set_role(static_cast<uint32_t>(t.role));
    d->set_counter(static_cast<uint32_t>(t.counter));
    d->set_name(t.name);
    d->set_native_id(t.native_id);
    if (t.prior_end != INT64_MIN) d->set_prior_end(t.prior_end);
    if (t.after_start != INT64_MAX) d->set_after_start(t.after_start);
    if (t.after_launch != INT64_MIN) d->set_after_launch(t.after_launch);
    if (t.after_sync != INT64_MIN) d->set_after_sync(t.after_sync);
    if (t.after_name != 0) {
      Require(t.after_name < rank.strings.size(), "track after_name id not in the string table");
      d->set_after_name(t.after_name);
    }
    d->set_event_count(t.events.size());
    d->set_comm_count(t.comms.size());
    d->set_sample_count(t.sample_ts.size());
  }
  for (const RoutingRecord& r : rank.routing) {
    native::RoutingRecord* p = h.add_routing();
    p->set_ts(r.ts);
    p->set_step(r.step);
    p->set_micro_batch(r.micro_batch);
    p->set_layer(r.layer);
    p->set_ep_size(r.ep_size);
    p->mutable_tokens_per_expert()->Add(r.tokens_per_expert.begin(), r.tokens_per_expert.end());
    p->mutable_expert_to_ep_rank()->Add(r.expert_to_ep_rank.begin(), r.expert_to_ep_rank.end());
    p->mutable_copy_expert()->Add(r.copy_expert.begin(), r.copy_expert.end());
    p->mutable_copy_ep_rank()->Add(r.copy_ep_rank.begin(), r.copy_ep_rank.end());
    p->mutable_copy_tokens()->Add(r.copy_tokens.begin(), r.copy_tokens.end());
  }
  for (const auto& [k, v] : rank.import_stats) {
    native::ImportStat* s = h.add_import_stats();
    s->set_key(SanitizedUtf8(k));
    s->set_value(v);
  }
  index->set_rank(rank.rank);
  auto [offset, size] = WriteRecord(native::kRecordRankHeader, h);
  index->set_header_offset(offset);
  index->set_header_size(size);
  for (size_t i = 0; i < rank.tracks.size(); ++i) {
    const Track& t = rank.tracks[i];
    const uint32_t track = static_cast<uint32_t>(i);
    WriteEventBlocks(rank, t, track, index);
    WriteCommBlocks(rank, t, track, index);
    WriteSampleBlocks(t, track, index);
  }
}

void NativeSink::Finish(const Metadata& metadata) {
  Require(!finished_, "Finish called twice");
  Require(!failed_, "Finish after a failed AddRank");
  finished_ = true;
  native::MetadataToProto(metadata, footer_.mutable_metadata());
  ByteBuffer record;
  auto [at, size] = own_->EncodeRecord(native::kRecordFooter, footer_, &record);
  const uint64_t offset = file_.offset() + at;
  file_.Write(record.data(), record.size());
  uint8_t trailer[native::kTrailerSize];
  native::PutU64(trailer, offset);
  native::PutU32(trailer + 8, size);
  native::PutU32(trailer + 12, native::kVersion);
  std::memcpy(trailer + 16, native::kEndMagic, sizeof native::kEndMagic);
  file_.Write(trailer, sizeof trailer);
  file_.Commit();
}

}  // namespace

std::unique_ptr<TraceSink> CreateNativeSink(const std::string& path, NativeWriteOptions opts) {
  return std::make_unique<NativeSink>(path, opts);
}

}  // namespace moetrace
