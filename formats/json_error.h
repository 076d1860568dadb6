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

}  // namespace moetrace
