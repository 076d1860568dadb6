// Which SIMD variant of the native codec runs: the CPU's best, unless a
// test caps it to check that every variant gives the same result.
#pragma once

namespace moetrace::native {

// Levels: 0 the x86-64 baseline, 1 AVX2, 2 AVX-512 (F, VL, BW, DQ),
// 3 AVX-512 with VBMI (the decoder's byte permutes).
// Tests only: caps the variant at `cap` (the CPU's own best stays the
// ceiling); -1 = automatic. Every variant must write the same bytes and
// decode the same values.
void SetSimdLevelCapForTesting(int cap);
// The cap set above, or -1.
int SimdLevelCap();

}  // namespace moetrace::native
