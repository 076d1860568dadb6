// Conversion of the trace-wide Metadata to and from its protobuf message.
#pragma once

#include "formats/proto/mtrace.pb.h"
#include "formats/trace.h"

namespace moetrace::native {

void MetadataToProto(const moetrace::Metadata& in, Metadata* out);
moetrace::Metadata MetadataFromProto(const Metadata& in);

// Doubles are stored as their IEEE-754 bits so that every value (-0.0, NaN
// payloads) round-trips exactly.
uint64_t DoubleBits(double d);
double DoubleFromBits(uint64_t bits);

}  // namespace moetrace::native
