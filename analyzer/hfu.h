// Hardware FLOPs per step of a trace, for cluster.hfu (analyzer/README.md
// "MFU and HFU"): tracegen's "tracegen.hardware_flops_per_step" attribute
// (model FLOPs plus the forward work recompute re-runs). 0 when the trace
// does not carry it or the value is not a positive finite number.
#pragma once

#include "formats/trace.h"

namespace moetrace {

inline constexpr const char* kHardwareFlopsAttribute = "tracegen.hardware_flops_per_step";

double HardwareFlopsPerStep(const Metadata& md);

}  // namespace moetrace
