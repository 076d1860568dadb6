#include "formats/ascend_db/ascend_db_importer.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "formats/ascend_db/db_comm.h"
#include "formats/ascend_db/db_context.h"
#include "formats/ascend_db/db_host.h"
#include "formats/ascend_db/db_memory.h"
#include "formats/ascend_db/db_overlap.h"
#include "formats/ascend_db/db_tasks.h"
#include "formats/errors.h"
#include "formats/export/utf8.h"
#include "formats/sorted_dir.h"

namespace moetrace {
namespace {

namespace fs = std::filesystem;

constexpr const char* kProfilerOutputDir = "ASCEND_PROFILER_OUTPUT";
// Tables only msprof / torch_npu exports have (any one identifies the DB).
constexpr const char* kMarkerTables[] = {"TASK", "PYTORCH_API", "CANN_API", "COMPUTE_TASK_INFO",
                                         "COMMUNICATION_OP", "MSTX_EVENTS", "NPU_OP_MEM"};


bool IsProfilerDbName(const std::string& name) {
  bool db = name.size() > 3 && name.compare(name.size() - 3, 3, ".db") == 0;
  return db && (name.rfind("msprof_", 0) == 0 || name.rfind("ascend_pytorch_profiler", 0) == 0);
}

// The profiler DBs directly in `dir` (analysis.db, msprof-analyze's summary,
// is not a timeline and is left out).
std::vector<fs::path> DbFilesIn(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const fs::path& c : SortedChildren(dir)) {
    if (IsProfilerDbName(c.filename().string()) && IsFile(c)) out.push_back(c);
  }
  return out;
}

// DBs of a rank directory: in it, or in its ASCEND_PROFILER_OUTPUT.
std::vector<fs::path> RankDbFiles(const fs::path& d) {
  std::vector<fs::path> v = DbFilesIn(d);
  if (v.empty() && IsDir(d / kProfilerOutputDir)) v = DbFilesIn(d / kProfilerOutputDir);
  return v;
}

bool HasTextOutput(const fs::path& d) {
  for (const fs::path& o : {d, d / kProfilerOutputDir}) {
    if (IsFile(o / "trace_view.json") || IsFile(o / "kernel_details.csv")) return true;
  }
  return false;
}

// Every DB file the path stands for; empty when none. *text_too is set when
// a rank directory also holds the text files (not read).
std::vector<fs::path> FindDbFiles(const fs::path& p, bool* text_too) {
  *text_too = false;
  if (IsFile(p)) return HasSqliteMagic(p.string()) ? std::vector<fs::path>{p} : std::vector<fs::path>{};
  if (!IsDir(p)) return {};
  std::vector<fs::path> v = RankDbFiles(p);
  if (!v.empty()) {
    *text_too = HasTextOutput(p) || HasTextOutput(p.parent_path());
    return v;
  }
  // A parent of rank directories: every rank directory must hold a DB, else
  // the text importer reads the folder as before.
  std::vector<fs::path> all;
  for (const fs::path& c : SortedChildren(p)) {
    if (!IsDir(c)) continue;
    std::vector<fs::path> r = RankDbFiles(c);
    if (r.empty()) {
      if (HasTextOutput(c)) return {};
      continue;
    }
    if (HasTextOutput(c)) *text_too = true;
    all.insert(all.end(), r.begin(), r.end());
  }
  return all;
}

// Rank id from profiler_info*.json beside the DB (rank_id, or the N of
// profiler_info_N.json), else from ascend_pytorch_profiler_N.db; -1 if none.
int64_t FileRank(const fs::path& db) {
  auto digits = [](std::string_view s, int64_t* out) {
    if (s.empty() || s.size() > 9) return false;
    int64_t v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    *out = v;
    return true;
  };
  for (const fs::path& dir : {db.parent_path(), db.parent_path().parent_path()}) {
    for (const fs::path& f : SortedChildren(dir)) {
      std::string name = f.filename().string();
      if (name.rfind("profiler_info", 0) != 0 || f.extension() != ".json") continue;
      std::ifstream in(f, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      std::string text = ss.str();
      size_t k = text.find("\"rank_id\"");
      if (k != std::string::npos) {
        size_t i = text.find(':', k);
        if (i != std::string::npos) {
          ++i;
          while (i < text.size() && (text[i] == ' ' || text[i] == '"')) ++i;
          size_t j = i;
          while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
          int64_t r = -1;
          if (digits(std::string_view(text).substr(i, j - i), &r)) return r;
        }
      }
      std::string stem = f.stem().string();
      int64_t r = -1;
      size_t us = stem.rfind('_');
      if (us != std::string::npos && digits(std::string_view(stem).substr(us + 1), &r)) return r;
    }
    if (dir.filename() != kProfilerOutputDir) break;
  }
  std::string stem = db.stem().string();
  const std::string prefix = "ascend_pytorch_profiler_";
  int64_t r = -1;
  if (stem.rfind(prefix, 0) == 0 && digits(std::string_view(stem).substr(prefix.size()), &r)) return r;
  return -1;
}

void RequireStrings(const SqliteDb& db) {
  if (!db.HasTable("STRING_IDS")) {
    ThrowInputError(db.path(), "", "required table STRING_IDS is missing (not a complete msprof / "
                                   "torch_npu profiler export)");
  }
}

// Devices with rows, by TASK row count (most first).
std::vector<int64_t> Devices(const SqliteDb& db) {
  std::map<int64_t, int64_t> rows;
  for (const char* t : {"TASK", "NPU_OP_MEM", "MEMORY_RECORD", "OVERLAP_ANALYSIS"}) {
    if (!db.HasColumn(t, "deviceId")) continue;
    SqliteStmt s(db, std::string("SELECT deviceId, COUNT(*) FROM \"") + t +
                         "\" WHERE deviceId IS NOT NULL GROUP BY deviceId");
    while (s.Step()) {
      int64_t d = 0, n = 0;
      if (!s.Int(0, &d) || d < 0) continue;
      s.Int(1, &n);
      rows[d] += std::string_view(t) == "TASK" ? n : 0;
    }
  }
  std::vector<std::pair<int64_t, int64_t>> v(rows.begin(), rows.end());
  std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second > b.second; });
  std::vector<int64_t> out;
  for (auto& [d, n] : v) out.push_back(d);
  return out;
}

struct DbRank {
  fs::path file;
  int64_t device = -1;   // -1: no device information
  int64_t filter = -1;   // -1: read every row (the DB has one device)
  bool host = true;      // reads the host tables
  int32_t rank = 0;
};

class AscendDbSource : public TraceSource {
 public:
  AscendDbSource(Metadata md, std::vector<DbRank> ranks)
      : metadata_(std::move(md)), ranks_(std::move(ranks)) {}
  const Metadata& metadata() const override { return metadata_; }
  size_t rank_count() const override { return ranks_.size(); }
  Rank ReadRank(size_t index) const override;

 private:
  Metadata metadata_;
  std::vector<DbRank> ranks_;
};

Rank AscendDbSource::ReadRank(size_t index) const {
  const DbRank& in = ranks_.at(index);
  SqliteDb db(in.file.string());
  RequireStrings(db);
  DbStrings strings(db);
  Rank rank;
  rank.rank = in.rank;
  rank.device_id = in.device >= 0 && in.device < INT32_MAX ? static_cast<int32_t>(in.device) : kNone;
  DbContext ctx(db, strings, &rank);
  ctx.device = in.filter;
  ctx.host = in.host;
  ReadDeviceTasks(&ctx);
  ReadCommunicationOps(&ctx, in.rank);
  if (in.host) {
    ReadHostCalls(&ctx);
    if (db.HasTable("HOST_INFO") && db.HasColumn("HOST_INFO", "hostName")) {
      SqliteStmt s(db, "SELECT hostName FROM HOST_INFO");
      if (s.Step()) rank.host = SanitizedUtf8(s.Text(0));
    }
  }
  ReadMemory(&ctx);
  ctx.Stat("read.db.STRING_IDS.row", static_cast<int64_t>(strings.size()));
  ctx.Stat("skipped.db.STRING_IDS.bad_id", strings.bad_rows());
  ctx.Stat("coerced.db.unknown_string_id", ctx.names.missing());
  // Names with bytes that are not UTF-8 were repaired as interned.
  ctx.Stat("repaired.utf8", rank.strings.repaired());
  return rank;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

std::unique_ptr<TraceSource> OpenAscendDb(const std::string& path) {
  bool text_too = false;
  std::vector<fs::path> files = FindDbFiles(fs::path(path), &text_too);
  if (files.empty()) ThrowInputError(path, "", "no Ascend profiler SQLite export (.db) found");
  Metadata md;
  md.source = "ascend";
  md.origin = path;
  md.producer = "msprof / torch_npu profiler (SQLite export)";
  md.device = "Ascend NPU";
  std::vector<DbRank> ranks;
  std::vector<std::string> rules, names;
  std::vector<std::vector<LabeledValue>> overlap;  // by rank, before ids are final
  std::vector<int64_t> overlap_device;
  for (const fs::path& f : files) {
    SqliteDb db(f.string());
    RequireStrings(db);
    names.push_back(f.filename().string());
    std::string tag = files.size() > 1 ? "ascend.db." + f.filename().string() + "." : "ascend.db.";
    if (db.HasTable("NPU_INFO")) {
      SqliteStmt s(db, "SELECT * FROM NPU_INFO");
      std::vector<std::string> list;
      while (s.Step()) {
        std::string name = SanitizedUtf8(s.Text(1));
        if (!name.empty() && md.device == "Ascend NPU") md.device = name;
        list.push_back(std::string(s.Text(0)) + ":" + name);
      }
      md.attributes.emplace_back(tag + "npu_info", Join(list));
    }
    if (db.HasTable("SESSION_TIME_INFO")) {
      SqliteStmt s(db, "SELECT * FROM SESSION_TIME_INFO");
      std::vector<std::string> cols = db.Columns("SESSION_TIME_INFO");
      if (s.Step()) {
        for (size_t c = 0; c < cols.size() && c < 8; ++c) {
          md.attributes.emplace_back(tag + "session." + cols[c], std::string(s.Text(static_cast<int>(c))));
        }
      }
    }
    if (db.HasTable("META_DATA")) {
      SqliteStmt s(db, "SELECT * FROM META_DATA");
      while (s.Step()) {
        std::string v(s.Text(1).substr(0, 200));
        md.attributes.emplace_back(tag + "meta." + std::string(s.Text(0)), v);
      }
    }
    std::map<int64_t, int64_t> device_rank;  // RANK_DEVICE_MAP
    if (db.HasColumn("RANK_DEVICE_MAP", "rankId") && db.HasColumn("RANK_DEVICE_MAP", "deviceId")) {
      SqliteStmt s(db, "SELECT rankId, deviceId FROM RANK_DEVICE_MAP");
      while (s.Step()) {
        int64_t r = 0, d = 0;
        if (s.Int(0, &r) && s.Int(1, &d) && r >= 0 && r < INT32_MAX) device_rank[d] = r;
      }
    }
    std::vector<int64_t> devices = Devices(db);
    if (devices.empty()) devices.push_back(-1);
    int64_t file_rank = devices.size() == 1 ? FileRank(f) : -1;
    for (size_t i = 0; i < devices.size(); ++i) {
      DbRank r;
      r.file = f;
      r.device = devices[i];
      r.filter = devices.size() > 1 ? devices[i] : -1;
      r.host = i == 0;  // the device with the most tasks has the host's calls
      auto m = device_rank.find(devices[i]);
      if (m != device_rank.end()) {
        r.rank = static_cast<int32_t>(m->second);
        rules.push_back("rank_device_map");
      } else if (file_rank >= 0) {
        r.rank = static_cast<int32_t>(file_rank);
        rules.push_back("profiler_info_or_file_name");
      } else {
        r.rank = devices[i] >= 0 && devices[i] < INT32_MAX ? static_cast<int32_t>(devices[i]) : 0;
        rules.push_back("device_id");
      }
      int64_t skipped = 0;
      overlap.push_back(ReadOverlapAnalysis(db, r.filter, r.rank, &skipped));
      overlap_device.push_back(skipped);
      ranks.push_back(r);
    }
  }
  std::string rule = rules.empty() ? "single" : rules[0];
  for (const auto& x : rules) {
    if (x != rule) rule = "mixed";
  }
  std::set<int32_t> ids;
  for (const DbRank& r : ranks) ids.insert(r.rank);
  if (ids.size() != ranks.size()) {
    // Colliding ids (device ids of several hosts): number the ranks in order.
    for (size_t i = 0; i < ranks.size(); ++i) {
      ranks[i].rank = static_cast<int32_t>(i);
      for (LabeledValue& v : overlap[i]) v.rank = static_cast<int32_t>(i);
    }
    rule = "directory_order";
  }
  std::vector<size_t> order(ranks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ranks[a].rank < ranks[b].rank; });
  std::vector<DbRank> sorted;
  int64_t skipped = 0;
  for (size_t i : order) {
    sorted.push_back(ranks[i]);
    for (LabeledValue& v : overlap[i]) md.reference.push_back(std::move(v));
    skipped += overlap_device[i];
  }
  md.attributes.emplace_back("ascend.input", text_too ? "db (text files also present, not read)" : "db");
  md.attributes.emplace_back("ascend.db.files", Join(names));
  md.attributes.emplace_back("ascend.rank_rule", rule);
  if (skipped > 0) md.attributes.emplace_back("ascend.db.overlap_analysis.skipped_rows", std::to_string(skipped));
  return std::make_unique<AscendDbSource>(std::move(md), std::move(sorted));
}

bool LooksLikeAscendDb(const std::string& path) {
  try {
    bool text_too = false;
    std::vector<fs::path> files = FindDbFiles(fs::path(path), &text_too);
    if (files.empty()) return false;
    if (!IsFile(fs::path(path))) return true;  // found by name in a directory
    try {
      SqliteDb db(path);
      for (const char* t : kMarkerTables) {
        if (db.HasTable(t)) return true;
      }
      return db.HasTable("STRING_IDS");
    } catch (const InputError&) {
      return true;  // SQLite magic but unreadable: let the open report why
    }
  } catch (...) {
  }
  return false;
}

}  // namespace moetrace
