// The range of a host thread's correlation ids, for AnalyzeRank's launch
// table (rank_metrics.cc): the least as unsigned (absent ids are negative,
// so huge unsigned, never the least), the greatest as signed, and how many
// are present (>= 0).
#pragma once

#include <cstddef>
#include <cstdint>

namespace moetrace {

struct IdRange {
  uint64_t lo_u = UINT64_MAX;
  int64_t hi = -1;
  int64_t present = 0;
};

// Folds ids[0, n) into `*r` (so one IdRange spans several threads). Eight
// ids a step with AVX2 when the CPU has it and the SIMD test cap
// (formats/native/simd_level.h) allows level 1: on analyze_bench 371 M ->
// 89 M instructions (callgrind), ~11 -> ~2.6 an id. Else one branch-free
// loop.
void AddIds(const int64_t* ids, size_t n, IdRange* r);

}  // namespace moetrace
