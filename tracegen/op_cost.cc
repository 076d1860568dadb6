#include "tracegen/op_cost.h"

#include <algorithm>

namespace moetrace::tracegen {

double ComputeOpSeconds(const HardwareConfig& hw, bool opt, Kernel k, double flops, double bytes,
                        double tpe, bool by_class) {
  double eff = 1;
  // Memory-side efficiency: the baseline for every kernel but the
  // permutations, the only memory-bound kernels with a published gain.
  double mem_eff = (opt && by_class) ? hw.eff_vector_opt() : hw.eff_vector();
  switch (k) {
    case Kernel::kMatMul: eff = opt ? hw.eff_matmul_opt() : hw.eff_matmul(); break;
    case Kernel::kFlashFwd: eff = opt ? hw.eff_flash_fwd_opt() : hw.eff_flash_fwd(); break;
    case Kernel::kFlashBwd: eff = opt ? hw.eff_flash_bwd_opt() : hw.eff_flash_bwd(); break;
    case Kernel::kGrouped: {
      // Tiles of the grouped GEMM go idle when an expert has few tokens; the
      // cube-utilisation gain of the MatMul work applies to its tiles too.
      const double half = hw.grouped_gemm_half_tokens();
      eff = hw.eff_grouped_gemm() * (opt ? hw.eff_matmul_opt() / hw.eff_matmul() : 1.0) *
            (half > 0 ? tpe / (tpe + half) : 1.0);
      eff = std::max(eff, 1e-3);
      break;
    }
    case Kernel::kPermute:
      mem_eff = opt ? hw.eff_vector_opt() : hw.eff_vector();
      flops = 0;
      break;
    case Kernel::kVector: flops = 0; break;
  }
  return std::max(flops / (hw.peak_flops() * eff), bytes / (hw.hbm_bandwidth() * mem_eff));
}

}  // namespace moetrace::tracegen
