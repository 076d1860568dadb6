// `moetrace replay`: the trace predicted under changed settings, and the
// analysis before and after.
//
// Keys of --set:
//   speed.<class>=F        device ops of a class F times faster
//                          (flash_attention, grouped_matmul, matmul, vector, comm, alltoall, copy)
//   host.dispatch_factor=F host issue cost x F (launch calls and the host work between them)
//   sync.remove=NAME       host syncs whose name contains NAME no longer wait ("all" = every one)
//   slow_rank.fix=R        rank R at its peers' speed (transforms/slow_rank.h)
//   micro_batch.scale=K    K micro-batches merged into one (transforms/micro_batch.h)
//   any RunConfig key      tracegen traces (metadata.config_json): by default the run is
//                          generated again with the changed configuration -- tracegen's own
//                          model is the faithful what-if -- and graph modifications then apply
//                          on top. With ReplayMethod::kGraph, and on recorded traces, the keys
//                          the graph models (transforms/graph_knobs.h: micro-batch size,
//                          all-to-all algorithm, expert placement, recompute, swap off, task
//                          queue, NUMA binding) are transforms of the recorded events instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/proto/analysis.pb.h"
#include "analyzer/replay/graph_replay.h"
#include "formats/trace.h"

namespace moetrace::replay {

struct RankPrediction {
  int32_t rank = 0;
  int64_t before_ns = 0;  // mean step span
  int64_t after_ns = 0;
};

enum class ReplayMethod : uint8_t {
  kAuto,        // regenerate tracegen traces, graph transforms otherwise
  kGraph,       // never regenerate: RunConfig keys as graph transforms
  kRegenerate,  // RunConfig keys need a tracegen trace
};
struct RoleMap;  // roles.h
struct ReplayOptions {
  ReplayMethod method = ReplayMethod::kAuto;
  // Role-reduced replay (roles.h): `trace` holds only the representatives,
  // `before` is the whole trace's analysis; every rank's prediction is its
  // recorded value moved as its representative's. Null = the whole trace.
  const RoleMap* roles = nullptr;
  // The graph replay's workers (ReplayGraph); 0 = one per core.
  int threads = 0;
};
// "auto", "graph", "regenerate"; false on anything else.
bool ParseReplayMethod(std::string_view name, ReplayMethod* out);

struct ReplayResult {
  std::vector<std::string> sets;
  std::vector<std::string> transforms;  // what the graph transforms did
  bool regenerated = false;  // RunConfig keys applied through tracegen
  bool graph_replayed = false;
  GraphStats graph;
  Trace predicted;
  analysis::Analysis before, after;
  std::vector<RankPrediction> ranks;
  int64_t step_before_ns = 0, step_after_ns = 0;  // median over ranks of the mean step
  int64_t peak_before_bytes = -1, peak_after_bytes = -1;  // -1 = unknown
  std::vector<std::string> warnings;
  std::string reduction;  // "N representatives of M ranks" when role-reduced
  double Gain() const;  // (before - after) / before; > 0 = faster
};

// True for the keys the graph replay understands (speed.*, host.dispatch_factor, sync.remove).
bool IsGraphKey(std::string_view key);
// Parses the graph keys of `sets` into `mods`, returns the other (RunConfig) assignments.
// Throws InputError naming --set on a malformed value or unknown class.
std::vector<std::string> SplitSets(const std::vector<std::string>& sets, GraphModifications* mods);

// `before` is the analysis of `trace` when the caller has it (else computed).
ReplayResult Replay(const Trace& trace, const std::vector<std::string>& sets,
                    const analysis::Analysis* before = nullptr, const ReplayOptions& options = {});

// Median over ranks of each rank's mean step span (ns); 0 without ranks.
int64_t MedianStepNs(const analysis::Analysis& a);
int64_t MeanStepNs(const analysis::RankAnalysis& r);
int64_t PeakMemoryBytes(const analysis::Analysis& a);  // -1 = unknown

// The --json document: modifications, step time and peak memory before and
// after, per-rank step times, graph statistics and the predicted analysis.
std::string ReplayJson(const ReplayResult& result);
std::string FormatReplay(const ReplayResult& result);  // terminal lines

}  // namespace moetrace::replay
