#include "formats/kineto/json_scan.h"

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace moetrace {
namespace {

// 1 for the bytes that matter inside a container: quotes and brackets.
struct Table {
  unsigned char v[256] = {};
  constexpr Table() {
    v[int('"')] = 1;
    v[int('{')] = 1;
    v[int('[')] = 1;
    v[int('}')] = 1;
    v[int(']')] = 1;
  }
};
constexpr Table kInteresting;

}  // namespace

void JsonScanner::SkipBom() {
  if (end_ - p_ >= 3 && static_cast<unsigned char>(p_[0]) == 0xEF &&
      static_cast<unsigned char>(p_[1]) == 0xBB && static_cast<unsigned char>(p_[2]) == 0xBF) {
    p_ += 3;
  }
}

bool JsonScanner::Consume(char c) {
  SkipWhitespace();
  if (p_ < end_ && *p_ == c) {
    ++p_;
    return true;
  }
  return false;
}

const char* JsonScanner::SkipStringFrom(const char* p) {
  const char* q = p + 1;
  for (;;) {
    q = static_cast<const char*>(memchr(q, '"', size_t(end_ - q)));
    if (!q) return nullptr;
    // An escaped quote is preceded by an odd number of backslashes.
    const char* b = q;
    while (b > p + 1 && b[-1] == '\\') --b;
    if (((q - b) & 1) == 0) return q + 1;
    ++q;
  }
}

bool JsonScanner::ReadString(std::string_view* out) {
  SkipWhitespace();
  if (p_ >= end_ || *p_ != '"') return false;
  const char* e = SkipStringFrom(p_);
  if (!e) return false;
  *out = std::string_view(p_ + 1, size_t(e - p_ - 2));
  p_ = e;
  return true;
}

const char* JsonScanner::SkipValue() {
  SkipWhitespace();
  if (p_ >= end_) return nullptr;
  const char* start = p_;
  char c = *p_;
  if (c == '"') {
    const char* e = SkipStringFrom(p_);
    if (!e) return nullptr;
    p_ = e;
    return start;
  }
  if (c != '{' && c != '[') {
    // Scalar: runs to the next delimiter.
    while (p_ < end_ && *p_ != ',' && *p_ != '}' && *p_ != ']' && *p_ != ' ' &&
           *p_ != '\n' && *p_ != '\r' && *p_ != '\t') {
      ++p_;
    }
    return start;
  }
  const char* e = SkipContainerFrom(p_);
  if (!e) return nullptr;
  p_ = e;
  return start;
}

// The quotes, backslashes and brackets of a 64-byte block, one bit a byte.
#if defined(__SSE2__)
namespace {
struct BlockMasks {
  uint64_t quotes = 0, bslash = 0, brackets = 0;
};
inline BlockMasks Masks(const char* q) {
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
  // '[' | 0x20 == '{' and ']' | 0x20 == '}': two compares find all four.
  const __m128i lower = _mm_set1_epi8(0x20);
  const __m128i open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}');
  BlockMasks m;
  for (int i = 0; i < 4; ++i) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * i));
    const __m128i l = _mm_or_si128(v, lower);
    const int shift = 16 * i;
    m.quotes |= uint64_t(uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)))) << shift;
    m.bslash |= uint64_t(uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(v, bslash)))) << shift;
    m.brackets |= uint64_t(uint32_t(_mm_movemask_epi8(
                      _mm_or_si128(_mm_cmpeq_epi8(l, open), _mm_cmpeq_epi8(l, close)))))
                  << shift;
  }
  return m;
}
// Bit i = xor of bits 0..i: set from an opening quote up to its closing one.
inline uint64_t PrefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}
}  // namespace
#endif

// Keeps the string state and the nesting depth over the bytes that matter
// (quotes, backslashes, brackets). 64-byte blocks without a backslash are
// done with bit masks (quotes toggle the string state: a prefix xor marks
// the bytes inside strings; only brackets outside them are visited), which
// is most of a Kineto file; blocks with a backslash go byte by byte.
const char* JsonScanner::SkipContainerFrom(const char* p) {
  size_t depth = 0;
  bool in_string = false;
  const char* skip = nullptr;  // the byte after a backslash inside a string
  auto step = [&](const char* c) -> bool {  // true when the container closes at c
    if (c == skip) return false;
    switch (*c) {
      case '\\': if (in_string) skip = c + 1; break;
      case '"': in_string = !in_string; break;
      case '{': case '[': if (!in_string) ++depth; break;
      case '}': case ']': if (!in_string && --depth == 0) return true; break;
      default: break;
    }
    return false;
  };
  const char* q = p;
#if defined(__SSE2__)
  while (end_ - q >= 64) {
    const BlockMasks m = Masks(q);
    const uint64_t bslash = m.bslash, quotes = m.quotes, brackets = m.brackets;
    if (bslash == 0 && (skip == nullptr || skip < q)) {
      uint64_t inside = PrefixXor(quotes) ^ (in_string ? ~uint64_t(0) : 0);
      for (uint64_t b = brackets & ~inside; b; b &= b - 1) {
        const char* c = q + __builtin_ctzll(b);
        if ((*c | 0x20) == '{') {  // '{' or '['
          ++depth;
        } else if (--depth == 0) {
          return c + 1;
        }
      }
      in_string ^= (__builtin_popcountll(quotes) & 1) != 0;
    } else {
      for (uint64_t b = bslash | quotes | brackets; b; b &= b - 1) {
        const char* c = q + __builtin_ctzll(b);
        if (step(c)) return c + 1;
      }
    }
    q += 64;
  }
#endif
  for (; q < end_; ++q) {
    if (kInteresting.v[static_cast<unsigned char>(*q)] || *q == '\\') {
      if (step(q)) return q + 1;
    }
  }
  return nullptr;
}

}  // namespace moetrace
