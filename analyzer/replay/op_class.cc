#include "analyzer/replay/op_class.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace moetrace::replay {
namespace {

bool Contains(const std::string& hay, std::string_view needle) {
  return hay.find(needle) != std::string::npos;
}

}  // namespace

std::string_view OpClassName(OpClass c) {
  static constexpr std::string_view kNames[] = {"flash_attention", "grouped_matmul", "matmul",
                                                "vector",          "comm",           "copy",
                                                "alltoall"};
  return kNames[static_cast<int>(c)];
}

bool ParseOpClass(std::string_view name, OpClass* out) {
  struct Alias { std::string_view name; OpClass c; };
  static constexpr Alias kAliases[] = {
      {"flash_attention", OpClass::kFlashAttention}, {"flash", OpClass::kFlashAttention},
      {"fa", OpClass::kFlashAttention},              {"grouped_matmul", OpClass::kGroupedMatmul},
      {"gmm", OpClass::kGroupedMatmul},              {"matmul", OpClass::kMatmul},
      {"mm", OpClass::kMatmul},                      {"vector", OpClass::kVector},
      {"comm", OpClass::kComm},                      {"copy", OpClass::kCopy},
      {"alltoall", OpClass::kAllToAll},              {"a2a", OpClass::kAllToAll}};
  for (const Alias& a : kAliases) {
    if (a.name == name) {
      *out = a.c;
      return true;
    }
  }
  return false;
}

OpClass ClassifyOp(std::string_view name, Category category, CollectiveKind kind) {
  if (category == Category::kCollective || category == Category::kP2P) {
    if (kind == CollectiveKind::kAllToAll || kind == CollectiveKind::kAllToAllV) {
      return OpClass::kAllToAll;
    }
    return OpClass::kComm;
  }
  if (category == Category::kCopy) return OpClass::kCopy;
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (Contains(n, "flash") || Contains(n, "fmha") || Contains(n, "attention")) {
    return OpClass::kFlashAttention;
  }
  if (Contains(n, "groupedmatmul") || Contains(n, "grouped_matmul") || Contains(n, "grouped_gemm") ||
      Contains(n, "groupgemm")) {
    return OpClass::kGroupedMatmul;
  }
  if (Contains(n, "matmul") || Contains(n, "gemm") || Contains(n, "cutlass") ||
      Contains(n, "xmma") || Contains(n, "aten::mm") || Contains(n, "aten::addmm") ||
      Contains(n, "aten::bmm")) {
    return OpClass::kMatmul;
  }
  return OpClass::kVector;
}

}  // namespace moetrace::replay
