#include "formats/ascend_db/db_overlap.h"

#include <algorithm>
#include <climits>

#include "formats/ascend_db/db_context.h"

namespace moetrace {

std::vector<LabeledValue> ReadOverlapAnalysis(const SqliteDb& db, int64_t device, int32_t rank,
                                              int64_t* skipped) {
  std::vector<LabeledValue> out;
  const char* T = "OVERLAP_ANALYSIS";
  if (!db.HasTable(T) || !db.HasColumn(T, "startNs") || !db.HasColumn(T, "endNs") ||
      !db.HasColumn(T, "type")) {
    return out;
  }
  std::string sql = "SELECT startNs, endNs, type FROM OVERLAP_ANALYSIS";
  if (device >= 0 && db.HasColumn(T, "deviceId")) sql += " WHERE deviceId = " + std::to_string(device);
  SqliteStmt s(db, sql);
  static constexpr const char* kKeys[] = {"computing", "communication",
                                          "communication_not_overlapped", "free"};
  int64_t ns[4] = {}, count[4] = {};
  int64_t first = INT64_MAX, last = INT64_MIN;
  while (s.Step()) {
    int64_t a = 0, b = 0, type = -1;
    if (!s.Int(0, &a) || !s.Int(1, &b) || !s.Int(2, &type) || type < 0 || type > 3 || b < a ||
        !DbTimesInRange(a, b)) {
      ++*skipped;
      continue;
    }
    ns[type] += b - a;
    ++count[type];
    first = std::min(first, a);
    last = std::max(last, b);
  }
  for (int k = 0; k < 4; ++k) {
    if (count[k] == 0) continue;
    std::string base = std::string("overlap_analysis.") + kKeys[k];
    out.push_back({rank, kNone, base + "_us", static_cast<double>(ns[k]) / 1e3});
    out.push_back({rank, kNone, base + "_segments", static_cast<double>(count[k])});
  }
  if (!out.empty()) {
    out.push_back({rank, kNone, "overlap_analysis.span_us", static_cast<double>(last - first) / 1e3});
  }
  return out;
}

}  // namespace moetrace
