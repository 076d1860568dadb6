// Operator classes a what-if can speed up ("flash attention 1.5x faster"),
// recognised from device op names of Ascend (FlashAttentionScore,
// GroupedMatmul, MatMul), CUDA (flash_fwd_kernel, *gemm*, cutlass) and
// tracegen. Everything else that computes is `vector`.
#pragma once

#include <string_view>

#include "formats/trace.h"

namespace moetrace::replay {

enum class OpClass : uint8_t {
  kFlashAttention = 0, kGroupedMatmul = 1, kMatmul = 2, kVector = 3, kComm = 4, kCopy = 5,
  kAllToAll = 6,  // all-to-all(v) collectives (EP dispatch/combine); else kComm
};
inline constexpr int kOpClassCount = 7;

std::string_view OpClassName(OpClass c);  // "flash_attention", "grouped_matmul", ...
// Accepts the names above and short aliases (fa, flash, gmm, mm, comm, copy, a2a).
bool ParseOpClass(std::string_view name, OpClass* out);
// `kind` is the op's collective kind when it has a CommRecord.
OpClass ClassifyOp(std::string_view name, Category category,
                  CollectiveKind kind = CollectiveKind::kNone);

}  // namespace moetrace::replay
