// A positioned error for JSON read by a parser that gives none (protobuf's
// JsonStringToMessage: the config files, saved analyses): after such a
// parser fails, the text is walked with simdjson to find the first syntax
// error and its byte.
#pragma once

#include <string>
#include <string_view>

namespace moetrace {

// Throws "FILE: byte N: malformed JSON: ..." at the first syntax error of
// `text` (an empty or truncated text, a bad token, content after the
// document); returns when the text is well-formed JSON.
void ThrowIfMalformedJson(const std::string& file, std::string_view text);

}  // namespace moetrace
