// AVX-512 decoding of PACKED, DELTA and GAP columns (FORMAT.md, "Blocks
// and columns"), eight rows per step: one masked load brings in the rows'
// w-byte offsets, one byte permute (VBMI) spreads them into 64-bit lanes,
// DELTA and GAP take a prefix sum of three lane shifts, and the result is
// stored straight into the caller's column (non-temporal when `stream`).
// The scalar loops of column_codec.cc decode the same data on other CPUs
// and compilers; a test checks that both give the same values and the same
// range verdict for every width, transform and output type.
#pragma once

#include <cstddef>
#include <cstdint>

namespace moetrace::native::avx512_decode {

// True when the CPU has AVX-512 F, BW, VL, DQ and VBMI (and BMI2) and the
// test cap (SetSimdLevelCapForTesting below 3) does not forbid them.
bool Usable();

struct Column {
  const uint8_t* data;  // rows * width bytes, nothing read past them
  uint32_t width;       // 0..8
  uint64_t base;        // `constant`
  const int64_t* dur;   // GAP: the decoded durations of the same rows
  int64_t lo, hi;       // range each value must lie in (when checked)
};

// Decodes `m` rows into out[0, m) (aligned to sizeof(U), as any U array
// is): transform 0 PACKED, 1 DELTA, 2 GAP
// (uint64_t output only); *prev is the DELTA/GAP state of column_codec's
// ColumnReader, updated. With `check`, returns whether a value fell
// outside [lo, hi]; `stream` writes with non-temporal stores.
bool Decode(int transform, bool check, bool stream, const Column& c, size_t m, int64_t* prev,
            uint64_t* out);
bool Decode(int transform, bool check, bool stream, const Column& c, size_t m, int64_t* prev,
            uint32_t* out);
bool Decode(int transform, bool check, bool stream, const Column& c, size_t m, int64_t* prev,
            uint16_t* out);
bool Decode(int transform, bool check, bool stream, const Column& c, size_t m, int64_t* prev,
            uint8_t* out);

}  // namespace moetrace::native::avx512_decode
