// ASCII case-insensitive substring test for the importers' name rules (they
// had a file-local copy each, which collide when CI compiles several files
// as one unity translation unit).
#pragma once

#include <cstddef>
#include <string_view>

namespace moetrace {

inline char LowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Run on every device task: candidates are found by their first character
// before the rest is compared.
inline bool ContainsNoCase(std::string_view s, std::string_view p) {
  if (p.empty()) return true;
  if (p.size() > s.size()) return false;
  const char first = LowerAscii(p[0]);
  for (size_t i = 0, last = s.size() - p.size(); i <= last; ++i) {
    if (LowerAscii(s[i]) != first) continue;
    size_t k = 1;
    while (k < p.size() && LowerAscii(s[i + k]) == LowerAscii(p[k])) ++k;
    if (k == p.size()) return true;
  }
  return false;
}

}  // namespace moetrace
