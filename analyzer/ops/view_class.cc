#include "analyzer/ops/view_class.h"

#include "analyzer/replay/op_class.h"

namespace moetrace::ops {
namespace {

constexpr std::string_view kNames[kViewClassCount] = {
    "flash_attention", "grouped_matmul", "matmul",  "vector",     "other", "comm_EP",
    "comm_TP",         "comm_PP",        "comm_DP", "comm_other", "copy"};

}  // namespace

std::string_view ViewClassName(ViewClass c) { return kNames[static_cast<int>(c)]; }

bool ParseViewClass(std::string_view name, ViewClass* out) {
  for (int i = 0; i < kViewClassCount; ++i) {
    if (kNames[i] == name) {
      *out = static_cast<ViewClass>(i);
      return true;
    }
  }
  return false;
}

bool IsCompute(ViewClass c) { return c <= ViewClass::kOtherCompute; }

ViewClass ClassOf(uint8_t group, std::string_view name) {
  if (group == kGroupCopy) return ViewClass::kCopy;
  if (group < kCommClassCount) {
    switch (static_cast<CommClass>(group)) {
      case CommClass::kEP: return ViewClass::kCommEP;
      case CommClass::kTP: return ViewClass::kCommTP;
      case CommClass::kPP: return ViewClass::kCommPP;
      case CommClass::kDP: return ViewClass::kCommDP;
      default: return ViewClass::kCommOther;
    }
  }
  if (name.empty()) return ViewClass::kOtherCompute;
  switch (replay::ClassifyOp(name, Category::kCompute)) {
    case replay::OpClass::kFlashAttention: return ViewClass::kFlashAttention;
    case replay::OpClass::kGroupedMatmul: return ViewClass::kGroupedMatmul;
    case replay::OpClass::kMatmul: return ViewClass::kMatmul;
    default: return ViewClass::kVector;
  }
}

}  // namespace moetrace::ops
