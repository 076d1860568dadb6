#include "formats/json_text.h"

#include <charconv>
#include <cmath>

#include "formats/export/utf8.h"

namespace moetrace {
namespace {

// 1 when the byte can be copied as is.
constexpr bool IsPlain(unsigned char c) {
  return c >= 0x20 && c < 0x7F && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&';
}

void AppendUnicodeEscape(unsigned cp, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  char buf[6] = {'\\', 'u', kHex[(cp >> 12) & 0xF], kHex[(cp >> 8) & 0xF], kHex[(cp >> 4) & 0xF],
                 kHex[cp & 0xF]};
  out->append(buf, 6);
}

}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    size_t run = i;
    while (run < n && IsPlain(static_cast<unsigned char>(s[run]))) ++run;
    out->append(s.data() + i, run - i);
    i = run;
    if (i >= n) break;
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out->append("\\\""); break;
        case '\\': out->append("\\\\"); break;
        case '\n': out->append("\\n"); break;
        case '\r': out->append("\\r"); break;
        case '\t': out->append("\\t"); break;
        case '\b': out->append("\\b"); break;
        case '\f': out->append("\\f"); break;
        default: AppendUnicodeEscape(c, out); break;  // other controls, DEL, < > &
      }
      ++i;
      continue;
    }
    const size_t len = Utf8SequenceLength(s.substr(i));
    if (len == 0) {
      out->append("\\ufffd");
      ++i;
    } else if (len == 3 && c == 0xE2 && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(s[i + 2]) & 0xFE) == 0xA8) {
      AppendUnicodeEscape(0x2028 | (static_cast<unsigned char>(s[i + 2]) & 1), out);
      i += 3;
    } else {
      out->append(s.data() + i, len);
      i += len;
    }
  }
  out->push_back('"');
}

void AppendMicros(int64_t ns, std::string* out) {
  uint64_t mag = ns < 0 ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  if (ns < 0) out->push_back('-');
  AppendUint(mag / 1000, out);
  const unsigned frac = static_cast<unsigned>(mag % 1000);
  char buf[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                 static_cast<char>('0' + frac % 10)};
  out->append(buf, 4);
}

void AppendInt(int64_t v, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

void AppendUint(uint64_t v, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

void AppendDouble(double v, std::string* out) {
  if (!std::isfinite(v)) {
    out->append("null");
    return;
  }
  if (v == std::trunc(v) && std::fabs(v) < 9007199254740992.0) {  // 2^53
    AppendInt(static_cast<int64_t>(v), out);
    return;
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

}  // namespace moetrace
