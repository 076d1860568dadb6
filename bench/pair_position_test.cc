#include "bench/pair_position.h"

#include <gtest/gtest.h>

namespace moetrace::bench {
namespace {

TEST(PairPosition, WarmupPairCooldownFromOverlapOfDirections) {
  // Layers 3-4 are one virtual stage, 20 the other. Micro-batch 0's
  // forward alone (warmup); micro-batch 1's forward on layers 3-4 overlaps
  // micro-batch 0's backward (a fused pair), its forward on layer 20 runs
  // alone later (warmup: another chunk); micro-batch 1's backward at the
  // end alone (cooldown); the optimizer has no micro-batch.
  std::vector<ChunkOp> ops = {
      {0, 10, 0, false, 3},      // 0: mb 0 fwd, chunk 0
      {10, 12, 0, false, -1},    // 1: mb 0 fwd, no layer -> chunk 0
      {20, 30, 0, true, 4},      // 2: mb 0 bwd, chunk 0
      {25, 28, 1, false, 3},     // 3: mb 1 fwd, chunk 0, inside mb 0's bwd
      {40, 50, 1, false, 20},    // 4: mb 1 fwd, chunk 1
      {60, 70, 1, true, 4},      // 5: mb 1 bwd, chunk 0
      {70, 80, -1, false, -1},   // 6: optimizer
  };
  auto p = ClassifyPairPositions(ops);
  std::vector<PairPos> want = {kPosWarmup, kPosWarmup, kPosPair, kPosPair, kPosWarmup, kPosCooldown, kPosOther};
  EXPECT_EQ(p, want);
}

TEST(PairPosition, TouchingSpansAreNotPaired) {
  // A backward that starts where a forward ends ran after it, not beside it.
  std::vector<ChunkOp> ops = {{0, 10, 0, false, 1}, {10, 20, 0, true, 1}};
  auto p = ClassifyPairPositions(ops);
  EXPECT_EQ(p[0], kPosWarmup);
  EXPECT_EQ(p[1], kPosCooldown);
}

}  // namespace
}  // namespace moetrace::bench
