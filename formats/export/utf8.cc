#include "formats/export/utf8.h"

namespace moetrace {

size_t Utf8SequenceLength(std::string_view s) {
  if (s.empty()) return 0;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  auto cont = [&](size_t i) { return i < n && (p[i] & 0xC0) == 0x80; };
  const unsigned char c = p[0];
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && p[1] < 0xA0) return 0;  // overlong
    if (c == 0xED && p[1] >= 0xA0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && p[1] < 0x90) return 0;  // overlong
    if (c == 0xF4 && p[1] >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;  // 0x80..0xC1 (continuation / overlong lead), 0xF5..0xFF
}

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t len = Utf8SequenceLength(s.substr(i));
    if (len == 0) return false;
    i += len;
  }
  return true;
}

size_t AppendSanitizedUtf8(std::string_view s, std::string* out) {
  size_t i = 0, replaced = 0;
  while (i < s.size()) {
    size_t run = i;
    while (run < s.size() && static_cast<unsigned char>(s[run]) < 0x80) ++run;
    out->append(s.data() + i, run - i);
    i = run;
    if (i >= s.size()) break;
    size_t len = Utf8SequenceLength(s.substr(i));
    if (len == 0) {
      out->append("\xEF\xBF\xBD");
      ++i;
      ++replaced;
    } else {
      out->append(s.data() + i, len);
      i += len;
    }
  }
  return replaced;
}

std::string SanitizedUtf8(std::string_view s) {
  if (IsValidUtf8(s)) return std::string(s);
  std::string out;
  AppendSanitizedUtf8(s, &out);
  return out;
}

}  // namespace moetrace
