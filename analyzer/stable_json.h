// Deterministic JSON from a protobuf message, for `analyze --json`: keys
// sorted alphabetically (fields and map keys), two-space indentation, and
// one number rule -- integers as written, doubles as the shortest decimal
// that reads back to the same double, NaN/inf as null. Unset `optional`
// and unset message fields are omitted; plain scalars are always written.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <google/protobuf/message.h>

namespace moetrace {

std::string ToStableJson(const google::protobuf::Message& message);
// The same document handed to `sink` in pieces of about 1 MiB, in order
// (their concatenation is ToStableJson's string): the 6,144-rank analysis
// is ~100 MB of JSON, which one growing string zeroed, copied and held whole.
void WriteStableJson(const google::protobuf::Message& message,
                     const std::function<void(std::string_view)>& sink);
std::string FormatJsonDouble(double v);

}  // namespace moetrace
