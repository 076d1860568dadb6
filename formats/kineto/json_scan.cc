#include "formats/kineto/json_scan.h"

#include <cstring>

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
  size_t depth = 0;
  const char* p = p_;
  const char* end = end_;
  while (p < end) {
    // Skip uninteresting bytes four at a time.
    while (end - p >= 4 && !kInteresting.v[static_cast<unsigned char>(p[0])] &&
           !kInteresting.v[static_cast<unsigned char>(p[1])] &&
           !kInteresting.v[static_cast<unsigned char>(p[2])] &&
           !kInteresting.v[static_cast<unsigned char>(p[3])]) {
      p += 4;
    }
    if (p >= end) break;
    char ch = *p;
    if (ch == '"') {
      p = SkipStringFrom(p);
      if (!p) return nullptr;
      continue;
    }
    if (ch == '{' || ch == '[') {
      ++depth;
    } else if (ch == '}' || ch == ']') {
      if (--depth == 0) {
        p_ = p + 1;
        return start;
      }
    }
    ++p;
  }
  return nullptr;
}

}  // namespace moetrace
