#include "formats/native/block_view.h"

#include "formats/native/varint.h"

namespace moetrace::native {
namespace {

constexpr size_t kMaxColumns = 256;

enum WireType { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// One field of a message: its number, wire type and value (the varint, or
// the bytes of a length-delimited field).
struct Field {
  uint32_t number;
  uint32_t wire;
  uint64_t varint;
  const uint8_t* bytes;
  size_t size;
};

// Reads the field at *p (before end) and advances *p. Returns false when
// the bytes are not a valid field.
bool NextField(const uint8_t** p, const uint8_t* end, Field* f) {
  uint64_t tag;
  const uint8_t* q = GetVarint(*p, end, &tag);
  if (q == nullptr || tag > 0xffffffffu || (tag >> 3) == 0) return false;
  f->number = static_cast<uint32_t>(tag >> 3);
  f->wire = static_cast<uint32_t>(tag & 7);
  switch (f->wire) {
    case kVarint:
      q = GetVarint(q, end, &f->varint);
      if (q == nullptr) return false;
      break;
    case kFixed64:
      if (end - q < 8) return false;
      q += 8;
      break;
    case kFixed32:
      if (end - q < 4) return false;
      q += 4;
      break;
    case kLengthDelimited: {
      uint64_t len;
      q = GetVarint(q, end, &len);
      if (q == nullptr || len > static_cast<uint64_t>(end - q)) return false;
      f->bytes = q;
      f->size = static_cast<size_t>(len);
      q += len;
      break;
    }
    default:
      return false;  // groups (3, 4) and invalid types
  }
  *p = q;
  return true;
}

bool ParseColumn(const uint8_t* p, const uint8_t* end, ColumnView* c) {
  Field f;
  while (p < end) {
    if (!NextField(&p, end, &f)) return false;
    if (f.wire == kVarint) {
      switch (f.number) {
        case 1: c->field_ = static_cast<uint32_t>(f.varint); break;
        case 2: c->encoding_ = static_cast<ColumnEncoding>(static_cast<int32_t>(f.varint)); break;
        case 3: c->constant_ = UnZigZag(f.varint); break;
        case 5: c->width_ = static_cast<uint32_t>(f.varint); break;
        case 6: c->first_ = UnZigZag(f.varint); break;
        default: break;
      }
    } else if (f.wire == kLengthDelimited && f.number == 4) {
      c->data_ = std::string_view(reinterpret_cast<const char*>(f.bytes), f.size);
    }
  }
  return true;
}

}  // namespace

ColumnView ViewOf(const Column& c) {
  ColumnView v;
  v.field_ = c.field();
  v.encoding_ = c.encoding();
  v.constant_ = c.constant();
  v.data_ = c.data();
  v.width_ = c.width();
  v.first_ = c.first();
  return v;
}

bool ParseBlockView(const uint8_t* p, size_t n, BlockView* out) {
  out->kind_ = EVENTS;
  out->count_ = 0;
  out->values_are_integers_ = false;
  out->columns_.clear();
  const uint8_t* end = p + n;
  Field f;
  while (p < end) {
    if (!NextField(&p, end, &f)) return false;
    if (f.wire == kVarint) {
      switch (f.number) {
        case 1: out->kind_ = static_cast<BlockKind>(static_cast<int32_t>(f.varint)); break;
        case 2: out->count_ = static_cast<uint32_t>(f.varint); break;
        case 4: out->values_are_integers_ = f.varint != 0; break;
        default: break;
      }
    } else if (f.wire == kLengthDelimited && f.number == 3) {
      // A valid block has at most 13 columns (ids are not repeated); the
      // cap bounds what a hostile block of empty columns makes us allocate.
      if (out->columns_.size() >= kMaxColumns) return false;
      if (!ParseColumn(f.bytes, f.bytes + f.size, &out->columns_.emplace_back())) return false;
    }
  }
  return true;
}

}  // namespace moetrace::native
