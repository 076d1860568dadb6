#include "tracegen/op_cost.h"

#include <gtest/gtest.h>

namespace moetrace::tracegen {
namespace {

// Round figures so every time below is worked by hand.
HardwareConfig Hw() {
  HardwareConfig h;
  h.set_peak_flops(1e12);
  h.set_hbm_bandwidth(1e9);
  h.set_eff_vector(0.25);
  h.set_eff_vector_opt(0.75);  // 3x
  h.set_eff_matmul(0.5);
  h.set_eff_matmul_opt(0.55);  // +10%
  h.set_eff_flash_fwd(0.4);
  h.set_eff_flash_fwd_opt(0.6);  // +50%
  h.set_eff_flash_bwd(0.5);
  h.set_eff_flash_bwd_opt(0.65);  // +30%
  h.set_eff_grouped_gemm(0.5);
  h.set_grouped_gemm_half_tokens(100);
  return h;
}

TEST(OpCost, VectorGainOnlyOnTheTokenPermutations) {
  const HardwareConfig h = Hw();
  // 3e8 bytes at 1e9 x 0.25 = 1.2 s; the permutation at 0.75 = 0.4 s.
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, false, Kernel::kPermute, 0, 3e8), 1.2);
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, true, Kernel::kPermute, 0, 3e8), 0.4);
  // A norm, SwiGLU or AdamW of the same bytes keeps the baseline.
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, true, Kernel::kVector, 0, 3e8), 1.2);
  // Vector kernels do no cube work.
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, true, Kernel::kVector, 1e15, 3e8), 1.2);
}

TEST(OpCost, CubeGainsOnlyOnTheCubeBoundTerm) {
  const HardwareConfig h = Hw();
  // Compute-bound MatMul: 1.1e12 / (1e12 x 0.5) = 2.2 s -> / 0.55 = 2.0 s.
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, false, Kernel::kMatMul, 1.1e12, 1e6), 2.2);
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, true, Kernel::kMatMul, 1.1e12, 1e6), 2.0);
  // Memory-bound MatMul (1e9 bytes: 4 s at the baseline 0.25 of HBM): no
  // gain (by class it got the vector 3x: 1.33 s).
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, false, Kernel::kMatMul, 1e9, 1e9), 4.0);
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, true, Kernel::kMatMul, 1e9, 1e9), 4.0);
  // FlashAttention forward 1.2e12 FLOPs: 3.0 s -> 2.0 s (+50%); backward
  // 1.3e12: 2.6 s -> 2.0 s (+30%).
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, false, Kernel::kFlashFwd, 1.2e12, 1e6), 3.0);
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, true, Kernel::kFlashFwd, 1.2e12, 1e6), 2.0);
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, false, Kernel::kFlashBwd, 1.3e12, 1e6), 2.6);
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, true, Kernel::kFlashBwd, 1.3e12, 1e6), 2.0);
  // Grouped GEMM at 100 tokens per expert (half its tiles idle): efficiency
  // 0.5 x 0.5 = 0.25 -> 4.4 s; with the MatMul gain 0.275 -> 4.0 s.
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, false, Kernel::kGrouped, 1.1e12, 1e6, 100), 4.4);
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, true, Kernel::kGrouped, 1.1e12, 1e6, 100), 4.0);
}

// compute.kernel_gains "class" (before issue #17, kept by the tiny presets):
// every memory-bound term gets eff_vector_opt, every vector op the 3x.
TEST(OpCost, ByClassIsTheOldCalibration) {
  const HardwareConfig h = Hw();
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, true, Kernel::kVector, 0, 3e8, 0, true), 0.4);
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, true, Kernel::kPermute, 0, 3e8, 0, true), 0.4);
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, true, Kernel::kMatMul, 1e9, 1e9, 0, true), 4.0 / 3);
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, true, Kernel::kFlashFwd, 1.2e12, 1e6, 0, true), 2.0);
  // Without the accelerated kernels both modes are the baseline.
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, false, Kernel::kVector, 0, 3e8, 0, true), 1.2);
  EXPECT_DOUBLE_EQ(ComputeOpSeconds(h, false, Kernel::kMatMul, 1e9, 1e9, 0, true), 4.0);
}

}  // namespace
}  // namespace moetrace::tracegen
