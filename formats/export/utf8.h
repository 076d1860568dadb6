// UTF-8 validation for exporters: trace viewers expect valid UTF-8, sources
// (profiler dumps, hostile files) do not guarantee it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace moetrace {

// Length (2..4) of the well-formed multi-byte UTF-8 sequence at the start of
// `s` (whose first byte is >= 0x80), or 0 when it is not one: stray
// continuation bytes, overlong forms, surrogates and code points above
// U+10FFFF are all rejected.
size_t Utf8SequenceLength(std::string_view s);

bool IsValidUtf8(std::string_view s);

// Appends `s` to `out`, each byte that is not part of a well-formed sequence
// replaced by U+FFFD; returns how many were replaced.
size_t AppendSanitizedUtf8(std::string_view s, std::string* out);

// `s` itself when it is valid UTF-8, else a copy sanitized as above: for
// protobuf string fields, which must hold valid UTF-8 to be read back.
std::string SanitizedUtf8(std::string_view s);

}  // namespace moetrace
