// Deterministic JSON from a protobuf message, for `analyze --json`: keys
// sorted alphabetically (fields and map keys), two-space indentation, and
// one number rule -- integers as written, doubles as the shortest decimal
// that reads back to the same double, NaN/inf as null. Unset `optional`
// and unset message fields are omitted; plain scalars are always written.
#pragma once

#include <string>

#include <google/protobuf/message.h>

namespace moetrace {

std::string ToStableJson(const google::protobuf::Message& message);
std::string FormatJsonDouble(double v);

}  // namespace moetrace
