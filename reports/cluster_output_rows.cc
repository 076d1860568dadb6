#include "reports/cluster_output_rows.h"

#include <fmt/core.h>

#include <algorithm>

#include "reports/findings.h"

namespace moetrace {
namespace {

std::string Dur(bool has, int64_t ns) { return has ? FormatDuration(static_cast<double>(ns)) : "-"; }

std::array<std::string, 8> Row(const std::string& who, const analysis::StepTraceFigures& f) {
  return {who,
          Dur(f.has_span_ns(), f.span_ns()),
          Dur(f.has_compute_ns(), f.compute_ns()),
          Dur(f.has_comm_exposed_ns(), f.comm_exposed_ns()),
          Dur(f.has_comm_overlapped_ns(), f.comm_overlapped_ns()),
          Dur(f.has_comm_ns(), f.comm_ns()),
          Dur(f.has_free_ns(), f.free_ns()),
          Dur(f.has_bubble_ns(), f.bubble_ns())};
}

// Percentile row from the spreads ("-" where a column has none).
std::array<std::string, 8> SpreadRow(const analysis::ClusterOutput& co, const std::string& who,
                                     int64_t (analysis::Spread::*get)() const) {
  std::array<std::string, 8> row{who};
  const char* metrics[] = {"span_ns", "compute_ns", "comm_exposed_ns", "comm_overlapped_ns",
                           "comm_ns", "free_ns", "bubble_ns"};
  for (int i = 0; i < 7; ++i) {
    auto it = co.spread().find(metrics[i]);
    row[i + 1] = it == co.spread().end() ? "-" : FormatDuration(static_cast<double>((it->second.*get)()));
  }
  return row;
}

}  // namespace

ClusterOutputRows BuildClusterOutputRows(const analysis::Analysis& a, size_t max_ranks) {
  ClusterOutputRows out;
  if (!a.has_cluster_output()) return out;
  const analysis::ClusterOutput& co = a.cluster_output();
  out.source = co.source();
  std::vector<const analysis::RankAnalysis*> ranks;
  for (const auto& r : a.ranks()) {
    if (r.ascend().has_step_trace()) ranks.push_back(&r);
  }
  // The slowest first (longest Stage), as the step breakdown table.
  std::stable_sort(ranks.begin(), ranks.end(), [](const auto* x, const auto* y) {
    return x->ascend().step_trace().span_ns() > y->ascend().step_trace().span_ns();
  });
  const bool capped = ranks.size() > max_ranks;
  if (capped) ranks.resize(max_ranks);
  for (const auto* r : ranks) {
    out.ranks.push_back(Row(std::to_string(r->rank()), r->ascend().step_trace()));
    out.slowest.push_back(co.has_slowest() && co.slowest().rank() == r->rank());
  }
  if (capped) {
    for (auto [who, get] : {std::pair{"median of all", &analysis::Spread::median},
                            std::pair{"p90 of all", &analysis::Spread::p90},
                            std::pair{"max of all", &analysis::Spread::max}}) {
      out.ranks.push_back(SpreadRow(co, who, get));
      out.slowest.push_back(false);
    }
  }
  for (const auto& st : co.stages()) {
    out.ranks.push_back(Row("stage " + st.index(), st));
    out.slowest.push_back(false);
  }
  if (co.has_slowest()) {
    out.slowest_rank = fmt::format("Slowest rank: {} (longest Stage, {}, {:+.1f} % over the median of {} ranks).",
                                   co.slowest().rank(), FormatDuration(static_cast<double>(co.slowest().span_ns())),
                                   100 * co.slowest().over_median(), co.rank_count());
  }
  for (const auto& l : co.slowest_links()) {
    out.links.push_back({l.transport(),
                         l.has_dst_rank() ? fmt::format("rank {} → {}", l.rank(), l.dst_rank())
                                          : fmt::format("rank {}", l.rank()),
                         l.group(), fmt::format("{:.3f} GB/s", l.bandwidth_gb_s()),
                         fmt::format("{:.0f} GB/s", l.nominal_gb_s()), FormatPct(l.utilization()),
                         fmt::format("{} in {} op{}", FormatBytes(static_cast<double>(l.transit_bytes())), l.ops(),
                                     l.ops() == 1 ? "" : "s")});
  }
  for (const auto& g : co.groups()) out.groups.push_back(g.name() + " (" + g.kind() + ")");
  return out;
}

}  // namespace moetrace
