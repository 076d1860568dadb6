// Cross-rank accumulation: sums, per-rank summaries for the spread and the
// slow-rank rule, matched collectives (group, sequence) for wait
// attribution, expert loads. Ranks are added one at a time (any order).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/proto/analysis.pb.h"
#include "analyzer/rank_metrics.h"
#include "formats/trace.h"

namespace moetrace {

class ClusterAccumulator {
 public:
  // `rank` is the source of `m` (its strings and routing records).
  void Add(const RankMetrics& m, const Rank& rank);
  // The state so far as bytes (partial.proto ClusterState), and the merge of
  // such bytes into this one: another process's ranks, as if Added here.
  // Merging is order-independent exactly as Add is. Merge throws
  // std::runtime_error on bytes that do not parse.
  std::string Serialize() const;
  void Merge(const std::string& bytes);
  // Fills analysis->cluster and each rank's collective_wait_caused_ns.
  void Finish(const Metadata& metadata, analysis::Analysis* analysis);

 private:
  struct RankSummary {
    int32_t rank;
    int64_t steps;
    double step_mean, compute, comm, free;  // per step
    int64_t peak_bytes;
    bool has_peak;
  };
  struct Collective;
  uint32_t GroupId(std::string_view name);
  // Folds `from` (members of the same group and sequence, whose kept op name
  // is `name`) into `into`: Add folds one member, Merge another process's.
  static void Fold(const Collective& from, std::string_view name, Collective* into);

  struct Collective {
    int32_t members = 0;
    int32_t group_size = 0;
    int64_t sum_dur = 0;
    int64_t min_dur = INT64_MAX;
    int32_t last_rank = -1;
    int32_t name_rank = -1;  // the member whose op name / layer / step is kept
    std::string name;
    int32_t layer = -1, step = -1;
    bool a2a = false, combine = false;
    int64_t load_sum = 0, load_max = 0;
    int32_t load_n = 0;
  };
  struct RoutingKey {
    int32_t step, layer;
    bool operator<(const RoutingKey& o) const {
      return step != o.step ? step < o.step : layer < o.layer;
    }
  };
  struct RoutingAgg {
    std::vector<int64_t> tokens;
    std::vector<int32_t> placement;
    int32_t ep_size = 0;
  };

  BreakdownNs total_;
  ClassNs cls_[kCommClassCount];
  std::vector<RankSummary> ranks_;
  std::unordered_map<std::string, uint32_t> group_ids_;
  std::vector<std::string> group_names_;
  std::unordered_map<uint64_t, Collective> collectives_;
  std::map<RoutingKey, RoutingAgg> routing_;
  // Local expert loads (records with ep_size 0: Ascend GroupedMatmul group
  // sizes, or one total per rank), by rank.
  std::map<RoutingKey, std::map<int32_t, std::vector<int64_t>>> local_;
  int64_t max_steps_ = 0;
};

}  // namespace moetrace
