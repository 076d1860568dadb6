// What the table readers of one rank share: the open database, its strings,
// the rank being filled and which device's rows are its own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "formats/ascend_db/db_strings.h"
#include "formats/ascend_db/sqlite_db.h"
#include "formats/trace.h"

namespace moetrace {

// msprof writes UINT32_MAX for "no value" in id columns (connectionId,
// contextId, modelId, rangeId).
inline constexpr int64_t kDbNoId = 4294967295;

struct DbContext {
  const SqliteDb& db;
  const DbStrings& strings;
  Rank* rank;
  RankStrings names;
  // Rows of this device only (-1: the DB has no device column or one device:
  // every row). Host tables (CANN_API, PYTORCH_API, MSTX_EVENTS) are read
  // only by the rank with `host` set.
  int64_t device = -1;
  bool host = true;
  // Filled by the task reader: connectionId of every device task (sorted),
  // so host calls can tell launches from other calls.
  std::vector<int64_t> task_connections;

  DbContext(const SqliteDb& d, const DbStrings& s, Rank* r)
      : db(d), strings(s), rank(r), names(s, &r->strings) {}

  // Whether `table` exists; when not, counts skipped.db.table_missing.<table>.
  bool Table(std::string_view table);
  // `"column"` when the table has it, else "NULL" (the reader then sees a
  // NULL in every row) and skipped.db.column_missing.<table>.<column> += 1.
  std::string Col(std::string_view table, std::string_view column);
  // " WHERE deviceId = <device>" when rows are filtered by device.
  std::string DeviceFilter(std::string_view table, const char* column = "deviceId");
  void Stat(std::string_view key, int64_t n = 1) {
    if (n != 0) rank->AddStat(key, n);
  }
};

// A row's [start, end] in ns as the trace model bounds an event
// (EventTimesInRange): false, for the caller's bad_time count, when either
// time is past +-2^62 ns or the span exceeds a day. A negative span is the
// caller's to clamp.
inline bool DbTimesInRange(int64_t start, int64_t end) {
  if (start < -kMaxAbsTimeNs || start > kMaxAbsTimeNs || end < -kMaxAbsTimeNs || end > kMaxAbsTimeNs) return false;
  return EventTimesInRange(start, end - start);
}

// A track per native id (stream id, thread), created on first use.
class TrackMap {
 public:
  TrackMap(Rank* rank, TrackKind kind, TrackRole role, std::string prefix)
      : rank_(rank), kind_(kind), role_(role), prefix_(std::move(prefix)) {}
  size_t Get(int64_t native_id);
  Track& operator[](size_t i) { return rank_->tracks[i]; }

 private:
  Rank* rank_;
  TrackKind kind_;
  TrackRole role_;
  std::string prefix_;
  int64_t last_id_ = INT64_MIN;
  size_t last_ = 0;
  std::unordered_map<int64_t, size_t> index_;
};

}  // namespace moetrace
