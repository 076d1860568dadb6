#include "analyzer/id_range.h"

#include <algorithm>

namespace moetrace {

void AddIds(const int64_t* ids, size_t n, IdRange* r) {
  uint64_t lo = r->lo_u;
  int64_t hi = r->hi, present = r->present;
  for (size_t i = 0; i < n; ++i) {
    lo = std::min(lo, static_cast<uint64_t>(ids[i]));
    hi = std::max(hi, ids[i]);
    present += ids[i] >= 0;
  }
  *r = {lo, hi, present};
}

}  // namespace moetrace
