// AVX2 decoding of packed zigzag varints of one or two bytes (the routing
// records' token counts, routing_parse.cc), for CPUs without AVX-512 VBMI2
// (varint_decode_avx512.h). Each step takes 8 bytes: the values that start
// in them are found from the continuation bits of the bytes before them (a
// value starts after a byte that ends one), so the steps do not wait on
// each other's lengths; a table by those starts gathers each value's two
// bytes into a 16-bit lane (byte shuffle), and the second byte is kept
// only when the first continues. A value starting at the step's last byte
// takes its second byte from the next step's first.
#pragma once

#include <cstddef>
#include <cstdint>

namespace moetrace::native::varint_avx2 {

// True when the CPU has AVX2 and POPCNT and the test cap
// (SetSimdLevelCapForTesting below 1) does not forbid them.
bool Usable();

// As varint_avx512::DecodeShort: decodes the packed zigzag varints at *p (a
// value starts there) into *dst while they are of one or two bytes and 16
// bytes are left to read; stops at a value of three bytes or more, or when
// fewer than 8 slots are left before `dst_end`. Advances *p and *dst past
// what it decoded (every value whole; slots past *dst may be overwritten up
// to dst_end), so the caller's scalar loop continues from there. Call only
// when Usable().
void DecodeShort(const uint8_t** p, const uint8_t* end, int64_t** dst, const int64_t* dst_end);

}  // namespace moetrace::native::varint_avx2
