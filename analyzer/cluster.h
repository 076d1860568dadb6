// Cross-rank accumulation: sums, per-rank summaries for the spread and the
// slow-rank rule, matched collectives (group, sequence) for wait
// attribution, expert loads. Ranks are added in any order, by any number of
// threads at once (Add locks what it touches: the collectives are kept by
// group, so two workers rarely wait for each other).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/collective_table.h"
#include "analyzer/ops/ops_accumulator.h"
#include "analyzer/proto/analysis.pb.h"
#include "analyzer/rank_experts.h"
#include "analyzer/rank_metrics.h"
#include "formats/trace.h"

namespace moetrace {

class ClusterAccumulator {
 public:
  ClusterAccumulator();
  ClusterAccumulator(ClusterAccumulator&&) noexcept;
  ClusterAccumulator& operator=(ClusterAccumulator&&) noexcept;
  ~ClusterAccumulator();
  // `rank` is the source of `m` (its strings and routing records). Thread-safe.
  void Add(const RankMetrics& m, const Rank& rank);
  // The rank's operator view (analyzer/ops). Thread-safe.
  void AddOps(const ops::RankOps& ops, const Rank& rank) { ops_.Add(ops, rank.strings); }
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
  using Collective = CollectiveAgg;
  // Ids of group and op names (callers hold names_mu_).
  uint32_t GroupId(std::string_view name);
  uint32_t NameId(std::string_view name);
  // Folds `from` (members of the same group and sequence) into `into`: Add
  // folds one member, Merge another process's. `from.name` is a NameId.
  static void Fold(const Collective& from, Collective* into);
  struct GroupTable;
  // Finds or inserts `key` in its group's `table` and folds `from` in
  // (takes the table's lock; callers hold no lock).
  void FoldInto(GroupTable* table, uint64_t key, const Collective& from);
  // Every collective, in (group name, sequence) order.
  std::vector<const Collective*> SortedCollectives() const;
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
    CopyLoads copies;
  };

  // Collectives by group (index: group id), each group's table under its
  // own lock. The vector grows under names_mu_ (with group_ids_); the
  // GroupTables themselves never move.
  struct GroupTable {
    std::mutex mu;
    CollectiveTable table;
  };
  std::vector<std::unique_ptr<GroupTable>> groups_;
  // Guards groups_, group_ids_ .. names_.
  std::unique_ptr<std::mutex> names_mu_;
  // Guards total_ .. max_steps_.
  std::unique_ptr<std::mutex> mu_;

  BreakdownNs total_;
  ClassNs cls_[kCommClassCount];
  std::vector<RankSummary> ranks_;
  // Looked up by string_view: GroupId / NameId build a std::string (and a
  // node) only for a name not seen before, not for every rank's every name.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view k) const { return std::hash<std::string_view>{}(k); }
  };
  using NameMap = std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>>;
  NameMap group_ids_;
  std::vector<std::string> group_names_;
  NameMap name_ids_;
  std::vector<std::string> names_;
  std::vector<char> name_is_combine_;
  std::map<RoutingKey, RoutingAgg> routing_;
  // Local expert loads (records with ep_size 0: Ascend GroupedMatmul group
  // sizes, or one total per rank), by rank.
  std::map<RoutingKey, std::map<int32_t, std::vector<int64_t>>> local_;
  int64_t max_steps_ = 0;
  ops::OpsAccumulator ops_;  // its own lock
};

}  // namespace moetrace
