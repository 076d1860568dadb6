#include "analyzer/cluster_output_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "analyzer/outlier_lines.h"

namespace moetrace {
namespace {

constexpr size_t kAllRanksUpTo = 16;  // more: the slowest few and percentiles
constexpr size_t kSlowestShown = 5;

std::string Ms(int64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns) / 1e6); }

std::string Cell(bool has, int64_t v) { return has ? Ms(v) : "-"; }

std::string Row(const std::string& who, const analysis::StepTraceFigures& f, const char* note) {
  return fmt::format("  {:<8} {:>10} {:>10} {:>12} {:>10} {:>10} {:>10} {:>8}{}\n", who,
                     Cell(f.has_span_ns(), f.span_ns()), Cell(f.has_compute_ns(), f.compute_ns()),
                     Cell(f.has_comm_exposed_ns(), f.comm_exposed_ns()),
                     Cell(f.has_comm_overlapped_ns(), f.comm_overlapped_ns()),
                     Cell(f.has_comm_ns(), f.comm_ns()), Cell(f.has_free_ns(), f.free_ns()),
                     Cell(f.has_bubble_ns(), f.bubble_ns()), note);
}

// A percentile row of the table from the spreads.
std::string SpreadRow(const analysis::ClusterOutput& co, const char* who,
                      int64_t (analysis::Spread::*get)() const) {
  analysis::StepTraceFigures f;
  auto set = [&](const char* m, void (analysis::StepTraceFigures::*s)(int64_t)) {
    auto it = co.spread().find(m);
    if (it != co.spread().end()) (f.*s)((it->second.*get)());
  };
  set("span_ns", &analysis::StepTraceFigures::set_span_ns);
  set("compute_ns", &analysis::StepTraceFigures::set_compute_ns);
  set("comm_exposed_ns", &analysis::StepTraceFigures::set_comm_exposed_ns);
  set("comm_overlapped_ns", &analysis::StepTraceFigures::set_comm_overlapped_ns);
  set("comm_ns", &analysis::StepTraceFigures::set_comm_ns);
  set("free_ns", &analysis::StepTraceFigures::set_free_ns);
  set("bubble_ns", &analysis::StepTraceFigures::set_bubble_ns);
  return Row(who, f, "");
}

}  // namespace

std::string FormatClusterOutput(const analysis::Analysis& a) {
  if (!a.has_cluster_output()) return "";
  const analysis::ClusterOutput& co = a.cluster_output();
  std::string s = fmt::format("msprof-analyze cluster output: {} ranks ({})\n", co.rank_count(), co.source());
  std::vector<const analysis::RankAnalysis*> ranks;
  for (const auto& r : a.ranks()) {
    if (r.ascend().has_step_trace()) ranks.push_back(&r);
  }
  if (!ranks.empty()) {
    s += "  the profiler's figures (cluster_step_trace_time.csv), ms per step; the METRICS.md names:\n";
    s += fmt::format("  {:<8} {:>10} {:>10} {:>12} {:>10} {:>10} {:>10} {:>8}\n", "rank", "Stage",
                     "Computing", "Comm(NotOvl)", "Overlapped", "Comm", "Free", "Bubble");
    s += fmt::format("  {:<8} {:>10} {:>10} {:>12} {:>10} {:>10} {:>10} {:>8}\n", "", "span",
                     "compute", "comm_exposed", "comm_ovl", "comm", "free+copy", "bubble");
    const bool all = ranks.size() <= kAllRanksUpTo;
    if (!all) {
      std::stable_sort(ranks.begin(), ranks.end(), [](const auto* x, const auto* y) {
        return x->ascend().step_trace().span_ns() > y->ascend().step_trace().span_ns();
      });
      ranks.resize(kSlowestShown);
    }
    for (const auto* r : ranks) {
      const bool slowest = co.has_slowest() && co.slowest().rank() == r->rank();
      s += Row(std::to_string(r->rank()), r->ascend().step_trace(), slowest ? "  <- slowest" : "");
    }
    if (!all) {
      s += fmt::format("  ({} slowest of {} shown; over all ranks:)\n", kSlowestShown, co.rank_count());
      s += SpreadRow(co, "median", &analysis::Spread::median);
      s += SpreadRow(co, "p90", &analysis::Spread::p90);
      s += SpreadRow(co, "max", &analysis::Spread::max);
    }
  }
  for (const auto& st : co.stages()) {
    s += Row("stage", st, "");
    s += fmt::format("           ^ the profiler's stage row, ranks {}\n", st.index());
  }
  if (co.has_slowest()) {
    const auto it = co.spread().find("span_ns");
    s += fmt::format("  slowest rank (moetrace: longest Stage): rank {}, {} ms, {:+.1f} % over the median{}\n",
                     co.slowest().rank(), Ms(co.slowest().span_ns()), 100 * co.slowest().over_median(),
                     it == co.spread().end()
                         ? ""
                         : fmt::format(" (Stage over ranks: min {}, median {}, max {} ms)", Ms(it->second.min()),
                                       Ms(it->second.median()), Ms(it->second.max())));
  }
  // The trace analysis' outlier lines, on the profiler's figures; the step is
  // the median Stage.
  const auto span = co.spread().find("span_ns");
  s += FormatOutlierRanks(co.slow_ranks(), span == co.spread().end() ? 0.0 : static_cast<double>(span->second.median()),
                          "  ", "cluster_output.slow_ranks");
  if (co.slowest_links_size() > 0) {
    s += "  slowest links (the profiler's transit size / time; moetrace: share of the nominal link):\n";
    for (const auto& l : co.slowest_links()) {
      std::string who = l.has_dst_rank() ? fmt::format("rank {} -> {}", l.rank(), l.dst_rank())
                                          : fmt::format("rank {}", l.rank());
      s += fmt::format("    {:<5} {:<12} group {}: {:.3f} GB/s of {:.0f} GB/s ({:.2f} %), {} bytes in {} op{}\n",
                       l.transport(), who, l.group(), l.bandwidth_gb_s(), l.nominal_gb_s(),
                       100 * l.utilization(), l.transit_bytes(), l.ops(), l.ops() == 1 ? "" : "s");
    }
  }
  if (co.groups_size() > 0) {
    s += fmt::format("  parallel groups: {}", co.groups_size());
    for (int i = 0; i < co.groups_size() && i < 4; ++i) {
      s += fmt::format("{} {} ({})", i ? "," : "", co.groups(i).name(), co.groups(i).kind());
    }
    s += co.groups_size() > 4 ? ", ...\n" : "\n";
  }
  if (co.trace_comparison_size() > 0) {
    s += "  trace vs profiler (ms per step, trace - profiler; free = METRICS free + exposed copy):\n";
    for (int i = 0; i < co.trace_comparison_size() && i < 14; ++i) {
      const auto& c = co.trace_comparison(i);
      s += fmt::format("    rank {:<4} {:<18} trace {:>10}  profiler {:>10}  diff {:>+9.3f}\n", c.rank(),
                       c.metric(), Ms(c.trace_ns()), Ms(c.profiler_ns()),
                       static_cast<double>(c.difference_ns()) / 1e6);
    }
    if (co.trace_comparison_size() > 14) {
      s += fmt::format("    ... {} more in --json\n", co.trace_comparison_size() - 14);
    }
  }
  if (!co.import_stats().empty()) {
    std::vector<std::pair<std::string, int64_t>> st(co.import_stats().begin(), co.import_stats().end());
    std::sort(st.begin(), st.end());
    s += "  odd fields read:";
    for (const auto& [k, v] : st) s += fmt::format(" {} {};", k, v);
    s += "\n";
  }
  return s;
}

}  // namespace moetrace
