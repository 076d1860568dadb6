// The operator view's classes (analysis.proto OpClassTime.op_class): the
// compute classes replay speeds up (replay/op_class.h), communication by
// class (EP/TP/PP/DP/other, as comm_by_class), and copy.
#pragma once

#include <cstdint>
#include <string_view>

#include "analyzer/ops/op_record.h"

namespace moetrace::ops {

enum class ViewClass : uint8_t {
  kFlashAttention = 0, kGroupedMatmul, kMatmul, kVector, kOtherCompute,
  kCommEP, kCommTP, kCommPP, kCommDP, kCommOther, kCopy,
};
inline constexpr int kViewClassCount = 11;

// "flash_attention", ..., "other", "comm_EP", ..., "comm_other", "copy".
std::string_view ViewClassName(ViewClass c);
// The class of a name from ViewClassName; false when unknown.
bool ParseViewClass(std::string_view name, ViewClass* out);
bool IsCompute(ViewClass c);
// A device op's class from its group (op_record.h) and name. Compute: by name as
// replay classes it (vector includes permute / unpermute and every other
// named kernel); a compute op without a name is `other`.
ViewClass ClassOf(uint8_t group, std::string_view name);

}  // namespace moetrace::ops
