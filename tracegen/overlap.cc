#include "tracegen/overlap.h"

#include <cstddef>

namespace moetrace::tracegen {

std::vector<int32_t> AlternateSegments(const std::vector<OverlapOp>& ops, int first) {
  std::vector<int32_t> idx[2];
  for (size_t i = 0; i < ops.size(); ++i) idx[ops[i].chain & 1].push_back(int32_t(i));
  std::vector<int32_t> out;
  out.reserve(ops.size());
  size_t cur[2] = {0, 0};
  int c = first & 1;
  while (cur[0] < idx[0].size() || cur[1] < idx[1].size()) {
    // One segment of chain c: up to and including its next boundary op.
    while (cur[c] < idx[c].size()) {
      int32_t i = idx[c][cur[c]++];
      out.push_back(i);
      if (ops[i].boundary) break;
    }
    c ^= 1;
  }
  return out;
}

}  // namespace moetrace::tracegen
