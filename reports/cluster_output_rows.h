// The rows both reports show for msprof-analyze's cluster output
// (analysis.cluster_output): per-rank breakdown (the slowest first, capped,
// then percentiles over all ranks), the slowest rank, the slowest links.
// Plain text: each renderer escapes it its own way.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "analyzer/proto/analysis.pb.h"

namespace moetrace {

struct ClusterOutputRows {
  std::string source;
  // who, Stage, Computing, Comm (not overlapped), Overlapped, Comm, Free, Bubble
  static constexpr std::array<const char*, 8> kRankHeader = {
      "rank", "Stage", "Computing", "Communication (not overlapped)", "Overlapped",
      "Communication", "Free", "Bubble"};
  std::vector<std::array<std::string, 8>> ranks;
  std::vector<bool> slowest;  // per row of `ranks`: the slowest rank
  std::string slowest_rank;   // one sentence
  // transport, who, group, bandwidth, nominal, share of nominal, bytes / ops
  static constexpr std::array<const char*, 7> kLinkHeader = {
      "transport", "link", "group", "bandwidth", "nominal", "share of nominal", "moved"};
  std::vector<std::array<std::string, 7>> links;
  std::vector<std::string> groups;  // "(0, 1) (collective)"
};

// Empty `source` when the analysis has no cluster_output.
ClusterOutputRows BuildClusterOutputRows(const analysis::Analysis& a, size_t max_ranks);

}  // namespace moetrace
