// The device time of one compute op: a roofline max(FLOPs / (peak x cube
// efficiency), bytes / (HBM bandwidth x memory efficiency)) whose
// efficiencies depend on the kernel, and, with compute.optimized_kernels, the
// published per-kernel gains applied only where they were measured (see
// tracegen/README.md, "Operator acceleration"):
// - FlashAttention forward +50% / backward +30% and MatMul (and
//   GroupedMatmul) cube utilisation +10% act on the cube-bound term only: a
//   better tiling does not make HBM faster, so a memory-bound GEMM gains
//   nothing;
// - the 3x of "vector ops" was measured on the VectorSort-class kernels, the
//   token permute / unpermute by expert id (MoeInitRouting,
//   MoeFinalizeRouting); norms, SwiGLU, AdamW, cross-entropy keep the
//   baseline.
#pragma once

#include "tracegen/proto/run_config.pb.h"

namespace moetrace::tracegen {

enum class Kernel { kMatMul, kFlashFwd, kFlashBwd, kVector, kPermute, kGrouped };

// Seconds, without the fixed kernel_overhead_ns. `tokens_per_expert` feeds
// the grouped GEMM's tile under-utilisation (grouped_gemm_half_tokens).
// Vector kernels do no cube work: their FLOPs are ignored.
// `by_class`: every op of a class gets its class's gain and every
// memory-bound term eff_vector_opt (compute.kernel_gains "class").
double ComputeOpSeconds(const HardwareConfig& hw, bool optimized, Kernel k, double flops, double bytes,
                        double tokens_per_expert = 0, bool by_class = false);

}  // namespace moetrace::tracegen
