#include "formats/ascend/cluster_output.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <tuple>

#include "formats/ascend/ascend_csv.h"
#include "formats/decimal.h"
#include "formats/errors.h"
#include "formats/json_error.h"
#include "formats/sorted_dir.h"

namespace moetrace {
namespace {

namespace fs = std::filesystem;
using simdjson::ondemand::json_type;

constexpr const char* kStepTrace = "cluster_step_trace_time.csv";
constexpr const char* kCommunication = "cluster_communication.json";
constexpr const char* kMatrix = "cluster_communication_matrix.json";
constexpr const char* kGroups = "communication_group.json";

bool IsClusterOutput(const fs::path& d) {
  return IsFile(d / kStepTrace) || IsFile(d / kCommunication) || IsFile(d / kMatrix);
}

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) ThrowInputError(p.string(), "", "cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `walk` on the document; malformed JSON -> InputError at its byte.
void ParseJson(const std::string& text_in, const std::string& file,
               const std::function<void(simdjson::ondemand::value)>& walk) {
  simdjson::padded_string text(text_in);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  bool started = false;
  try {
    doc = parser.iterate(text);
    started = true;
    walk(doc.get_value());
  } catch (const simdjson::simdjson_error& e) {
    ThrowMalformedJson(file, doc, text, started, e.error());
  }
}

json_type TypeOf(simdjson::ondemand::value& v, int64_t* skipped) {
  json_type t = json_type::null;
  if (v.type().get(t) == simdjson::SUCCESS) return t;
  ++*skipped;  // NaN, Infinity: Python's json writes them
  return json_type::null;
}

// A numeric field, coercing a number in a string; false (counted) otherwise.
bool LenientNumber(simdjson::ondemand::value v, LenientStats* st, double* out) {
  json_type t = TypeOf(v, &st->skipped);
  if (t == json_type::null) return false;
  if (t == json_type::number && v.get_double().get(*out) == simdjson::SUCCESS &&
      std::isfinite(*out)) {
    return true;
  }
  std::string_view s;
  if (t == json_type::string && v.get_string().get(s) == simdjson::SUCCESS && ParseFiniteDouble(s, out)) {
    ++st->coerced;
    return true;
  }
  ++st->skipped;
  return false;
}

// cluster_communication_matrix.json: {group: {step: {op: {"src-dst": record}}}},
// a record holding "Transport Type", "Transit Size(MB)", "Transit Time(ms)".
class MatrixWalker {
 public:
  explicit MatrixWalker(LenientStats* st) : st_(st) {}

  void Object(simdjson::ondemand::object obj, int depth) {
    std::string transport;
    double size = 0, time = 0;
    bool record = false;
    for (auto fr : obj) {
      simdjson::ondemand::field f = FieldOf(std::move(fr));
      std::string_view key = f.unescaped_key();
      simdjson::ondemand::value v = f.value();
      if (key == "Transport Type") {
        record = true;
        std::string_view s;
        if (TypeOf(v, &st_->skipped) == json_type::string && v.get_string().get(s) == simdjson::SUCCESS) {
          transport = ReferenceKeyPart(s);
        } else {
          ++st_->skipped;
        }
      } else if (key == "Transit Size(MB)") {
        record = true;
        LenientNumber(v, st_, &size);
      } else if (key == "Transit Time(ms)") {
        record = true;
        LenientNumber(v, st_, &time);
      } else if (depth < kMaxJsonDepth && TypeOf(v, &st_->skipped) == json_type::object) {
        path_.emplace_back(key);
        Object(v.get_object(), depth + 1);
        path_.pop_back();
      }
    }
    if (record) Emit(transport, size, time);
  }

  std::vector<MatrixLink> Finish() {
    // msprof-analyze may add its own per-group sums ("Total Op Info"): use
    // them alone when present so that no transfer counts twice.
    auto& use = totals_.empty() ? ops_ : totals_;
    std::vector<MatrixLink> out;
    for (auto& [key, l] : use) out.push_back(l);
    return out;
  }

 private:
  void Emit(const std::string& transport, double size, double time) {
    int64_t src = -1, dst = -1;
    if (path_.size() < 2 || transport.empty()) {
      ++st_->skipped;
      return;
    }
    const std::string& link = path_.back();
    size_t dash = link.find('-');
    if (dash == std::string::npos || !ParseScaledDecimal(link.substr(0, dash), 0, &src) ||
        !ParseScaledDecimal(link.substr(dash + 1), 0, &dst) || src < 0 || dst < 0 ||
        src > INT32_MAX || dst > INT32_MAX) {
      ++st_->skipped;
      return;
    }
    const std::string& op = path_[path_.size() - 2];
    auto& into = op.rfind("Total", 0) == 0 ? totals_ : ops_;
    auto key = std::make_tuple(path_[0], static_cast<int32_t>(src), static_cast<int32_t>(dst), transport);
    MatrixLink& l = into[key];
    l.group = path_[0];
    l.src = static_cast<int32_t>(src);
    l.dst = static_cast<int32_t>(dst);
    l.transport = transport;
    l.size_mb += size;
    l.time_ms += time;
    ++l.ops;
  }

  using Key = std::tuple<std::string, int32_t, int32_t, std::string>;
  LenientStats* st_;
  std::vector<std::string> path_;
  std::map<Key, MatrixLink> ops_, totals_;
};

// communication_group.json: {"collective": [[0, 1], ...], "p2p": [[0, 4], ...]},
// or objects with "global_ranks": [...] (and "pg_name").
class GroupWalker {
 public:
  GroupWalker(LenientStats* st, std::vector<ParallelGroup>* out) : st_(st), out_(out) {}

  void Value(simdjson::ondemand::value v, const std::string& key, int depth) {
    json_type t = TypeOf(v, &st_->skipped);
    if (depth > kMaxJsonDepth) return;
    if (t == json_type::object) {
      std::string pg;
      std::vector<int32_t> global;
      for (auto fr : v.get_object()) {
        simdjson::ondemand::field f = FieldOf(std::move(fr));
        std::string k(f.unescaped_key().value());
        simdjson::ondemand::value fv = f.value();
        if (k == "global_ranks") {
          global = Ranks(fv);
        } else if (k == "pg_name") {
          std::string_view s;
          if (fv.get_string().get(s) == simdjson::SUCCESS) pg = s;
        } else {
          Value(fv, k, depth + 1);
        }
      }
      if (!global.empty()) Add(pg.empty() ? key : pg, std::move(global));
    } else if (t == json_type::array) {
      for (auto er : v.get_array()) {
        simdjson::ondemand::value e = er.value();
        if (TypeOf(e, &st_->skipped) == json_type::array) {
          std::vector<int32_t> r = Ranks(e);
          if (!r.empty()) Add(key, std::move(r));
        } else {
          Value(e, key, depth + 1);
        }
      }
    }
  }

 private:
  std::vector<int32_t> Ranks(simdjson::ondemand::value v) {
    std::vector<int32_t> r;
    if (TypeOf(v, &st_->skipped) != json_type::array) return r;
    for (auto er : v.get_array()) {
      double d = 0;
      if (LenientNumber(er.value(), st_, &d) && d >= 0 && d <= INT32_MAX && d == std::floor(d)) {
        r.push_back(static_cast<int32_t>(d));
      } else {
        ++st_->skipped;
      }
    }
    return r;
  }
  void Add(const std::string& kind, std::vector<int32_t> ranks) {
    std::sort(ranks.begin(), ranks.end());
    std::string name = "(";
    for (size_t i = 0; i < ranks.size(); ++i) name += (i ? ", " : "") + std::to_string(ranks[i]);
    out_->push_back({name + ")", kind, std::move(ranks)});
  }
  LenientStats* st_;
  std::vector<ParallelGroup>* out_;
};

void AddStats(const std::string& file, const LenientStats& st, std::map<std::string, int64_t>* stats) {
  if (st.coerced) (*stats)[file + ".coerced_fields"] += st.coerced;
  if (st.skipped) (*stats)[file + ".skipped_fields"] += st.skipped;
}

}  // namespace

std::vector<MatrixLink> ReadCommunicationMatrix(const std::string& json, const std::string& file,
                                                LenientStats* odd) {
  MatrixWalker w(odd);
  ParseJson(json, file, [&](simdjson::ondemand::value v) {
    if (TypeOf(v, &odd->skipped) == json_type::object) w.Object(v.get_object(), 0);
  });
  return w.Finish();
}

std::vector<ParallelGroup> ReadCommunicationGroups(const std::string& json, const std::string& file,
                                                   LenientStats* odd) {
  std::vector<ParallelGroup> groups;
  GroupWalker w(odd, &groups);
  ParseJson(json, file, [&](simdjson::ondemand::value v) { w.Value(v, "", 0); });
  return groups;
}

std::vector<int32_t> GroupRanks(std::string_view name) {
  std::vector<int32_t> out;
  if (name.size() < 2 || name.front() != '(' || name.back() != ')') return out;
  name = name.substr(1, name.size() - 2);
  while (!name.empty()) {
    size_t comma = name.find(',');
    std::string_view part = name.substr(0, comma);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    int64_t r = 0;
    if (!ParseScaledDecimal(part, 0, &r) || r < 0 || r > INT32_MAX) return {};
    out.push_back(static_cast<int32_t>(r));
    if (comma == std::string_view::npos) break;
    name.remove_prefix(comma + 1);
  }
  return out;
}

std::vector<StepTraceRow> ReadClusterStepTrace(const CsvTable& csv,
                                               std::map<std::string, int64_t>* stats) {
  const std::string prefix = "cluster_step_trace_time.";
  std::vector<StepTraceRow> out;
  int c_step = csv.Find("Step");
  int c_type = csv.Require("Type");
  int c_index = csv.Require("Index");
  for (size_t r = 0; r < csv.row_count(); ++r) {
    StepTraceRow row;
    row.type = std::string(csv.Field(r, c_type));
    row.index = std::string(csv.Field(r, c_index));
    if (row.type == "rank") {
      int64_t id = 0;
      if (!ParseScaledDecimal(csv.Field(r, c_index), 0, &id) || id < 0 || id > INT32_MAX) {
        ++(*stats)[prefix + "skipped_rows"];  // no rank id: nothing to attach it to
        continue;
      }
      row.rank = static_cast<int32_t>(id);
    } else if (row.type != "stage") {
      ++(*stats)[prefix + "skipped_rows"];
      continue;
    }
    if (c_step >= 0 && !csv.IsAbsent(r, c_step)) {
      int64_t s = 0;
      if (ParseScaledDecimal(csv.Field(r, c_step), 0, &s) && s >= 0 && s <= INT32_MAX) {
        row.step = static_cast<int32_t>(s);
      } else {
        ++(*stats)[prefix + "skipped_fields"];
      }
    }
    for (size_t c = 0; c < csv.header().size(); ++c) {
      int ci = static_cast<int>(c);
      if (ci == c_step || ci == c_type || ci == c_index) continue;
      if (csv.IsAbsent(r, ci)) {
        ++(*stats)[prefix + "absent_fields"];
        continue;
      }
      double d = 0;
      if (!ParseFiniteDouble(csv.Field(r, ci), &d)) {
        ++(*stats)[prefix + "skipped_fields"];  // NaN, inf or text
        continue;
      }
      row.figures_us.emplace_back(ReferenceKeyPart(csv.header()[c]), d);
    }
    out.push_back(std::move(row));
  }
  return out;
}

bool FindClusterOutputDir(const std::string& path, std::string* dir) {
  fs::path p(path);
  if (IsFile(p)) {
    const std::string name = p.filename().string();
    if (name != kStepTrace && name != kCommunication && name != kMatrix) return false;
    p = p.parent_path();
  }
  for (const fs::path& d : {p, p / "cluster_analysis_output"}) {
    if (IsClusterOutput(d)) {
      *dir = d.string();
      return true;
    }
  }
  return false;
}

ClusterOutputFiles ReadClusterOutput(const std::string& dir_in) {
  ClusterOutputFiles out;
  out.dir = dir_in;
  const fs::path dir(dir_in);
  if (IsFile(dir / kStepTrace)) {
    out.step_trace = ReadClusterStepTrace(CsvTable::Load((dir / kStepTrace).string()), &out.stats);
  }
  std::set<std::string> group_names;
  if (IsFile(dir / kCommunication)) {
    LenientStats st;
    CommunicationFigures f =
        ReadCommunicationJson(ReadText(dir / kCommunication), (dir / kCommunication).string(), -1, &st);
    out.rank_links = std::move(f.links);
    AddStats("cluster_communication", st, &out.stats);
    for (const auto& [key, l] : out.rank_links) group_names.insert(std::get<0>(key));
  }
  if (IsFile(dir / kMatrix)) {
    LenientStats st;
    out.matrix_links = ReadCommunicationMatrix(ReadText(dir / kMatrix), (dir / kMatrix).string(), &st);
    AddStats("cluster_communication_matrix", st, &out.stats);
    for (const MatrixLink& l : out.matrix_links) group_names.insert(l.group);
  }
  std::vector<ParallelGroup> groups;
  if (IsFile(dir / kGroups)) {
    LenientStats st;
    groups = ReadCommunicationGroups(ReadText(dir / kGroups), (dir / kGroups).string(), &st);
    AddStats("communication_group", st, &out.stats);
  }
  for (const std::string& name : group_names) {
    if (!name.empty()) groups.push_back({name, "communication", GroupRanks(name)});
  }
  // One entry per name; kinds joined ("collective,communication").
  std::sort(groups.begin(), groups.end(), [](const ParallelGroup& a, const ParallelGroup& b) {
    return std::tie(a.name, a.kind) < std::tie(b.name, b.kind);
  });
  for (ParallelGroup& g : groups) {
    if (!out.groups.empty() && out.groups.back().name == g.name) {
      if (out.groups.back().kind != g.kind) out.groups.back().kind += "," + g.kind;
      continue;
    }
    out.groups.push_back(std::move(g));
  }
  return out;
}

}  // namespace moetrace
