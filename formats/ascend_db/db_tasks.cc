#include "formats/ascend_db/db_tasks.h"

#include <algorithm>
#include <memory>
#include <unordered_map>

#include "formats/ascend/shape_text.h"
#include "formats/ascend/trace_view.h"
#include "formats/contains_no_case.h"

namespace moetrace {
namespace {

// Reads an optional info table in globalTaskId order alongside TASK.
class InfoCursor {
 public:
  InfoCursor(DbContext* ctx, const char* table, const std::string& columns) {
    if (!ctx->Table(table)) return;
    stmt_ = std::make_unique<SqliteStmt>(
        ctx->db, "SELECT " + ctx->Col(table, "globalTaskId") + ", " + columns + " FROM " + table +
                     " ORDER BY 1");
    Next();
  }
  // Advances to `id`; true when the current row is `id`.
  bool Seek(int64_t id) {
    while (valid_ && key_ < id) Next();
    return valid_ && key_ == id;
  }
  const SqliteStmt& row() const { return *stmt_; }
  int64_t bad_keys = 0;

 private:
  void Next() {
    valid_ = false;
    while (stmt_ && stmt_->Step()) {
      if (stmt_->Int(0, &key_)) {
        valid_ = true;
        return;
      }
      ++bad_keys;
    }
  }
  std::unique_ptr<SqliteStmt> stmt_;
  int64_t key_ = 0;
  bool valid_ = false;
};

}  // namespace

void ReadDeviceTasks(DbContext* ctx) {
  if (!ctx->Table("TASK")) return;
  Rank* rank = ctx->rank;
  SqliteStmt task(ctx->db, "SELECT " + ctx->Col("TASK", "startNs") + ", " +
                               ctx->Col("TASK", "endNs") + ", " + ctx->Col("TASK", "streamId") +
                               ", " + ctx->Col("TASK", "taskType") + ", " +
                               ctx->Col("TASK", "connectionId") + ", " +
                               ctx->Col("TASK", "globalTaskId") + " FROM TASK" +
                               ctx->DeviceFilter("TASK") + " ORDER BY 6");
  // inputShapes: an id into STRING_IDS (`"1,2049"`); older exports lack the
  // column, which is no odd value: read as NULL, not counted.
  InfoCursor compute(ctx, "COMPUTE_TASK_INFO",
                     ctx->Col("COMPUTE_TASK_INFO", "name") + ", " +
                         (ctx->db.HasColumn("COMPUTE_TASK_INFO", "inputShapes")
                              ? std::string("\"inputShapes\"")
                              : std::string("NULL")));
  std::unordered_map<int64_t, StringId> shape_ids;  // STRING_IDS id -> the rank's
  constexpr StringId kMissing = UINT32_MAX;          // an id STRING_IDS lacks
  InfoCursor comm(ctx, "COMMUNICATION_TASK_INFO",
                  ctx->Col("COMMUNICATION_TASK_INFO", "taskType") + ", " +
                      ctx->Col("COMMUNICATION_TASK_INFO", "size"));
  TrackMap streams(rank, TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "Stream ");
  int64_t rows = 0, bad_time = 0, neg_dur = 0, no_stream = 0, no_type = 0, no_key = 0;
  int64_t n_compute = 0, n_comm_sub = 0, n_hcom_without_op = 0, n_shapes = 0, shape_missing = 0;
  // Where the export has COMMUNICATION_OP, the profiler's communication is
  // its ops: an hcom task with no op row is left in Free by its Overlap
  // Analysis, and so here (msprof_0.db's last task).
  const bool comm_from_ops = ctx->db.HasTable("COMMUNICATION_OP");
  Event e;
  while (task.Step()) {
    ++rows;
    int64_t start = 0, end = 0, stream = -1, type = -1, conn = -1, key = 0;
    if (!task.Int(0, &start) || !task.Int(1, &end) || !DbTimesInRange(start, end)) {
      ++bad_time;
      continue;
    }
    if (!task.Int(2, &stream)) {
      ++no_stream;
      stream = -1;
    }
    if (!task.Int(3, &type)) ++no_type;
    if (!task.Int(4, &conn) || conn == kDbNoId || conn < 0) conn = -1;
    bool has_key = task.Int(5, &key);
    if (!has_key) ++no_key;
    e = Event{};
    e.ts = start;
    e.dur = end - start;
    if (e.dur < 0) {
      ++neg_dur;
      e.dur = 0;
    }
    e.correlation = conn;
    Track& t = streams[streams.Get(stream)];
    if (has_key && compute.Seek(key)) {
      int64_t name = -1;
      e.name = compute.row().Int(1, &name) ? ctx->names.Intern(name) : ctx->names.Intern(type);
      e.category = Category::kCompute;
      ++n_compute;
      int64_t shape = -1;
      if (compute.row().Int(2, &shape)) {
        auto [it, fresh] = shape_ids.try_emplace(shape, kMissing);
        if (fresh) {
          bool found = false;
          std::string_view text = AscendShapeText(ctx->strings.Get(shape, &found));
          if (found) it->second = text.empty() ? 0 : rank->strings.Intern(text);
        }
        if (it->second == kMissing) {
          ++shape_missing;
        } else {
          e.shape = it->second;
          n_shapes += e.shape != 0;
        }
      }
    } else if (has_key && comm.Seek(key)) {
      int64_t sub = -1, size = 0;
      e.name = comm.row().Int(1, &sub) ? ctx->names.Intern(sub) : ctx->names.Intern(type);
      std::string_view s = rank->strings.Get(e.name);
      e.category = ContainsNoCase(s, "notify") || ContainsNoCase(s, "wait") ||
                           ContainsNoCase(s, "record")
                       ? Category::kSync
                       : Category::kCopy;
      if (comm.row().Int(2, &size) && size > 0) e.bytes = static_cast<uint64_t>(size);
      ++n_comm_sub;
    } else {
      e.name = ctx->names.Intern(type);
      std::string_view s = rank->strings.Get(e.name);
      e.category = ClassifyAscendTask(s, s, "");
      // The profiler counts only COMPUTE_TASK_INFO rows as Computing: a task
      // with no kernel info (EVENT_RECORD, STREAM_SWITCH, ...) is runtime work.
      if (e.category == Category::kCompute) e.category = Category::kSync;
      if (comm_from_ops &&
          (e.category == Category::kCollective || e.category == Category::kP2P)) {
        e.category = Category::kSync;
        ++n_hcom_without_op;
      }
      if (e.category == Category::kCollective || e.category == Category::kP2P) {
        e.comm = static_cast<int32_t>(t.comms.size());
        t.comms.push_back(HcclRecord(s, s, &rank->strings));
      }
    }
    t.events.Append(e);
    if (e.correlation >= 0) ctx->task_connections.push_back(e.correlation);
  }
  for (Track& t : rank->tracks) {
    if (t.kind != TrackKind::kDeviceStream) continue;
    if (!t.events.IsSortedByTime()) t.events.SortByTime();
    bool all_copy = !t.events.empty(), any_comm = false;
    for (Category c : t.events.category) {
      all_copy &= c == Category::kCopy;
      any_comm |= c == Category::kCollective || c == Category::kP2P;
    }
    if (any_comm) t.role = TrackRole::kDeviceComm;
    else if (all_copy) t.role = TrackRole::kDeviceCopy;
  }
  std::sort(ctx->task_connections.begin(), ctx->task_connections.end());
  ctx->task_connections.erase(
      std::unique(ctx->task_connections.begin(), ctx->task_connections.end()),
      ctx->task_connections.end());
  ctx->Stat("read.db.TASK.row", rows - bad_time);
  ctx->Stat("read.db.TASK.compute", n_compute);
  ctx->Stat("read.db.TASK.comm_subtask", n_comm_sub);
  ctx->Stat("read.db.TASK.hcom_without_op", n_hcom_without_op);
  ctx->Stat("read.db.COMPUTE_TASK_INFO.input_shapes", n_shapes);
  ctx->Stat("skipped.db.COMPUTE_TASK_INFO.input_shapes_not_in_string_ids", shape_missing);
  ctx->Stat("skipped.db.TASK.bad_time", bad_time);
  ctx->Stat("coerced.db.TASK.negative_duration", neg_dur);
  ctx->Stat("coerced.db.TASK.no_stream", no_stream);
  ctx->Stat("coerced.db.TASK.no_task_type", no_type);
  ctx->Stat("coerced.db.TASK.no_global_task_id", no_key);
  ctx->Stat("skipped.db.COMPUTE_TASK_INFO.bad_key", compute.bad_keys);
  ctx->Stat("skipped.db.COMMUNICATION_TASK_INFO.bad_key", comm.bad_keys);
}

}  // namespace moetrace
