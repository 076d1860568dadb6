#include "formats/ascend_db/db_memory.h"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>

#include "formats/counter_sort.h"

namespace moetrace {

void ReadMemory(DbContext* ctx) {
  Rank* rank = ctx->rank;
  bool pta = false;
  std::vector<size_t> added;
  if (ctx->Table("MEMORY_RECORD")) {
    const char* T = "MEMORY_RECORD";
    SqliteStmt s(ctx->db, "SELECT " + ctx->Col(T, "component") + ", " + ctx->Col(T, "timestamp") +
                              ", " + ctx->Col(T, "totalAllocated") + ", " +
                              ctx->Col(T, "totalReserved") + ", " + ctx->Col(T, "totalActive") +
                              " FROM MEMORY_RECORD" + ctx->DeviceFilter(T));
    std::map<std::string, std::array<int, 3>> tracks;
    static const char* kMeasure[3] = {"allocated", "reserved", "active"};
    int64_t rows = 0, bad = 0;
    while (s.Step()) {
      int64_t comp_id = -1, ts = 0;
      if (!s.Int(1, &ts)) {
        ++bad;
        continue;
      }
      s.Int(0, &comp_id);
      std::string comp(ctx->names.Get(comp_id));
      auto [it, fresh] = tracks.try_emplace(comp, std::array<int, 3>{-1, -1, -1});
      for (int m = 0; m < 3; ++m) {
        double v = 0;
        if (!s.Real(2 + m, &v)) continue;
        if (it->second[m] < 0) {
          CounterKind kind = CounterKind::kOther;
          if (comp == "PTA" && m == 0) kind = CounterKind::kMemAllocated;
          if (comp == "PTA" && m == 1) kind = CounterKind::kMemReserved;
          if (kind != CounterKind::kOther) pta = true;
          it->second[m] = static_cast<int>(rank->tracks.size());
          added.push_back(rank->tracks.size());
          rank->AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, comp + " " + kMeasure[m])
              .counter = kind;
        }
        Track& t = rank->tracks[static_cast<size_t>(it->second[m])];
        t.sample_ts.push_back(ts);
        t.sample_value.push_back(v);
      }
      ++rows;
    }
    ctx->Stat("read.db.MEMORY_RECORD.row", rows);
    ctx->Stat("skipped.db.MEMORY_RECORD.bad_time", bad);
  }
  if (ctx->Table("NPU_OP_MEM")) {
    const char* T = "NPU_OP_MEM";
    SqliteStmt s(ctx->db, "SELECT " + ctx->Col(T, "timestampNs") + ", " +
                              ctx->Col(T, "totalAllocate") + ", " + ctx->Col(T, "totalReserve") +
                              " FROM NPU_OP_MEM" + ctx->DeviceFilter(T));
    size_t a = rank->tracks.size();
    int64_t rows = 0, bad = 0;
    while (s.Step()) {
      int64_t ts = 0;
      double alloc = 0, reserved = 0;
      bool has_a = s.Real(1, &alloc), has_r = s.Real(2, &reserved);
      if (!s.Int(0, &ts) || (!has_a && !has_r)) {
        ++bad;
        continue;
      }
      if (rank->tracks.size() == a) {
        rank->AddTrack(TrackKind::kCounter, TrackRole::kUnspecified,
                       pta ? "operator_memory allocated (secondary)" : "operator_memory allocated")
            .counter = pta ? CounterKind::kOther : CounterKind::kMemAllocated;
        rank->AddTrack(TrackKind::kCounter, TrackRole::kUnspecified,
                       pta ? "operator_memory reserved (secondary)" : "operator_memory reserved")
            .counter = pta ? CounterKind::kOther : CounterKind::kMemReserved;
        added.push_back(a);
        added.push_back(a + 1);
      }
      if (has_a) {
        rank->tracks[a].sample_ts.push_back(ts);
        rank->tracks[a].sample_value.push_back(alloc);
      }
      if (has_r) {
        rank->tracks[a + 1].sample_ts.push_back(ts);
        rank->tracks[a + 1].sample_value.push_back(reserved);
      }
      ++rows;
    }
    ctx->Stat("read.db.NPU_OP_MEM.row", rows);
    ctx->Stat("skipped.db.NPU_OP_MEM.bad_row", bad);
  }
  for (size_t i : added) SortSamplesByTime(rank->tracks[i]);
}

}  // namespace moetrace
