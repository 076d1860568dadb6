#include "formats/ascend/ascend_importer.h"

#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "formats/ascend/ascend_csv.h"
#include "formats/ascend/communication_json.h"
#include "formats/ascend/csv_table.h"
#include "formats/decimal.h"
#include "formats/ascend/trace_view.h"
#include "formats/errors.h"
#include "formats/sorted_dir.h"

namespace moetrace {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOutputDir = "ASCEND_PROFILER_OUTPUT";


std::string ReadHead(const fs::path& p, size_t n) {
  std::ifstream in(p, std::ios::binary);
  std::string s(n, '\0');
  in.read(s.data(), static_cast<std::streamsize>(n));
  s.resize(static_cast<size_t>(in.gcount()));
  return s;
}

std::string ReadAllText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) ThrowInputError(p.string(), "", "cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool IsKernelDetailsCsv(const fs::path& p) {
  if (p.extension() != ".csv" || !IsFile(p)) return false;
  std::string head = ReadHead(p, 4096);
  return CsvHeaderHas(head, "Name") && CsvHeaderHas(head, "Start Time(us)") &&
         CsvHeaderHas(head, "Duration(us)") &&
         (CsvHeaderHas(head, "Accelerator Core") || CsvHeaderHas(head, "Task ID") ||
          p.filename().string().rfind("kernel_details", 0) == 0);
}

// A directory holding the profiler's analysed files.
bool IsOutputDir(const fs::path& d) {
  return IsFile(d / "trace_view.json") || IsFile(d / "kernel_details.csv") ||
         IsFile(d / "step_trace_time.csv") || IsFile(d / "operator_memory.csv");
}

// The output directory of a rank directory (itself or its ASCEND_PROFILER_OUTPUT).
bool RankOutputDir(const fs::path& d, fs::path* out) {
  if (IsDir(d / kOutputDir) && IsOutputDir(d / kOutputDir)) {
    *out = d / kOutputDir;
    return true;
  }
  if (IsOutputDir(d)) {
    *out = d;
    return true;
  }
  return false;
}

bool IsClusterDir(const fs::path& d) {
  return IsFile(d / "cluster_step_trace_time.csv") || IsFile(d / "cluster_communication.json");
}

// msprof-analyze writes its folder into the profiling root it analysed.
constexpr const char* kClusterChild = "cluster_analysis_output";

// Finds "rank_id" (or "rank") in a small JSON file, at any depth <= 4.
bool FindRankId(simdjson::dom::element e, int depth, int64_t* rank) {
  if (depth > 4) return false;
  simdjson::dom::object obj;
  if (e.get_object().get(obj) != simdjson::SUCCESS) return false;
  for (auto [k, v] : obj) {
    if (k == "rank_id" || k == "rank") {
      int64_t r = 0;
      std::string_view s;
      if (v.get_int64().get(r) == simdjson::SUCCESS ||
          (v.get_string().get(s) == simdjson::SUCCESS && ParseScaledDecimal(s, 0, &r))) {
        if (r >= 0 && r <= INT32_MAX) {
          *rank = r;
          return true;
        }
      }
    }
  }
  for (auto [k, v] : obj) {
    if (FindRankId(v, depth + 1, rank)) return true;
  }
  return false;
}

// Rank id from profiler_info*.json in `rank_dir` (or its parent when it is
// the output directory), or -1.
int64_t ProfilerInfoRank(const fs::path& rank_dir) {
  for (const fs::path& dir : {rank_dir, rank_dir.parent_path()}) {
    for (const fs::path& f : SortedChildren(dir)) {
      std::string name = f.filename().string();
      if (name.rfind("profiler_info", 0) != 0 || f.extension() != ".json") continue;
      std::string text = ReadAllText(f);
      simdjson::dom::parser parser;
      simdjson::dom::element root;
      int64_t r = -1;
      if (parser.parse(text).get(root) == simdjson::SUCCESS && FindRankId(root, 0, &r)) return r;
      // profiler_info_{rank}.json
      std::string stem = f.stem().string();
      size_t us = stem.rfind('_');
      if (us != std::string::npos && ParseScaledDecimal(stem.substr(us + 1), 0, &r) && r >= 0 &&
          r <= INT32_MAX) {
        return r;
      }
    }
    if (dir.filename() != kOutputDir) break;
  }
  return -1;
}

struct RankInput {
  int32_t rank = 0;
  fs::path output_dir;       // empty for loose CSVs / cluster-only ranks
  fs::path kernel_details;   // a loose kernel_details-like CSV
  OpBytes op_bytes;          // from communication.json: fills CommRecord::bytes
};

class AscendSource : public TraceSource {
 public:
  // `opened`: the trace_view.json of the only rank, imported when opening
  // (its Overlap Analysis figures came from that pass), or null.
  // `figures_with_ranks`: where reads put the Overlap Analysis figures
  // (AscendOpenOptions), or null.
  AscendSource(Metadata md, std::vector<RankInput> ranks, std::unique_ptr<Rank> opened = nullptr,
               std::shared_ptr<RankReference> figures_with_ranks = nullptr)
      : metadata_(std::move(md)),
        ranks_(std::move(ranks)),
        figures_with_ranks_(std::move(figures_with_ranks)),
        opened_(std::move(opened)) {}
  const Metadata& metadata() const override { return metadata_; }
  size_t rank_count() const override { return ranks_.size(); }
  Rank ReadRank(size_t index) const override {
    Rank rank = ReadRankFiles(index);
    // Names with bytes that are not UTF-8 were repaired as interned.
    if (rank.strings.repaired() > 0) rank.AddStat("repaired.utf8", rank.strings.repaired());
    return rank;
  }
  uint64_t RankBytes(size_t index) const override;
  std::string RankPath(size_t index) const override {
    const RankInput& in = ranks_.at(index);
    return (in.kernel_details.empty() ? in.output_dir : in.kernel_details).string();
  }

 private:
  Rank ReadRankFiles(size_t index) const;
  Metadata metadata_;
  std::vector<RankInput> ranks_;
  std::shared_ptr<RankReference> figures_with_ranks_;
  // Handed to the first read of rank 0, then null: later reads import again.
  mutable std::mutex opened_mu_;
  mutable std::unique_ptr<Rank> opened_;
};

uint64_t AscendSource::RankBytes(size_t index) const {
  const RankInput& in = ranks_.at(index);
  std::error_code ec;
  if (!in.kernel_details.empty()) {
    const uintmax_t n = fs::file_size(in.kernel_details, ec);
    return ec ? 0 : n;
  }
  if (in.output_dir.empty()) return 0;
  uint64_t total = 0;  // the output folder's files (one level: what ReadRank reads)
  for (const auto& e : fs::directory_iterator(in.output_dir, ec)) {
    if (e.is_regular_file(ec)) total += e.file_size(ec);
  }
  return total;
}

Rank AscendSource::ReadRankFiles(size_t index) const {
  const RankInput& in = ranks_.at(index);
  Rank rank;
  rank.rank = in.rank;
  if (!in.kernel_details.empty()) {
    ImportKernelDetails(CsvTable::Load(in.kernel_details.string()), true, &rank);
    return rank;
  }
  if (in.output_dir.empty()) {
    rank.AddStat("read.cluster_reference_only", 1);
    return rank;
  }
  const fs::path& d = in.output_dir;
  bool timeline = IsFile(d / "trace_view.json");
  std::unique_ptr<Rank> opened;
  if (timeline && index == 0) {
    std::lock_guard<std::mutex> lock(opened_mu_);
    opened.swap(opened_);
  }
  if (opened) {
    rank = std::move(*opened);
    rank.rank = in.rank;
  } else if (timeline && figures_with_ranks_) {
    std::vector<LabeledValue> overlap;
    ImportTraceViewFile((d / "trace_view.json").string(), &rank, &overlap, in.rank);
    figures_with_ranks_->Put(in.rank, std::move(overlap));
  } else if (timeline) {
    ImportTraceViewFile((d / "trace_view.json").string(), &rank);
  }
  if (IsFile(d / "kernel_details.csv")) {
    ImportKernelDetails(CsvTable::Load((d / "kernel_details.csv").string()), !timeline, &rank);
  }
  bool pta = false;
  if (IsFile(d / "memory_record.csv")) {
    pta = ImportMemoryRecord(CsvTable::Load((d / "memory_record.csv").string()), &rank);
  }
  if (IsFile(d / "operator_memory.csv")) {
    ImportOperatorMemory(CsvTable::Load((d / "operator_memory.csv").string()), !pta, &rank);
  }
  FillCommBytes(in.op_bytes, &rank);
  return rank;
}

void AppendReference(std::vector<LabeledValue> v, Metadata* md) {
  for (auto& x : v) md->reference.push_back(std::move(x));
}

// Assigns rank ids: profiler_info when every rank has one, else the order.
std::string AssignRanks(const std::vector<fs::path>& rank_dirs, std::vector<RankInput>* out) {
  std::vector<int64_t> ids;
  bool all = true;
  for (const fs::path& d : rank_dirs) {
    ids.push_back(ProfilerInfoRank(d));
    if (ids.back() < 0) all = false;
  }
  for (size_t i = 0; i < out->size(); ++i) {
    (*out)[i].rank = all ? static_cast<int32_t>(ids[i]) : static_cast<int32_t>(i);
  }
  if (all) {
    for (size_t i = 0; i < out->size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if ((*out)[i].rank == (*out)[j].rank) {
          ThrowInputError(rank_dirs[i].string(), "",
                          "rank " + std::to_string((*out)[i].rank) +
                              " (from profiler_info) is also claimed by " + rank_dirs[j].string());
        }
      }
    }
    std::vector<size_t> order(out->size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(out->begin(), out->end(),
                     [](const RankInput& a, const RankInput& b) { return a.rank < b.rank; });
    return "profiler_info";
  }
  return out->size() == 1 ? "single" : "directory_order";
}

}  // namespace

std::unique_ptr<TraceSource> OpenAscend(const std::string& path) {
  return OpenAscend(path, AscendOpenOptions());
}

std::unique_ptr<TraceSource> OpenAscend(const std::string& path, const AscendOpenOptions& options) {
  fs::path p(path);
  Metadata md;
  md.source = "ascend";
  md.origin = path;
  md.producer = "torch_npu profiler";
  md.device = "Ascend NPU";
  md.attributes.emplace_back(
      "ascend.routing",
      "GroupedMatmul rows of kernel_details.csv: RoutingRecord per op (layer = ordinal in the "
      "step, ep_size 0); tokens_per_expert = per-group x rows when x is given per group, else "
      "{M} = tokens of this rank's local experts (EP-rank load)");
  std::vector<RankInput> ranks;
  std::vector<fs::path> rank_dirs;
  std::string rule;
  std::vector<std::string> ignored;

  fs::path out_dir;
  if (IsFile(p)) {
    if (p.filename() == "trace_view.json" || p.filename() == "kernel_details.csv") {
      out_dir = p.parent_path();
      ranks.push_back({0, out_dir, {}, {}});
      rank_dirs.push_back(out_dir);
    } else if (IsKernelDetailsCsv(p)) {
      ranks.push_back({0, {}, p, {}});
      rank_dirs.push_back(p.parent_path());
      rule = "single";
    } else if (p.filename() == "cluster_step_trace_time.csv" ||
               p.filename() == "cluster_communication.json") {
      return OpenAscend(p.parent_path().string(), options);
    } else {
      ThrowInputError(path, "", "not Ascend profiler output (expected trace_view.json or a "
                                "kernel_details CSV)");
    }
  } else if (IsDir(p) && RankOutputDir(p, &out_dir)) {
    ranks.push_back({0, out_dir, {}, {}});
    rank_dirs.push_back(p);
  } else if (IsDir(p)) {
    std::vector<fs::path> csvs;
    for (const fs::path& c : SortedChildren(p)) {
      fs::path o;
      if (IsDir(c) && RankOutputDir(c, &o)) {
        ranks.push_back({0, o, {}, {}});
        rank_dirs.push_back(c);
      } else if (IsKernelDetailsCsv(c)) {
        csvs.push_back(c);
      } else {
        ignored.push_back(c.filename().string());
      }
    }
    if (ranks.empty() && !csvs.empty()) {
      for (const fs::path& c : csvs) ranks.push_back({0, {}, c, {}});
      rule = "directory_order";
    } else {
      for (const fs::path& c : csvs) ignored.push_back(c.filename().string());
    }
    if (ranks.empty() && IsClusterDir(p)) {
      std::vector<int32_t> ids;
      if (IsFile(p / "cluster_step_trace_time.csv")) {
        AppendReference(ClusterStepTraceReference(
                            CsvTable::Load((p / "cluster_step_trace_time.csv").string()), &ids),
                        &md);
      }
      if (IsFile(p / "cluster_communication.json")) {
        std::string text = ReadAllText(p / "cluster_communication.json");
        LenientStats odd;  // counted by the analyzer's own read (cluster_output.h)
        auto refs = ReadCommunicationJson(text, (p / "cluster_communication.json").string(), -1,
                                          &odd).reference;
        for (const auto& r : refs) {
          if (std::find(ids.begin(), ids.end(), r.rank) == ids.end()) ids.push_back(r.rank);
        }
        AppendReference(std::move(refs), &md);
      }
      std::sort(ids.begin(), ids.end());
      for (int32_t id : ids) ranks.push_back({id, {}, {}, {}});
      md.attributes.emplace_back("ascend.rank_rule", "cluster_step_trace_time");
      md.attributes.emplace_back("ascend.input", "cluster analysis output (reference figures only)");
      return std::make_unique<AscendSource>(std::move(md), std::move(ranks));
    }
    // A profiling root with only msprof-analyze's folder: its ranks.
    if (ranks.empty() && IsClusterDir(p / kClusterChild)) {
      return OpenAscend((p / kClusterChild).string(), options);
    }
  } else {
    ThrowInputError(path, "", "no such file or directory");
  }
  if (ranks.empty()) {
    ThrowInputError(path, "", "not Ascend profiler output: no ASCEND_PROFILER_OUTPUT, "
                              "trace_view.json or kernel_details CSV found");
  }
  if (rule.empty()) {
    rule = AssignRanks(rank_dirs, &ranks);
  } else {
    for (size_t i = 0; i < ranks.size(); ++i) ranks[i].rank = static_cast<int32_t>(i);
  }
  md.attributes.emplace_back("ascend.rank_rule", rule);
  if (!ignored.empty()) {
    std::string list;
    for (const auto& s : ignored) list += (list.empty() ? "" : ", ") + s;
    md.attributes.emplace_back("ascend.ignored", list);
  }
  // world_size stays 0 (unknown): a folder may hold a sample of the ranks.
  // Reference figures, available before any rank is read. The Overlap
  // Analysis figures need a pass over trace_view.json: with one rank that
  // pass is the rank's import, kept for ReadRank, so the file is parsed
  // once. With several ranks a scan of its own (the imports are left to
  // the readers' threads, and keeping every imported rank until read
  // would hold them all in memory at once), unless the figures may come
  // with the ranks (AscendOpenOptions::figures_with_ranks): then a
  // placeholder where they go, and no scan.
  const bool with_ranks = options.figures_with_ranks != nullptr && ranks.size() > 1;
  std::unique_ptr<Rank> opened;
  for (RankInput& r : ranks) {
    if (r.output_dir.empty()) continue;
    const fs::path& d = r.output_dir;
    if (IsFile(d / "trace_view.json")) {
      const std::string tv = (d / "trace_view.json").string();
      bool scanned = false;
      if (ranks.size() == 1) {
        opened = std::make_unique<Rank>();
        std::vector<LabeledValue> overlap;
        try {
          ImportTraceViewFile(tv, opened.get(), &overlap, r.rank);
          AppendReference(std::move(overlap), &md);
          scanned = true;
        } catch (const InputError&) {
          // A file only the import rejects (more than 2^32 events; JSON
          // errors fail both alike) fails its ReadRank as before, so
          // --skip-bad-ranks can leave it out; the open fails only when
          // the scan rejects it too.
          opened.reset();
        }
      }
      if (with_ranks) {
        md.reference.push_back({r.rank, kNone, std::string(kRankReferenceKey), 0});
      } else if (!scanned) {
        AppendReference(ScanOverlapAnalysisFile(tv, r.rank), &md);
      }
    }
    if (IsFile(d / "step_trace_time.csv")) {
      AppendReference(StepTraceReference(CsvTable::Load((d / "step_trace_time.csv").string()), r.rank),
                      &md);
    }
    if (IsFile(d / "communication.json")) {
      std::string text = ReadAllText(d / "communication.json");
      CommunicationFigures comm =
          ReadCommunicationJson(text, (d / "communication.json").string(), r.rank);
      AppendReference(std::move(comm.reference), &md);
      r.op_bytes = std::move(comm.op_bytes[r.rank]);
    }
  }
  return std::make_unique<AscendSource>(std::move(md), std::move(ranks), std::move(opened),
                                        with_ranks ? options.figures_with_ranks : nullptr);
}

bool LooksLikeAscend(const std::string& path) {
  try {
    fs::path p(path);
    if (IsFile(p)) {
      std::string name = p.filename().string();
      if (name == "trace_view.json" || name == "cluster_step_trace_time.csv" ||
          name == "cluster_communication.json") {
        return true;
      }
      return IsKernelDetailsCsv(p);
    }
    if (!IsDir(p)) return false;
    fs::path o;
    if (RankOutputDir(p, &o) || IsClusterDir(p) || IsClusterDir(p / kClusterChild)) return true;
    for (const fs::path& c : SortedChildren(p)) {
      if ((IsDir(c) && RankOutputDir(c, &o)) || IsKernelDetailsCsv(c)) return true;
    }
  } catch (...) {
  }
  return false;
}

}  // namespace moetrace
