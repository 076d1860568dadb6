#include "formats/native/routing_parse.h"

#include <cstring>

#include "formats/native/varint.h"
#include "formats/native/varint_decode_avx2.h"
#include "formats/native/varint_decode_avx512.h"

namespace moetrace::native {
namespace {

constexpr uint32_t kRoutingField = 7;  // RankHeader.routing (mtrace.proto)

// Skips a field's payload of wire type `wt`; nullptr when malformed.
const uint8_t* SkipField(const uint8_t* p, const uint8_t* end, uint32_t wt) {
  uint64_t v;
  switch (wt) {
    case 0: return GetVarint(p, end, &v);
    case 1: return end - p >= 8 ? p + 8 : nullptr;
    case 5: return end - p >= 4 ? p + 4 : nullptr;
    case 2:
      p = GetVarint(p, end, &v);
      return p != nullptr && v <= static_cast<uint64_t>(end - p) ? p + v : nullptr;
    default: return nullptr;  // groups: left to protobuf
  }
}

// Reads a tag: field number and wire type.
const uint8_t* GetTag(const uint8_t* p, const uint8_t* end, uint32_t* field, uint32_t* wt) {
  uint64_t tag;
  p = GetVarint(p, end, &tag);
  if (p == nullptr || tag > UINT32_MAX || (tag >> 3) == 0) return nullptr;
  *field = static_cast<uint32_t>(tag >> 3);
  *wt = static_cast<uint32_t>(tag & 7);
  return p;
}

// Appends the packed zigzag varints of [p, end) to `out`, sized once: in a
// well-formed run every value ends in exactly one byte below 0x80.
template <typename T>
bool AppendPacked(const uint8_t* p, const uint8_t* end, std::vector<T>* out) {
  if (p == end) return true;
  if (end[-1] >= 0x80) return false;
  // Values = bytes - continuation bytes, 8 bytes at a time.
  size_t continued = 0;
  const uint8_t* q = p;
  for (; end - q >= 8; q += 8) {
    uint64_t w;
    std::memcpy(&w, q, 8);
    // The top bits, moved down to one per byte, summed by the multiply
    // (no popcnt instruction is assumed).
    continued += static_cast<size_t>((((w & 0x8080808080808080ull) >> 7) * 0x0101010101010101ull) >> 56);
  }
  for (; q < end; ++q) continued += *q >> 7;
  const size_t count = static_cast<size_t>(end - p) - continued;
  const size_t at = out->size();
  out->resize(at + count);
  T* dst = out->data() + at;
  T* const dst_end = dst + count;
  // Token counts (int64) 64 or 8 bytes at a time where the CPU can
  // (varint_decode_avx512.h, varint_decode_avx2.h); the loops below take
  // what they leave.
  [[maybe_unused]] const bool wide = varint_avx512::Usable();
  [[maybe_unused]] const bool avx2 = !wide && varint_avx2::Usable();
  while (p < end) {
    if constexpr (sizeof(T) == 8) {
      if (wide) varint_avx512::DecodeShort(&p, end, &dst, dst_end);
      if (avx2) varint_avx2::DecodeShort(&p, end, &dst, dst_end);
    }
    // Token counts are small: one or two bytes, mixed at random. The length
    // is computed, not branched on (a mispredicted branch per value was most
    // of this loop's time): the second byte is masked off when the first
    // ends the value.
    // Four values from one 8-byte load: at most 8 bytes when none is longer
    // than two, which holds unless two adjacent bytes both continue (a
    // value of three bytes or more). The values' lengths are then register
    // shifts, not a chain of loads through the moving read position.
    while (end - p >= 8 && dst_end - dst >= 4) {
      uint64_t w;
      std::memcpy(&w, p, 8);  // little-endian: p[0] in the low byte
      if ((w & (w >> 8) & 0x0080808080808080ull) != 0) break;
      size_t used = 0;
      for (int k = 0; k < 4; ++k) {
        const uint64_t two = (w >> 7) & 1u;
        const uint64_t u = (w & 0x7fu) | ((w >> 1) & 0x3f80u & (0 - two));
        w >>= 8u << two;
        used += 1 + two;
        dst[k] = static_cast<T>(UnZigZag(u));
      }
      dst += 4;
      p += used;
    }
    // One value at a time near the end (both bytes are read, so while two
    // are left) and after a long value.
    while (end - p >= 2) {
      uint16_t w;
      std::memcpy(&w, p, 2);  // little-endian: p[0] in the low byte
      if ((w & 0x8080u) == 0x8080u) break;  // three bytes or more
      const uint64_t two = (w >> 7) & 1u;
      const uint64_t u = (w & 0x7fu) | ((w >> 1) & 0x3f80u & (0 - two));
      p += 1 + two;
      // sint32 keeps the low 32 bits of the varint, as protobuf does (a
      // two-byte value has 14).
      *dst++ = static_cast<T>(UnZigZag(u));
    }
    if (p == end) break;
    uint64_t u;
    p = GetVarint(p, end, &u);
    if (p == nullptr || dst == dst_end) return false;
    if constexpr (sizeof(T) == 4) u &= 0xffffffffu;
    *dst++ = static_cast<T>(UnZigZag(u));
  }
  return true;
}

template <typename T>
bool ReadRepeated(const uint8_t*& p, const uint8_t* end, uint32_t wt, std::vector<T>* out) {
  uint64_t v;
  if (wt == 0) {  // one unpacked element
    p = GetVarint(p, end, &v);
    if (p == nullptr) return false;
    if constexpr (sizeof(T) == 4) v &= 0xffffffffu;
    out->push_back(static_cast<T>(UnZigZag(v)));
    return true;
  }
  p = GetVarint(p, end, &v);
  if (p == nullptr || v > static_cast<uint64_t>(end - p)) return false;
  const uint8_t* stop = p + v;
  if (!AppendPacked(p, stop, out)) return false;
  p = stop;
  return true;
}

bool ParseRouting(const uint8_t* p, const uint8_t* end, moetrace::RoutingRecord* r) {
  // Protobuf defaults (proto3: absent = 0).
  r->ts = 0;
  r->step = r->micro_batch = r->layer = r->ep_size = 0;
  r->tokens_per_expert.clear();
  r->expert_to_ep_rank.clear();
  r->copy_expert.clear();
  r->copy_ep_rank.clear();
  r->copy_tokens.clear();
  while (p < end) {
    uint32_t field, wt;
    p = GetTag(p, end, &field, &wt);
    if (p == nullptr) return false;
    if (field >= 1 && field <= 5 && wt == 0) {
      uint64_t v;
      p = GetVarint(p, end, &v);
      if (p == nullptr) return false;
      if (field == 1) {
        r->ts = UnZigZag(v);
        continue;
      }
      const int32_t x = static_cast<int32_t>(UnZigZag(v & 0xffffffffu));
      (field == 2 ? r->step : field == 3 ? r->micro_batch : field == 4 ? r->layer : r->ep_size) = x;
    } else if (field == 6 && (wt == 0 || wt == 2)) {
      if (!ReadRepeated(p, end, wt, &r->tokens_per_expert)) return false;
    } else if (field == 7 && (wt == 0 || wt == 2)) {
      if (!ReadRepeated(p, end, wt, &r->expert_to_ep_rank)) return false;
    } else if (field == 8 && (wt == 0 || wt == 2)) {
      if (!ReadRepeated(p, end, wt, &r->copy_expert)) return false;
    } else if (field == 9 && (wt == 0 || wt == 2)) {
      if (!ReadRepeated(p, end, wt, &r->copy_ep_rank)) return false;
    } else if (field == 10 && (wt == 0 || wt == 2)) {
      if (!ReadRepeated(p, end, wt, &r->copy_tokens)) return false;
    } else {
      p = SkipField(p, end, wt);  // unknown fields: ignored, as protobuf does
      if (p == nullptr) return false;
    }
  }
  return true;
}

}  // namespace

bool SplitRankHeader(const uint8_t* p, size_t n, std::vector<uint8_t>* rest,
                     std::vector<moetrace::RoutingRecord>* routing) {
  const uint8_t* end = p + n;
  rest->clear();
  size_t records = 0;
  while (p < end) {
    const uint8_t* field_at = p;
    uint32_t field, wt;
    p = GetTag(p, end, &field, &wt);
    if (p == nullptr) return false;
    if (field == kRoutingField && wt == 2) {
      uint64_t len;
      p = GetVarint(p, end, &len);
      if (p == nullptr || len > static_cast<uint64_t>(end - p)) return false;
      if (routing->size() <= records) routing->resize(records + 1);
      if (!ParseRouting(p, p + len, &(*routing)[records])) return false;
      ++records;
      p += len;
      continue;
    }
    p = SkipField(p, end, wt);
    if (p == nullptr) return false;
    rest->insert(rest->end(), field_at, p);
  }
  routing->resize(records);
  return true;
}

}  // namespace moetrace::native
