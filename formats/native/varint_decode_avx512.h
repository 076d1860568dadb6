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

// True when the CPU has AVX-512 F, BW, VBMI2 and BMI2 and the test cap
// (SetSimdLevelCapForTesting below 3) does not forbid them.
bool Usable();

// Decodes the packed zigzag varints at *p (a value starts there) into
// *dst while windows of 64 bytes hold values of one or two bytes only:
// stops at the first value of three bytes or more, when fewer than 65
// bytes are left before `end` or fewer than 64 slots before `dst_end`.
// Advances *p and *dst past what it decoded (every value whole), so the
// caller's scalar loop continues from there. Call only when Usable().
void DecodeShort(const uint8_t** p, const uint8_t* end, int64_t** dst, const int64_t* dst_end);

}  // namespace moetrace::native::varint_avx512
