// moetrace generate: run the tracegen model and write the trace.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "analyzer/distributed.h"
#include "cli/commands.h"
#include "cli/processes.h"
#include "cli/progress.h"
#include "formats/errors.h"
#include "formats/native/native_shards.h"
#include "formats/open_trace.h"
#include "formats/sorted_dir.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace::cli {

namespace {

struct Args {
  std::string preset, config, ranks, out;
  std::vector<std::string> sets;
  int steps = 0;
  int threads = 0;
  bool timings = false;
};

// Under mpirun (or when -o is a directory): one shard per process, DIR/
// shard-NNNNN.mtrace, each holding a contiguous block of the ranks, which
// every command reads back as one trace (formats/native/native_shards.h).
bool WritesShards(const std::string& out, const Communicator& comm) {
  return comm.size() > 1 || IsDir(out) || (!out.empty() && out.back() == '/');
}

// Process 0, before any shard is written: the directory exists and holds no
// .mtrace file this run would not overwrite (another run's shards would be
// read as part of this trace).
void PrepareShardDir(const std::string& dir, int processes) {
  const auto ends_with = [&](std::string_view suffix) {
    return dir.size() >= suffix.size() && dir.compare(dir.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (!IsDir(dir) && (ends_with(".mtrace") || ends_with(".json") || ends_with(".pftrace")))
    throw UsageError(fmt::format("generate: under mpirun, -o names a directory (one .mtrace shard "
                                 "per process), not a file: {}", dir));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!IsDir(dir)) ThrowInputError(dir, "", "cannot create this directory");
  std::vector<std::string> ours;
  for (int p = 0; p < processes; ++p) ours.push_back(ShardPath(dir, p));
  for (const std::string& f : NativeShardFiles(dir)) {
    if (std::find(ours.begin(), ours.end(), f) == ours.end())
      ThrowInputError(f, "", "a .mtrace file of another run in the output directory: remove it or write elsewhere");
  }
}

// Process p's contiguous block of `ranks` (sizes differ by at most one).
std::vector<int32_t> ShareOf(const std::vector<int32_t>& ranks, int p, int processes) {
  const size_t n = ranks.size();
  return {ranks.begin() + long(n * size_t(p) / size_t(processes)),
          ranks.begin() + long(n * size_t(p + 1) / size_t(processes))};
}

int Run(const Args& a, Communicator& comm) {
  tracegen::RunConfig config;
  std::vector<int32_t> ranks;
  const bool shards = WritesShards(a.out, comm);
  OnEveryProcess(comm, [&] {
    if (a.preset.empty() == a.config.empty())
      throw UsageError("generate: give exactly one of --preset NAME or --config FILE");
    config = tracegen::BuildConfig({a.preset, a.config, a.sets, a.steps});
    if (!a.ranks.empty()) ranks = tracegen::ParseRankSpec(a.ranks, config.parallel().world_size());
  });
  std::string out = a.out;
  if (shards) {
    OnFirstProcess(comm, [&] { PrepareShardDir(a.out, comm.size()); });
    if (ranks.empty()) {
      for (int32_t r = 0; r < config.parallel().world_size(); ++r) ranks.push_back(r);
    }
    ranks = ShareOf(ranks, comm.rank(), comm.size());
    out = ShardPath(a.out, comm.rank());
  }
  // Pass 1 (the whole run, every rank together) on process 0 alone, its
  // results broadcast: each process then emits its own ranks from them, as
  // if it had simulated the run itself (the shards are the same bytes).
  std::string pass1;
  if (comm.size() > 1) {
    OnFirstProcess(comm, [&] { pass1 = tracegen::SimulatePass1(config, a.threads); });
    comm.Broadcast(&pass1);
  }
  tracegen::GenerateSummary s;
  OnEveryProcess(comm, [&] {
    if (shards && ranks.empty()) {  // more processes than ranks: no shard (nor a stale one)
      std::error_code ec;
      std::filesystem::remove(out, ec);
      return;
    }
    auto sink = CreateSink(out);
    const size_t total = ranks.empty() ? size_t(config.parallel().world_size()) : ranks.size();
    // The bar of process 0's share (called in rank order, on this thread).
    std::optional<Progress> bar;
    if (comm.rank() == 0) bar.emplace("generating", total);
    s = tracegen::Generate(config, ranks, *sink, [&bar](int done, int) { if (bar) bar->Update(size_t(done)); },
                           a.threads, pass1);
    pass1 = std::string();  // loaded: the engine holds its own copy
  });
  for (const auto& w : s.warnings) fmt::print(stderr, "moetrace: warning: {}\n", w);
  if (a.timings) {
    const auto& t = s.times;
    fmt::print(stderr,
               "generate: {} ranks, {} events, {:.2f} s wall, {:.2f} s CPU; pass 1 {:.2f} s wall, "
               "{:.2f} s CPU; CPU summed over threads: pass 2 {:.2f} s, labels {:.2f} s, "
               "encode {:.2f} s, writer {:.2f} s ({:.2f} s wall)\n",
               s.ranks, s.events, t.total, t.total_cpu, t.simulate, t.simulate_cpu, t.emit,
               t.labels, t.encode, t.write, t.write_wall);
  }
  return 0;
}

}  // namespace

void AddGenerateCommand(CLI::App& app) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand("generate", "Simulate MoE training on Ascend+Kunpeng and write its trace");
  sub->add_option("--preset", args->preset, "run preset (see `moetrace presets`)");
  sub->add_option("--config", args->config, "RunConfig JSON file")->check(CLI::ExistingFile);
  sub->add_option("--set", args->sets, "override a config key: dotted.key=value (repeatable)");
  sub->add_option("--steps", args->steps, "training steps to simulate")->check(CLI::Range(1, 10000));
  sub->add_option("--ranks", args->ranks, "ranks to write: list or ranges, e.g. 0-7,64 (default all)");
  sub->add_option("--threads", args->threads,
                  "threads emitting ranks (default: one per core); the output is the same for any count")
      ->check(CLI::Range(1, 1024));
  sub->add_flag("--timings", args->timings, "print the time spent per phase to stderr");
  sub->add_option("-o,--output", args->out,
                  "output trace (.mtrace, .pftrace, .json), or a directory: one .mtrace shard per "
                  "mpirun process, read back as one trace")
      ->required();
  Register(sub, [args]() { return RunOnProcesses([&](Communicator& comm) { return Run(*args, comm); }); });
}

}  // namespace moetrace::cli
