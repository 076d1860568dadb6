// The text both reports show for the operator view (cluster.operators):
// device time by class, the top operators, and the host's dispatch cost per
// operator type. Plain text: each renderer escapes it its own way (names
// and shapes come from the trace).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "analyzer/proto/analysis.pb.h"

namespace moetrace {

struct OpsRows {
  // class, per rank-step, share of device time, share of compute
  static constexpr std::array<const char*, 4> kClassHeader = {"class", "per rank-step", "of device time",
                                                              "of compute"};
  std::vector<std::array<std::string, 4>> classes;  // largest first
  std::vector<double> class_share;                  // of device time, for the bars
  // operator (name [shape]), class, count, per rank-step, mean, p50, p99, share
  static constexpr std::array<const char*, 8> kTopHeader = {"operator", "class", "count", "per rank-step",
                                                            "mean", "p50", "p99", "share"};
  std::vector<std::array<std::string, 8>> top;
  // operator type, launches, host time, mean launch, small, device time, host-bound wait
  static constexpr std::array<const char*, 7> kDispatchHeader = {
      "operator type", "launches", "host launch time", "mean launch", "small (device < launch)",
      "device time", "host-bound wait"};
  std::vector<std::array<std::string, 7>> dispatch;
  std::string note;  // the figures' scope, and which type ended most host-bound wait
};

// Empty (no classes) when the analysis has no operator view.
OpsRows BuildOpsRows(const analysis::Analysis& a, size_t max_top, size_t max_dispatch);

}  // namespace moetrace
