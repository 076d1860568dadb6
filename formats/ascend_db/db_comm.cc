#include "formats/ascend_db/db_comm.h"

#include <algorithm>
#include <map>

#include "formats/ascend/trace_view.h"

namespace moetrace {

int HcclTypeBytes(std::string_view n) {
  struct Entry {
    const char* name;
    int bytes;
  };
  static const Entry kSizes[] = {
      {"INT8", 1},   {"UINT8", 1},   {"HIF8", 1},    {"FP8E4M3", 1}, {"FP8E5M2", 1},
      {"INT16", 2},  {"UINT16", 2},  {"FP16", 2},    {"BFP16", 2},   {"BF16", 2},
      {"INT32", 4},  {"UINT32", 4},  {"FP32", 4},    {"INT64", 8},   {"UINT64", 8},
      {"FP64", 8},   {"INT128", 16},
  };
  for (const Entry& e : kSizes) {
    if (n == e.name) return e.bytes;
  }
  return 0;
}

void ReadCommunicationOps(DbContext* ctx, int64_t self_rank) {
  if (!ctx->Table("COMMUNICATION_OP")) return;
  Rank* rank = ctx->rank;
  const SqliteDb& db = ctx->db;
  // Element sizes by data type id.
  std::map<int64_t, int> type_bytes;
  if (ctx->Table("ENUM_HCCL_DATA_TYPE")) {
    SqliteStmt s(db, "SELECT id, name FROM ENUM_HCCL_DATA_TYPE");
    while (s.Step()) {
      int64_t id = 0;
      if (s.Int(0, &id)) type_bytes[id] = HcclTypeBytes(s.Text(1));
    }
  }
  // opId -> (device, peer) from the sub-tasks.
  struct OpInfo {
    int64_t device = -1;
    int32_t peer = kNone;
  };
  std::map<int64_t, OpInfo> ops;
  bool have_sub = db.HasTable("COMMUNICATION_TASK_INFO") && db.HasColumn("COMMUNICATION_TASK_INFO", "opId");
  if (have_sub) {
    bool join = db.HasTable("TASK") && db.HasColumn("TASK", "deviceId");
    std::string sql = "SELECT i.opId, " + std::string(join ? "t.deviceId" : "NULL") + ", " +
                      (db.HasColumn("COMMUNICATION_TASK_INFO", "srcRank") ? "i.srcRank" : "NULL") +
                      ", " +
                      (db.HasColumn("COMMUNICATION_TASK_INFO", "dstRank") ? "i.dstRank" : "NULL") +
                      " FROM COMMUNICATION_TASK_INFO i" +
                      (join ? " LEFT JOIN TASK t ON t.globalTaskId = i.globalTaskId" : "");
    SqliteStmt s(db, sql);
    while (s.Step()) {
      int64_t op = 0, dev = -1, src = -1, dst = -1;
      if (!s.Int(0, &op)) continue;
      OpInfo& info = ops[op];
      if (s.Int(1, &dev)) info.device = dev;
      s.Int(2, &src);
      s.Int(3, &dst);
      // The peer is the end that is not this rank (UINT32_MAX = none).
      for (int64_t r : {dst, src}) {
        if (r >= 0 && r < kDbNoId && r != self_rank && info.peer == kNone) {
          info.peer = static_cast<int32_t>(r);
        }
      }
    }
  }
  const char* T = "COMMUNICATION_OP";
  SqliteStmt s(db, "SELECT " + ctx->Col(T, "opName") + ", " + ctx->Col(T, "startNs") + ", " +
                       ctx->Col(T, "endNs") + ", " + ctx->Col(T, "connectionId") + ", " +
                       ctx->Col(T, "groupName") + ", " + ctx->Col(T, "opId") + ", " +
                       ctx->Col(T, "dataType") + ", " + ctx->Col(T, "count") + ", " +
                       ctx->Col(T, "opType") + " FROM COMMUNICATION_OP ORDER BY 2, 6");
  std::map<StringId, size_t> group_tracks;
  int64_t rows = 0, bad_time = 0, other_device = 0, no_bytes = 0, no_device = 0;
  while (s.Step()) {
    int64_t name = -1, start = 0, end = 0, conn = -1, group = -1, op = -1, dtype = -1, count = -1,
            optype = -1;
    if (!s.Int(1, &start) || !s.Int(2, &end) || !DbTimesInRange(start, end)) {
      ++bad_time;
      continue;
    }
    s.Int(0, &name);
    s.Int(3, &conn);
    s.Int(4, &group);
    bool has_op = s.Int(5, &op);
    s.Int(6, &dtype);
    s.Int(7, &count);
    s.Int(8, &optype);
    OpInfo info;
    if (has_op) {
      auto it = ops.find(op);
      if (it != ops.end()) info = it->second;
    }
    if (ctx->device >= 0) {
      if (info.device < 0) {
        if (!ctx->host) continue;  // the host rank keeps ops of no known device
        ++no_device;
      } else if (info.device != ctx->device) {
        ++other_device;
        continue;
      }
    }
    ++rows;
    StringId gid = ctx->names.Intern(group);
    auto [git, fresh] = group_tracks.try_emplace(gid, rank->tracks.size());
    if (fresh) {
      rank->AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm,
                     "HCCL " + std::string(rank->strings.Get(gid)), -1);
    }
    Track& t = rank->tracks[git->second];
    Event e;
    e.ts = start;
    e.dur = std::max<int64_t>(end - start, 0);
    e.name = ctx->names.Intern(name);
    e.correlation = conn >= 0 && conn != kDbNoId ? conn : -1;
    std::string_view op_name = rank->strings.Get(e.name);
    std::string_view type_name = optype >= 0 ? ctx->names.Get(optype) : std::string_view();
    CommRecord rec = HcclRecord(op_name, op_name, &rank->strings);
    if (!type_name.empty() && HcclKind(type_name) != CollectiveKind::kOther) {
      rec.kind = HcclKind(type_name);  // opType is the op's kind as HCCL names it
    }
    rec.group = gid;
    auto tb = type_bytes.find(dtype);
    if (count >= 0 && tb != type_bytes.end() && tb->second > 0) {
      rec.bytes = static_cast<uint64_t>(count) * static_cast<uint64_t>(tb->second);
    } else {
      ++no_bytes;
    }
    e.bytes = rec.bytes;
    bool p2p = rec.kind == CollectiveKind::kSend || rec.kind == CollectiveKind::kRecv;
    e.category = p2p ? Category::kP2P : Category::kCollective;
    if (p2p) rec.peer = info.peer;
    e.comm = static_cast<int32_t>(t.comms.size());
    t.comms.push_back(rec);
    t.events.Append(e);
    if (e.correlation >= 0) ctx->task_connections.push_back(e.correlation);
  }
  // An HCCL call on the host launches the op: its connectionId links too.
  std::sort(ctx->task_connections.begin(), ctx->task_connections.end());
  ctx->task_connections.erase(
      std::unique(ctx->task_connections.begin(), ctx->task_connections.end()),
      ctx->task_connections.end());
  for (auto& [gid, i] : group_tracks) {
    if (!rank->tracks[i].events.IsSortedByTime()) rank->tracks[i].events.SortByTime();
  }
  ctx->Stat("read.db.COMMUNICATION_OP.row", rows);
  ctx->Stat("skipped.db.COMMUNICATION_OP.bad_time", bad_time);
  ctx->Stat("skipped.db.COMMUNICATION_OP.other_device", other_device);
  ctx->Stat("read.db.COMMUNICATION_OP.no_device", no_device);
  ctx->Stat("coerced.db.COMMUNICATION_OP.unknown_bytes", no_bytes);
}

}  // namespace moetrace
