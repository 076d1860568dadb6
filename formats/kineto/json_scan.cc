#include "formats/kineto/json_scan.h"

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

// Walks the bytes that matter (quotes, backslashes, brackets) 16 at a time,
// keeping the string state and the nesting depth.
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
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
  const __m128i ob = _mm_set1_epi8('{'), cb = _mm_set1_epi8('}');
  const __m128i os = _mm_set1_epi8('['), cs = _mm_set1_epi8(']');
  while (end_ - q >= 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    __m128i m = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, ob), _mm_cmpeq_epi8(v, cb)),
                     _mm_or_si128(_mm_cmpeq_epi8(v, os), _mm_cmpeq_epi8(v, cs))));
    unsigned bits = unsigned(_mm_movemask_epi8(m));
    while (bits) {
      const char* c = q + __builtin_ctz(bits);
      bits &= bits - 1;
      if (step(c)) return c + 1;
    }
    q += 16;
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
