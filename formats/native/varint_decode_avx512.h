// AVX-512 decoding of packed zigzag varints of one or two bytes: the token
// counts of routing records (routing_parse.cc), 65,536 per rank and 370 M
// on the 718B trace -- more values than its events. The scalar loop takes
// ~1.5 ns a value (its lengths come at random); this one takes a 64-byte
// window at a time: the continuation bits as a mask, the values' first and
// second bytes gathered by two byte compressions (VBMI2), then widened
// eight values per step.
#pragma once

#include <cstddef>
#include <cstdint>

namespace moetrace::native::varint_avx512 {

// True when the CPU has AVX-512 F, BW, VBMI2 and POPCNT and the test cap
// (SetSimdLevelCapForTesting below 3) does not forbid them.
bool Usable();

// Decodes the packed zigzag varints at *p (a value starts there) into
// *dst, 64 bytes at a time (the last window shorter), while they are of
// one or two bytes: stops at the first value of three bytes or more, at
// one that `end` cuts, or where a window holds more values than the slots
// left before `dst_end`. Advances *p and *dst past what it decoded (every
// value whole, nothing written past the values), so the caller's scalar
// loop continues from there. Call only when Usable().
void DecodeShort(const uint8_t** p, const uint8_t* end, int64_t** dst, const int64_t* dst_end);

}  // namespace moetrace::native::varint_avx512
