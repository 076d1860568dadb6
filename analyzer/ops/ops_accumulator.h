// The operator view over every rank (cluster.operators): rows keyed by
// (class, name, shape) as strings, since each rank interns its own names;
// durations as merged log histograms (log_histogram.h), not kept one by
// one. Ranks are added in any order by any number of threads, and another
// process's state merges in exactly as if its ranks had been added here
// (sums, and histogram counts): the result does not depend on the order.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/ops/rank_ops.h"
#include "analyzer/proto/analysis.pb.h"

namespace moetrace::partial {
class OpsState;
}

namespace moetrace::ops {

inline constexpr size_t kClusterTopRows = 20;
inline constexpr size_t kClusterDispatchRows = 10;

class OpsAccumulator {
 public:
  OpsAccumulator();
  // Thread-safe.
  void Add(const RankOps& ops, const StringTable& strings);
  void Serialize(partial::OpsState* out) const;
  // Throws std::runtime_error when the columns do not line up.
  void Merge(const partial::OpsState& in);
  // `steps`: cluster.steps (per_step_ns = total over ranks / steps).
  void Fill(int32_t steps, analysis::Operators* out) const;

 private:
  // A row's key as one string: class byte, name, NUL, shape. Ties in Fill
  // are broken by key, the same way whatever the merge order.
  static std::string Key(uint8_t cls, std::string_view name, std::string_view shape);
  struct Row {
    int64_t count = 0, total = 0, min = 0, max = 0;
    std::vector<std::pair<uint32_t, int64_t>> buckets;  // (LogHistogram bucket, count), sorted
    // `scratch`: a buffer for the buckets coming in when they need a merge.
    void Add(int64_t count, int64_t total, int64_t min, int64_t max,
             const std::pair<uint32_t, int64_t>* b, size_t n,
             std::vector<std::pair<uint32_t, int64_t>>* scratch);
  };
  struct Dispatch {
    int64_t count = 0, host_ns = 0, small = 0, device_ns = 0, host_bound_ns = 0;
  };
  // Found by a string_view of the key: one hash and one compare per row of
  // a rank (a std::map compared ~10 keys, sharing long prefixes, per row).
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view k) const { return std::hash<std::string_view>{}(k); }
  };
  template <class V>
  using Map = std::unordered_map<std::string, V, Hash, std::equal_to<>>;
  // The entries in key order: Serialize and Fill's ties do not depend on
  // the table's order.
  template <class V>
  static std::vector<const typename Map<V>::value_type*> ByKey(const Map<V>& m);

  std::unique_ptr<std::mutex> mu_;
  Map<Row> rows_;
  std::string key_;  // Add's key buffer (under mu_)
  std::vector<std::pair<uint32_t, int64_t>> in_;  // Row::Add's buffer (under mu_)
  Map<Dispatch> dispatch_;
  int64_t class_count_[kViewClassCount] = {};
  int64_t class_total_[kViewClassCount] = {};
};

}  // namespace moetrace::ops
