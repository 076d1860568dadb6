// The key of a simdjson on-demand field without copying it: a view of the
// document's bytes when the key holds no escape (nearly always), else the
// unescaped copy in the parser's string buffer. unescaped_key() alone copies
// every key of every event, ~10% of parsing a Kineto trace.
#pragma once

#include <simdjson.h>

#include <string_view>

namespace moetrace {

inline simdjson::error_code FieldKey(simdjson::ondemand::field& f, std::string_view* key) {
  // A validated document has the closing quote in the padded buffer.
  const char* raw = reinterpret_cast<const char*>(f.key().raw());
  size_t n = 0;
  while (raw[n] != '"' && raw[n] != '\\') ++n;
  if (raw[n] == '"') {
    *key = std::string_view(raw, n);
    return simdjson::SUCCESS;
  }
  return f.unescaped_key().get(*key);
}

}  // namespace moetrace
