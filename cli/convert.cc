// moetrace convert INPUT... -o OUT   (OUT type from its extension)
// moetrace convert INPUT... -o DIR/  (one Kineto JSON file per rank)
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include <unistd.h>

#include "cli/commands.h"
#include "cli/processes.h"
#include "cli/progress.h"
#include "formats/chrome/chrome_json_writer.h"
#include "formats/errors.h"
#include "formats/open_trace.h"
#include "formats/ordered_ranks.h"
#include "formats/output_paths.h"
#include "formats/trace_selection.h"

namespace moetrace::cli {
namespace {

struct ConvertOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::string ranks, steps, window;
  int threads = 0;
};

// -o DIR/ (or an existing directory): what Kineto, HTA and Perfetto expect of
// a multi-rank run, a file per rank named by its id. Each file appears whole
// (written under a temporary name and renamed); the directory is created.
bool IsRankDirectory(const std::string& output) {
  return output.ends_with('/') || std::filesystem::is_directory(output);
}

// The labelled figures of each rank, so that a rank's file carries its own
// (figures with rank < 0 describe the whole run and go to every file).
struct LabelsByRank {
  explicit LabelsByRank(const Metadata& metadata) : base(metadata) {
    base.ground_truth.clear();
    base.reference.clear();
    for (const LabeledValue& l : metadata.ground_truth) ground_truth[l.rank].push_back(l);
    for (const LabeledValue& l : metadata.reference) reference[l.rank].push_back(l);
  }
  Metadata For(int32_t rank) const {
    Metadata m = base;
    for (int32_t r : {int32_t(-1), rank}) {
      if (auto it = ground_truth.find(r); it != ground_truth.end())
        m.ground_truth.insert(m.ground_truth.end(), it->second.begin(), it->second.end());
      if (auto it = reference.find(r); it != reference.end())
        m.reference.insert(m.reference.end(), it->second.begin(), it->second.end());
    }
    return m;
  }
  Metadata base;
  std::map<int32_t, std::vector<LabeledValue>> ground_truth, reference;
};

// -o DIR/: the rank files are written into a hidden directory inside DIR
// and moved into DIR once every rank is written, so a failed conversion
// leaves no partial set (which would read back as a smaller run), and DIR
// itself is removed again when this run created it.
struct RankDirectoryStaging {
  std::string dir;
  std::filesystem::path path;
  bool created = false, committed = false;
  void Open(int pid) {
    path = std::filesystem::path(dir) / fmt::format(".moetrace-convert-{}", pid);
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
    std::filesystem::create_directory(path, ec);
    if (ec) ThrowInputError(dir, "", "cannot create " + path.string() + ": " + ec.message());
  }
  void Commit() {
    if (path.empty()) return;
    for (const auto& entry : std::filesystem::directory_iterator(path)) {
      std::error_code ec;
      std::filesystem::rename(entry.path(), std::filesystem::path(dir) / entry.path().filename(), ec);
      if (ec) ThrowInputError(dir, "", "cannot move " + entry.path().string() + " into it: " + ec.message());
    }
    committed = true;
  }
  ~RankDirectoryStaging() {
    if (path.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
    if (!committed && created) std::filesystem::remove(dir, ec);  // only when empty
  }
};

// Events only: a cut keeps each counter's sample in force at its start even
// when it keeps nothing else.
uint64_t EventCount(const Rank& rank) {
  uint64_t n = 0;
  for (const Track& t : rank.tracks) n += t.events.size();
  return n;
}

void WriteRankFile(const std::string& dir, const Rank& rank, const LabelsByRank& labels) {
  std::unique_ptr<TraceSink> sink = CreateChromeJsonSink(
      (std::filesystem::path(dir) / fmt::format("rank-{}.json", rank.rank)).string());
  sink->AddRank(rank);
  sink->Finish(labels.For(rank.rank));
}

int RunConvert(const ConvertOptions& o) {
  TraceSelection selection;
  if (!o.ranks.empty()) selection.ranks = ParseIdList(o.ranks, "--ranks");
  if (!o.steps.empty()) selection.steps = ParseIdList(o.steps, "--steps");
  if (!o.window.empty()) ParseWindow(o.window, &selection);
  const size_t threads =
      o.threads > 0 ? size_t(o.threads) : std::max(1u, std::thread::hardware_concurrency());
  const bool per_rank = IsRankDirectory(o.output);
  std::unique_ptr<TraceSink> sink;
  RankDirectoryStaging staging;
  if (per_rank) {
    std::error_code ec;
    staging.created = !std::filesystem::exists(o.output, ec);
    std::filesystem::create_directories(o.output, ec);
    if (ec) ThrowInputError(o.output, "", "cannot create the directory: " + ec.message());
    staging.dir = o.output;
    // Another conversion's files would be read as ranks of this one.
    for (const auto& entry : std::filesystem::directory_iterator(o.output)) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with("rank-") && name.ends_with(".json")) {
        ThrowInputError(o.output, "", "already holds " + name +
                                          ": a Kineto set is every file of its directory; use an "
                                          "empty directory");
      }
    }
    staging.Open(getpid());
  } else {
    sink = CreateSink(o.output);
  }
  // One rank per id in the output, as in any trace (the same input given
  // twice would be analysed as twice the ranks).
  std::set<int32_t> written;
  auto once = [&](const Rank& rank) {
    if (!written.insert(rank.rank).second) {
      ThrowInputError(o.output, "", fmt::format("rank {} comes twice in the inputs; give each rank once", rank.rank));
    }
  };
  uint64_t events = 0;
  Metadata merged;
  size_t ranks = 0;
  for (size_t k = 0; k < o.inputs.size(); ++k) {
    std::unique_ptr<TraceSource> source = SelectFrom(OpenTrace(o.inputs[k]), selection);
    if (k == 0) merged = source->metadata();
    const LabelsByRank labels(source->metadata());
    Progress progress("converting " + o.inputs[k], source->rank_count());
    // Ranks are read (and cut) on worker threads while this one writes them
    // in order; a native output is also encoded and compressed there.
    if (per_rank) {
      ForEachRankInOrder(*source, threads, 2 * threads, [&](size_t i, const Rank& rank) {
        once(rank);
        WriteRankFile(staging.path.string(), rank, labels);
        events += EventCount(rank);
        progress.Update(i + 1);
      });
    } else {
      WriteRanksInOrder(*source, threads, 2 * threads, *sink, [&](size_t i, const Rank& rank) {
        once(rank);
        events += EventCount(rank);
        progress.Update(i + 1);
      });
    }
    ranks += source->rank_count();
  }
  // A selection that keeps nothing is a mistake (a step the trace does not
  // have, a window outside it), not an empty trace to write.
  const bool window = selection.from_ns != INT64_MIN || selection.to_ns != INT64_MAX;
  if (events == 0 && (!selection.steps.empty() || window)) {
    ThrowInputError(window ? "--window" : "--steps", window ? o.window : o.steps, "selects no event of the input");
  }
  if (sink) sink->Finish(merged);
  staging.Commit();
  fmt::print(stderr, "wrote {} ({} ranks)\n", o.output, ranks);
  return 0;
}

}  // namespace

void AddConvertCommand(CLI::App& app) {
  auto o = std::make_shared<ConvertOptions>();
  CLI::App* sub = app.add_subcommand(
      "convert",
      "Convert traces: .mtrace (native), .pftrace (Perfetto), .json (Chrome JSON), DIR/ (a Kineto "
      "JSON file per rank)");
  sub->add_option("inputs", o->inputs, "Input traces (merged rank by rank)")->required();
  sub->add_option("-o,--output", o->output, "Output file; its type follows the extension (.mtrace, .pftrace, .json), or a "
                  "directory (ending in /) to get one Kineto JSON file per rank, rank-<id>.json")
      ->required();
  sub->add_option("--ranks", o->ranks, "Only these rank ids, e.g. 0-7,64");
  sub->add_option("--steps", o->steps, "Only the events of these steps, e.g. 2-3");
  sub->add_option("--window", o->window,
                  "Only events overlapping FROM:TO, absolute times as `info` prints them "
                  "(ns; or with a unit: 1704161511.42s:1704161511.43s)");
  sub->add_option("--threads", o->threads, "Threads reading (and, for .mtrace and .pftrace, encoding) ranks (default: all cores)")
      ->check(CLI::Range(0, 1024));  // 0: all cores
  Register(sub, [o] {
    CheckOutputPaths(o->inputs, {o->output});
    return RunOnFirstProcess([&] { return RunConvert(*o); });
  });
}

}  // namespace moetrace::cli
