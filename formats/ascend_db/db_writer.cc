#include "formats/ascend_db/db_writer.h"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace moetrace {
namespace {

class Writer {
 public:
  explicit Writer(const std::string& path) {
    std::remove(path.c_str());
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
        SQLITE_OK) {
      Fail("open");
    }
    Exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN");
  }
  ~Writer() {
    for (auto& [k, s] : stmts_) sqlite3_finalize(s);
    sqlite3_close(db_);
  }
  void Exec(const std::string& sql) {
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) Fail(sql);
  }
  // Inserts one row; `values` are int64 (INT64_MIN = NULL).
  void Insert(const std::string& sql, std::initializer_list<int64_t> values) {
    sqlite3_stmt*& s = stmts_[sql];
    if (!s && sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) Fail(sql);
    int i = 1;
    for (int64_t v : values) {
      if (v == INT64_MIN) sqlite3_bind_null(s, i++);
      else sqlite3_bind_int64(s, i++, v);
    }
    if (sqlite3_step(s) != SQLITE_DONE) Fail(sql);
    sqlite3_reset(s);
  }
  void InsertText(const std::string& sql, int64_t id, const std::string& text) {
    sqlite3_stmt*& s = stmts_[sql];
    if (!s && sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) Fail(sql);
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_text(s, 2, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    if (sqlite3_step(s) != SQLITE_DONE) Fail(sql);
    sqlite3_reset(s);
  }
  int64_t Str(std::string_view s) {
    auto [it, fresh] = strings_.try_emplace(std::string(s), static_cast<int64_t>(strings_.size()));
    return it->second;
  }
  void FlushStrings() {
    for (auto& [s, id] : strings_) InsertText("INSERT INTO STRING_IDS VALUES (?, ?)", id, s);
  }
  [[noreturn]] void Fail(const std::string& what) {
    throw std::runtime_error("WriteAscendDb: " + std::string(sqlite3_errmsg(db_)) + " in " + what);
  }

 private:
  sqlite3* db_ = nullptr;
  std::unordered_map<std::string, sqlite3_stmt*> stmts_;
  std::unordered_map<std::string, int64_t> strings_;
};

constexpr int64_t kNull = INT64_MIN;
constexpr int64_t kNoId = 4294967295;

const char* HcclOpType(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::kAllToAll: return "AllToAll";
    case CollectiveKind::kAllToAllV: return "AllToAllV";
    case CollectiveKind::kAllReduce: return "AllReduce";
    case CollectiveKind::kAllGather: return "AllGather";
    case CollectiveKind::kReduceScatter: return "ReduceScatter";
    case CollectiveKind::kBroadcast: return "Broadcast";
    case CollectiveKind::kReduce: return "Reduce";
    case CollectiveKind::kBarrier: return "Barrier";
    case CollectiveKind::kSend: return "Send";
    case CollectiveKind::kRecv: return "Receive";
    default: return "Other";
  }
}

}  // namespace

void WriteAscendDb(const Rank& rank, int64_t device, const std::string& path) {
  Writer w(path);
  w.Exec(
      "CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);"
      "CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER,"
      " globalTaskId INTEGER PRIMARY KEY, globalPid INTEGER, taskType INTEGER, contextId INTEGER,"
      " streamId INTEGER, taskId INTEGER, modelId INTEGER);"
      "CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER PRIMARY KEY,"
      " blockDim INTEGER, mixBlockDim INTEGER, taskType INTEGER, opType INTEGER,"
      " inputFormats INTEGER, inputDataTypes INTEGER, inputShapes INTEGER, outputFormats INTEGER,"
      " outputDataTypes INTEGER, outputShapes INTEGER, attrInfo INTEGER);"
      "CREATE TABLE COMMUNICATION_TASK_INFO (name INTEGER, globalTaskId INTEGER PRIMARY KEY,"
      " taskType INTEGER, planeId INTEGER, groupName INTEGER, notifyId INTEGER, rdmaType INTEGER,"
      " srcRank INTEGER, dstRank INTEGER, transportType INTEGER, size INTEGER, dataType INTEGER,"
      " linkType INTEGER, opId INTEGER);"
      "CREATE TABLE COMMUNICATION_OP (opName INTEGER, startNs INTEGER, endNs INTEGER,"
      " connectionId INTEGER, groupName INTEGER, opId INTEGER PRIMARY KEY, relay INTEGER,"
      " retry INTEGER, dataType INTEGER, algType INTEGER, count NUMERIC, opType INTEGER);"
      "CREATE TABLE ENUM_HCCL_DATA_TYPE (id INTEGER PRIMARY KEY, name TEXT);"
      "INSERT INTO ENUM_HCCL_DATA_TYPE VALUES (0,'INT8'),(1,'INT16'),(2,'INT32'),(3,'FP16'),"
      " (4,'FP32'),(5,'INT64'),(6,'UINT64'),(7,'UINT8'),(8,'UINT16'),(9,'UINT32'),(10,'FP64'),"
      " (11,'BFP16'),(12,'INT128');"
      "CREATE TABLE ENUM_API_TYPE (id INTEGER PRIMARY KEY, name TEXT);"
      "INSERT INTO ENUM_API_TYPE VALUES (20000,'acl'),(15000,'model'),(10000,'node'),"
      " (5500,'communication'),(5000,'runtime'),(50001,'op'),(50002,'queue'),(50003,'trace'),"
      " (50004,'mstx');"
      "CREATE TABLE CANN_API (startNs INTEGER, endNs INTEGER, type INTEGER, globalTid INTEGER,"
      " connectionId INTEGER, name INTEGER);"
      "CREATE TABLE PYTORCH_API (startNs INTEGER, endNs INTEGER, globalTid INTEGER,"
      " connectionId INTEGER, name INTEGER, sequenceNumber INTEGER, fwdThreadId INTEGER,"
      " inputDtypes INTEGER, inputShapes INTEGER, callchainId INTEGER, type INTEGER);"
      "CREATE TABLE CONNECTION_IDS (id INTEGER, connectionId INTEGER);"
      "CREATE TABLE MSTX_EVENTS (startNs INTEGER, endNs INTEGER, eventType INTEGER,"
      " rangeId INTEGER, category INTEGER, message INTEGER, globalTid INTEGER,"
      " endGlobalTid INTEGER, domainId INTEGER, connectionId INTEGER);"
      "CREATE TABLE MEMORY_RECORD (component INTEGER, timestamp INTEGER, totalAllocated INTEGER,"
      " totalReserved INTEGER, totalActive INTEGER, streamPtr INTEGER, deviceId INTEGER);"
      "CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER);"
      "CREATE TABLE NPU_INFO (id INTEGER, name TEXT);"
      "CREATE TABLE META_DATA (name TEXT, value TEXT);");
  w.Insert("INSERT INTO RANK_DEVICE_MAP VALUES (?, ?)", {rank.rank, device});
  w.Exec("INSERT INTO NPU_INFO VALUES (" + std::to_string(device) + ", 'Ascend910B');"
         "INSERT INTO META_DATA VALUES ('writer', 'moetrace WriteAscendDb')");
  int64_t task_id = 0, op_id = 0, link_id = 0;
  const int64_t acl = 20000, op_type = 50001;
  for (const Track& t : rank.tracks) {
    const EventTable& ev = t.events;
    if (t.kind == TrackKind::kDeviceStream && t.native_id >= 0) {
      for (size_t i = 0; i < ev.size(); ++i) {
        int64_t id = task_id++;
        int64_t name = w.Str(rank.strings.Get(ev.name[i]));
        int64_t conn = ev.correlation[i] >= 0 ? ev.correlation[i] : kNoId;
        Category c = ev.category[i];
        int64_t type = c == Category::kCompute ? w.Str("KERNEL_AIVEC") : name;
        w.Insert("INSERT INTO TASK VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                 {ev.ts[i], ev.End(i), device, conn, id, 0, type, kNoId, t.native_id, id, kNoId});
        if (c == Category::kCompute) {
          w.Insert("INSERT INTO COMPUTE_TASK_INFO (name, globalTaskId, taskType) VALUES (?,?,?)",
                   {name, id, w.Str("AI_VECTOR_CORE")});
        } else if (c == Category::kCopy || c == Category::kSync) {
          w.Insert("INSERT INTO COMMUNICATION_TASK_INFO (name, globalTaskId, taskType, size)"
                   " VALUES (?,?,?,?)",
                   {w.Str("hcom_plane"), id, name, static_cast<int64_t>(ev.bytes[i])});
        }
      }
    } else if (t.kind == TrackKind::kDeviceStream) {
      for (size_t i = 0; i < ev.size(); ++i) {
        const CommRecord& r = t.comms.at(static_cast<size_t>(ev.comm[i]));
        int64_t id = op_id++;
        w.Insert("INSERT INTO COMMUNICATION_OP VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                 {w.Str(rank.strings.Get(ev.name[i])), ev.ts[i], ev.End(i),
                  ev.correlation[i] >= 0 ? ev.correlation[i] : kNoId,
                  w.Str(rank.strings.Get(r.group)), id, 0, 0, 0, 0,
                  static_cast<int64_t>(r.bytes), w.Str(HcclOpType(r.kind))});
        if (r.peer != kNone) {
          w.Insert("INSERT INTO COMMUNICATION_TASK_INFO (name, globalTaskId, srcRank, dstRank, opId)"
                   " VALUES (?,?,?,?,?)",
                   {w.Str(rank.strings.Get(ev.name[i])), (int64_t{1} << 40) + id, rank.rank,
                    r.peer, id});
        }
      }
    } else if (t.kind == TrackKind::kHostThread) {
      int64_t gtid = (rank.pid << 32) | (t.native_id & 0xffffffff);
      for (size_t i = 0; i < ev.size(); ++i) {
        int64_t name = w.Str(rank.strings.Get(ev.name[i]));
        Category c = ev.category[i];
        bool step = ev.flags[i] & kFlagStepMarker;
        std::string_view n = rank.strings.Get(ev.name[i]);
        if (c == Category::kLaunch || c == Category::kSync) {
          int64_t conn = ev.correlation[i] >= 0 ? ev.correlation[i] : kNull;
          w.Insert("INSERT INTO CANN_API VALUES (?,?,?,?,?,?)",
                   {ev.ts[i], ev.End(i), acl, gtid, conn, name});
        } else if (c == Category::kHostOp || (step && n.substr(0, 13) == "ProfilerStep#")) {
          int64_t link = kNull;
          if (ev.correlation[i] >= 0) {
            link = link_id++;
            w.Insert("INSERT INTO CONNECTION_IDS VALUES (?,?)", {link, ev.correlation[i]});
          }
          w.Insert("INSERT INTO PYTORCH_API (startNs, endNs, globalTid, connectionId, name, type)"
                   " VALUES (?,?,?,?,?,?)",
                   {ev.ts[i], ev.End(i), gtid, link, name, op_type});
        } else {
          bool instant = ev.flags[i] & kFlagInstant;
          w.Insert("INSERT INTO MSTX_EVENTS (startNs, endNs, eventType, rangeId, message,"
                   " globalTid, endGlobalTid, connectionId) VALUES (?,?,?,?,?,?,?,?)",
                   {ev.ts[i], instant ? ev.ts[i] : ev.End(i), instant ? 0 : 2, kNoId, name, gtid,
                    gtid, kNoId});
        }
      }
    }
  }
  // Counters: one MEMORY_RECORD row per sample time of a component.
  std::map<std::string, std::map<TimeNs, std::array<int64_t, 3>>> mem;
  for (const Track& t : rank.tracks) {
    if (t.kind != TrackKind::kCounter) continue;
    std::string name(rank.strings.Get(t.name));
    size_t sp = name.rfind(' ');
    std::string comp = name.substr(0, sp), what = name.substr(sp + 1);
    int m = what == "allocated" ? 0 : what == "reserved" ? 1 : 2;
    for (size_t i = 0; i < t.sample_ts.size(); ++i) {
      auto& row = mem[comp].try_emplace(t.sample_ts[i], std::array<int64_t, 3>{kNull, kNull, kNull})
                      .first->second;
      row[m] = static_cast<int64_t>(t.sample_value[i]);
    }
  }
  for (auto& [comp, rows] : mem) {
    int64_t cid = w.Str(comp);
    for (auto& [ts, v] : rows) {
      w.Insert("INSERT INTO MEMORY_RECORD VALUES (?,?,?,?,?,?,?)",
               {cid, ts, v[0], v[1], v[2], kNull, device});
    }
  }
  w.FlushStrings();
  w.Exec("COMMIT");
}

}  // namespace moetrace
