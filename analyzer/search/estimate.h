// The fast estimator: tracegen's cost probes (tracegen/probe.h: the
// engine's own ops, cost model and overlap rules on one rank) composed over
// tracegen's pipeline schedule (StageSchedule) by a task-level simulation of
// the pipeline stages, and tracegen's memory model (static memory per
// stage, activations kept per micro-batch and layer, recompute and swap)
// walked over the same schedule.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "analyzer/search/space.h"
#include "tracegen/probe.h"
#include "tracegen/proto/run_config.pb.h"
#include "tracegen/schedule.h"

namespace moetrace::search {

struct Figures {
  double step_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;
  double peak_bytes = 0;       // the most loaded rank's allocated peak
  double ep_exposed_s = 0;     // per step, mean over pipeline stages
  double bubble_s = 0;         // per step, mean over pipeline stages
  bool fits = true;            // peak_bytes <= HBM
};

// What one estimate needs that does not depend on the layout: the base
// config, the expert popularity of the probes' MoE layer per expert-group
// size, the pipeline schedules. Shared by threads (its caches lock).
class Estimator {
 public:
  explicit Estimator(const tracegen::RunConfig& base);
  // The candidate's figures (f->fits false when its peak exceeds HBM);
  // false only if the schedule cannot be composed.
  bool Estimate(const Layout& l, Figures* f) const;
  const tracegen::RunConfig& base() const { return base_; }

 private:
  const std::vector<double>& Popularity(int expert_group) const;
  std::shared_ptr<const std::vector<std::vector<tracegen::PipeItem>>> Schedules(
      int kind, int pp, int vpp, int micro) const;

  // The per-layer probes, shared by layouts that differ only in VPP and
  // schedule kind (what they change is per stage: probed each time).
  std::shared_ptr<const tracegen::CostProbe> LayerProbe(uint64_t key) const;
  void KeepLayerProbe(uint64_t key, const tracegen::CostProbe& p) const;

  tracegen::RunConfig base_;
  mutable std::unordered_map<uint64_t, std::shared_ptr<const tracegen::CostProbe>> layer_probes_;
  std::vector<std::vector<double>> layer_popularity_;  // per MoE layer, step 0
  mutable std::mutex mu_;
  mutable std::map<int, std::vector<double>> popularity_;
  mutable std::map<std::tuple<int, int, int, int>,
                   std::shared_ptr<const std::vector<std::vector<tracegen::PipeItem>>>>
      schedules_;
};

// Model FLOPs of one step (as tracegen's trace metadata counts them).
double ModelFlopsPerStep(const tracegen::RunConfig& c);

}  // namespace moetrace::search
