// The operator view over every rank (cluster.operators): rows keyed by
// (class, name, shape) as strings, since each rank interns its own names;
// durations as merged log histograms (log_histogram.h), not kept one by
// one. Ranks are added in any order by any number of threads, and another
// process's state merges in exactly as if its ranks had been added here
// (sums, and histogram counts): the result does not depend on the order.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

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
  struct Key {
    uint8_t cls;
    std::string name, shape;
    bool operator<(const Key& o) const {
      return std::tie(cls, name, shape) < std::tie(o.cls, o.name, o.shape);
    }
  };
  struct Row {
    int64_t count = 0, total = 0;
    LogHistogram hist;
  };
  struct Dispatch {
    int64_t count = 0, host_ns = 0, small = 0, device_ns = 0, host_bound_ns = 0;
  };
  std::unique_ptr<std::mutex> mu_;
  std::map<Key, Row> rows_;
  std::map<std::string, Dispatch> dispatch_;
  int64_t class_count_[kViewClassCount] = {};
  int64_t class_total_[kViewClassCount] = {};
};

}  // namespace moetrace::ops
