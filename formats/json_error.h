// The InputError for a simdjson failure while reading a whole document:
// "FILE: byte N: malformed JSON: ...", N where the parser stopped (byte 0
// when it never started).
#pragma once

#include <simdjson.h>

#include <string>

namespace moetrace {

[[noreturn]] void ThrowMalformedJson(const std::string& file, simdjson::ondemand::document& doc,
                                     const simdjson::padded_string& text, bool started,
                                     simdjson::error_code error);

// The field of an object iteration, or the simdjson_error the walkers catch.
inline simdjson::ondemand::field FieldOf(simdjson::simdjson_result<simdjson::ondemand::field> r) {
  simdjson::ondemand::field f;
  if (auto err = std::move(r).get(f)) throw simdjson::simdjson_error(err);
  return f;
}

// How deep the Ascend JSON walkers descend into nested objects.
constexpr int kMaxJsonDepth = 16;

}  // namespace moetrace
