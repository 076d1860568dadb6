#include "formats/ascend_db/db_host.h"

#include <algorithm>
#include <map>

#include "formats/starts_with.h"

namespace moetrace {
namespace {

bool Linked(const DbContext& ctx, int64_t conn) {
  return conn >= 0 && std::binary_search(ctx.task_connections.begin(),
                                         ctx.task_connections.end(), conn);
}

}  // namespace

int32_t StepOfMarker(std::string_view n) {
  std::string_view rest;
  if (StartsWith(n, "ProfilerStep#")) {
    rest = n.substr(13);
  } else if (n.size() > 5 && (n[0] == 's' || n[0] == 'S') && n.substr(1, 3) == "tep" &&
             (n[4] == ' ' || n[4] == '_' || n[4] == '#')) {
    rest = n.substr(5);
  } else {
    return -1;
  }
  if (rest.empty() || rest.size() > 9) return -1;
  int32_t v = 0;
  for (char c : rest) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

void ReadHostCalls(DbContext* ctx) {
  Rank* rank = ctx->rank;
  TrackMap threads(rank, TrackKind::kHostThread, TrackRole::kHostOther, "Thread ");
  bool pid_set = false;
  auto track_of = [&](int64_t gtid) -> Track& {
    if (!pid_set && gtid > 0) {
      rank->pid = gtid >> 32;
      pid_set = true;
    }
    return threads[threads.Get(gtid & 0xffffffff)];
  };
  std::map<int64_t, std::string> api_types;  // ENUM_API_TYPE
  if (ctx->db.HasTable("ENUM_API_TYPE")) {
    SqliteStmt s(ctx->db, "SELECT id, name FROM ENUM_API_TYPE");
    while (s.Step()) {
      int64_t id = 0;
      if (s.Int(0, &id)) api_types[id] = std::string(s.Text(1));
    }
  }
  int64_t bad_time = 0;
  auto read_times = [&](const SqliteStmt& s, Event* e) {
    int64_t a = 0, b = 0;
    if (!s.Int(0, &a) || !s.Int(1, &b) || !DbTimesInRange(a, b)) {
      ++bad_time;
      return false;
    }
    e->ts = a;
    e->dur = std::max<int64_t>(b - a, 0);
    return true;
  };

  if (ctx->Table("CANN_API")) {
    const char* T = "CANN_API";
    SqliteStmt s(ctx->db, "SELECT " + ctx->Col(T, "startNs") + ", " + ctx->Col(T, "endNs") + ", " +
                              ctx->Col(T, "globalTid") + ", " + ctx->Col(T, "name") + ", " +
                              ctx->Col(T, "connectionId") + " FROM CANN_API");
    int64_t rows = 0, launches = 0;
    while (s.Step()) {
      Event e;
      if (!read_times(s, &e)) continue;
      int64_t gtid = 0, name = -1, conn = -1;
      s.Int(2, &gtid);
      s.Int(3, &name);
      s.Int(4, &conn);
      e.name = ctx->names.Intern(name);
      std::string_view n = rank->strings.Get(e.name);
      if (StartsWith(n, "aclrtSynchronize")) {
        e.category = Category::kSync;
        e.flags = kFlagBlocking;
      } else if (Linked(*ctx, conn)) {
        e.category = Category::kLaunch;
        e.correlation = conn;
        ++launches;
      } else {
        e.category = Category::kHostOp;
      }
      track_of(gtid).events.Append(e);
      ++rows;
    }
    ctx->Stat("read.db.CANN_API.row", rows);
    ctx->Stat("read.db.CANN_API.launch", launches);
  }

  if (ctx->Table("PYTORCH_API")) {
    // CONNECTION_IDS: PYTORCH_API.connectionId -> the connection ids it takes part in.
    std::vector<std::pair<int64_t, int64_t>> links;
    if (ctx->Table("CONNECTION_IDS")) {
      SqliteStmt c(ctx->db, "SELECT id, connectionId FROM CONNECTION_IDS");
      while (c.Step()) {
        int64_t id = 0, conn = 0;
        if (c.Int(0, &id) && c.Int(1, &conn) && Linked(*ctx, conn)) links.emplace_back(id, conn);
      }
      std::sort(links.begin(), links.end());
    }
    const char* T = "PYTORCH_API";
    SqliteStmt s(ctx->db, "SELECT " + ctx->Col(T, "startNs") + ", " + ctx->Col(T, "endNs") + ", " +
                              ctx->Col(T, "globalTid") + ", " + ctx->Col(T, "name") + ", " +
                              ctx->Col(T, "connectionId") + ", " + ctx->Col(T, "type") +
                              " FROM PYTORCH_API");
    int64_t rows = 0;
    while (s.Step()) {
      Event e;
      if (!read_times(s, &e)) continue;
      int64_t gtid = 0, name = -1, conn = -1, type = -1;
      s.Int(2, &gtid);
      s.Int(3, &name);
      s.Int(5, &type);
      e.name = ctx->names.Intern(name);
      if (s.Int(4, &conn)) {
        auto it = std::lower_bound(links.begin(), links.end(), std::make_pair(conn, INT64_MIN));
        if (it != links.end() && it->first == conn) e.correlation = it->second;
      }
      auto t = api_types.find(type);
      std::string_view tn = t == api_types.end() ? std::string_view() : t->second;
      std::string_view n = rank->strings.Get(e.name);
      if (StepOfMarker(n) >= 0 && StartsWith(n, "ProfilerStep#")) {
        e.category = Category::kMarker;
        e.flags = kFlagStepMarker;
      } else if (tn == "queue") {
        e.category = Category::kLaunch;
      } else if (tn == "mstx") {
        e.category = Category::kMarker;
      } else {
        e.category = Category::kHostOp;
      }
      Track& tr = track_of(gtid);
      tr.role = TrackRole::kHostMain;
      tr.events.Append(e);
      ++rows;
    }
    ctx->Stat("read.db.PYTORCH_API.row", rows);
  }

  if (ctx->Table("MSTX_EVENTS")) {
    const char* T = "MSTX_EVENTS";
    SqliteStmt s(ctx->db, "SELECT " + ctx->Col(T, "startNs") + ", " + ctx->Col(T, "endNs") + ", " +
                              ctx->Col(T, "globalTid") + ", " + ctx->Col(T, "message") + ", " +
                              ctx->Col(T, "eventType") + " FROM MSTX_EVENTS");
    int64_t rows = 0, steps = 0;
    while (s.Step()) {
      Event e;
      int64_t a = 0, b = 0, gtid = 0, msg = -1, type = -1;
      if (!s.Int(0, &a)) {
        ++bad_time;
        continue;
      }
      if (!s.Int(1, &b)) b = a;
      if (!DbTimesInRange(a, b)) {
        ++bad_time;
        continue;
      }
      s.Int(2, &gtid);
      s.Int(3, &msg);
      s.Int(4, &type);
      e.ts = a;
      e.dur = std::max<int64_t>(b - a, 0);
      e.category = Category::kMarker;
      e.name = ctx->names.Intern(msg);
      if (type == 0 || type == 3) {
        e.flags = kFlagInstant;
        e.dur = 0;
      } else if (StepOfMarker(rank->strings.Get(e.name)) >= 0) {
        e.flags = kFlagStepMarker;
        ++steps;
      }
      track_of(gtid).events.Append(e);
      ++rows;
    }
    ctx->Stat("read.db.MSTX_EVENTS.row", rows);
    ctx->Stat("read.db.MSTX_EVENTS.step", steps);
  }
  ctx->Stat("skipped.db.host.bad_time", bad_time);

  // Step windows, then steps of host events and of the device ops they launch.
  std::vector<std::pair<TimeNs, std::pair<TimeNs, int32_t>>> windows;
  for (Track& t : rank->tracks) {
    if (t.kind != TrackKind::kHostThread) continue;
    if (!t.events.IsSortedByTime()) t.events.SortByTime();
    for (size_t i = 0; i < t.events.size(); ++i) {
      if (t.events.flags[i] & kFlagStepMarker) {
        int32_t n = StepOfMarker(rank->strings.Get(t.events.name[i]));
        windows.push_back({t.events.ts[i], {t.events.End(i), n}});
      }
    }
  }
  if (windows.empty()) return;
  std::sort(windows.begin(), windows.end());
  std::map<int64_t, int32_t> launch_step;
  for (Track& t : rank->tracks) {
    if (t.kind != TrackKind::kHostThread) continue;
    for (size_t i = 0; i < t.events.size(); ++i) {
      TimeNs ts = t.events.ts[i];
      // The latest window starting at or before ts, when it still holds ts
      // (a zero-length marker holds its own start).
      auto it = std::upper_bound(windows.begin(), windows.end(), ts,
                                 [](TimeNs v, const auto& w) { return v < w.first; });
      if (it != windows.begin()) {
        --it;
        if (ts < it->second.first || ts == it->first) t.events.step[i] = it->second.second;
      }
      if (t.events.correlation[i] >= 0 && t.events.step[i] != kNone) {
        launch_step.emplace(t.events.correlation[i], t.events.step[i]);
      }
    }
  }
  for (Track& t : rank->tracks) {
    if (t.kind != TrackKind::kDeviceStream) continue;
    for (size_t i = 0; i < t.events.size(); ++i) {
      auto it = launch_step.find(t.events.correlation[i]);
      if (it != launch_step.end()) t.events.step[i] = it->second;
    }
  }
}

}  // namespace moetrace
