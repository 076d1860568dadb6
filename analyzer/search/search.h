// moetrace search: enumerate the space, reject what the layout rules or HBM
// exclude (counted by reason), rank the rest with the estimator, verify the
// best with the full simulation.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/search/estimate.h"
#include "analyzer/search/space.h"
#include "tracegen/proto/run_config.pb.h"

namespace moetrace::search {

struct Ranked {
  int rank = 0;  // 1 = best estimate
  Layout layout;
  Figures estimate;
  std::optional<Figures> simulated;
};

struct SearchResult {
  std::string model;
  int cards = 0;
  int64_t global_batch = 0, seq = 0;
  double hbm_bytes = 0;
  int64_t space_size = 0;  // candidates visited
  int64_t valid = 0;       // accepted by the layout rules (estimated)
  int64_t feasible = 0;    // of them, fit in HBM
  std::map<std::string, int64_t, std::less<>> rejected;  // reason -> candidates
  double estimate_cpu_s = 0;  // CPU seconds of the estimates (all threads)
  std::vector<Ranked> top;    // best first
  // The base config's own layout, when it is in the space and fits.
  std::optional<Ranked> configured;
};

struct SearchOptions {
  int top = 10;
  int verify = 3;
  int threads = 0;  // 0: one per core
  // (phase, done, total) on the calling thread: "estimating", "simulating".
  std::function<void(std::string_view, int64_t, int64_t)> progress;
};

SearchResult RunSearch(const tracegen::RunConfig& base, const Space& space, const SearchOptions& o);

// The base config's layout as a point of the space.
Layout LayoutOf(const tracegen::RunConfig& c);

std::string SearchJson(const SearchResult& r, int layers);
std::string SearchText(const SearchResult& r, int layers);

}  // namespace moetrace::search
