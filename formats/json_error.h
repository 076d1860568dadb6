// The InputError for a simdjson failure while reading a whole document:
// "FILE: byte N: malformed JSON: ...", N where the parser stopped (byte 0
// when it never started).
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>

namespace moetrace {

// "byte N" for an error simdjson finds while indexing the whole text,
// before any iterator moves (iterate() fails): the end of a text that
// stops inside an array or object (however simdjson names it), the quote of
// a string never closed, the first byte that is not UTF-8. "byte 0" for
// any other.
std::string IndexErrorPosition(std::string_view text, simdjson::error_code error);
// Whether `error` is one found only while indexing (the iterator's place,
// if it has one, is then where it started, not where the text is wrong).
inline bool IsIndexError(simdjson::error_code error) {
  return error == simdjson::INCOMPLETE_ARRAY_OR_OBJECT || error == simdjson::UNCLOSED_STRING ||
         error == simdjson::UTF8_ERROR;
}

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
