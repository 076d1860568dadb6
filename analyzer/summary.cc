#include "analyzer/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "analyzer/cluster_output_summary.h"
#include "analyzer/human_number.h"
#include "analyzer/ops/ops_summary.h"
#include "analyzer/outlier_lines.h"
#include "analyzer/rl/rl_summary.h"

namespace moetrace {
namespace {

std::string Ms(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }
std::string Pct(double r) { return fmt::format("{:5.1f} %", 100.0 * r); }
std::string GiB(double b) { return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024)); }

}  // namespace

std::string FormatSummary(const analysis::Analysis& a) {
  std::string s;
  const analysis::Cluster& c = a.cluster();
  const analysis::Breakdown& b = c.breakdown();
  int64_t rank_steps = 0;
  for (const auto& r : a.ranks()) rank_steps += r.steps_size();
  s += fmt::format("moetrace analyze: {} ranks, {} steps{}\n", c.rank_count(), c.steps(),
                   a.source().empty() ? "" : " (" + a.source() + ")");
  if (rank_steps > 0 && b.span_ns() > 0) {
    const double per = static_cast<double>(rank_steps);
    const auto& st = c.step_time_ns();
    s += fmt::format("  step time         {}   (over ranks: min {}, median {}, max {})\n",
                     Ms(static_cast<double>(st.median())), Ms(static_cast<double>(st.min())),
                     Ms(static_cast<double>(st.median())), Ms(static_cast<double>(st.max())));
    const double span = static_cast<double>(b.span_ns());
    s += fmt::format("  host-bound        {}   of the step (sync {}, dispatch {})\n",
                     Pct(c.ratios().host_bound()), Pct(b.host_bound_sync_ns() / span),
                     Pct(b.host_bound_dispatch_ns() / span));
    const auto& ep = c.comm_by_class().ep();
    if (ep.total_ns() > 0) {
      s += fmt::format("  unmasked EP comm  {}   ({} exposed of {} per step)\n",
                       Pct(ep.unmasked_fraction()), Ms(ep.exposed_ns() / per),
                       Ms(ep.total_ns() / per));
    }
    s += fmt::format("  unmasked comm     {}   (all classes)\n", Pct(c.ratios().unmasked_comm()));
    s += fmt::format("  bubble            {}\n", Pct(c.ratios().bubble()));
    s += fmt::format("  free              {}\n", Pct(c.ratios().free()));
  }
  const auto& ei = c.expert_imbalance();
  if (ei.has_max_vio_mean()) {
    s += fmt::format("  MaxVio            {:.3f} mean, {:.3f} max (over EP ranks {:.3f})\n",
                     ei.max_vio_mean(), ei.max_vio_max(), ei.ep_max_vio_mean());
  } else if (!ei.source().empty()) {
    s += fmt::format("  MaxVio (EP ranks) {:.3f} mean (from all-to-all sizes)\n", ei.ep_max_vio_mean());
  }
  if (c.has_memory() && c.memory().peak_bytes() > 0) {
    int64_t min_headroom = INT64_MAX;
    for (const auto& r : a.ranks()) {
      if (r.memory().has_headroom_bytes()) min_headroom = std::min(min_headroom, r.memory().headroom_bytes());
    }
    s += fmt::format("  peak memory       {} on rank {}", GiB(static_cast<double>(c.memory().peak_bytes())),
                     c.memory().rank());
    if (min_headroom != INT64_MAX) s += fmt::format(", least headroom {}", GiB(static_cast<double>(min_headroom)));
    s += "\n";
  }
  if (c.has_mfu() && c.has_hfu())
    s += fmt::format("  MFU               {} (HFU {}, recompute included)\n", Pct(c.mfu()), Pct(c.hfu()));
  else if (c.has_mfu())
    s += fmt::format("  MFU               {}\n", Pct(c.mfu()));
  if (c.has_tokens_per_s()) s += fmt::format("  throughput        {} tokens/s\n", HumanCount(c.tokens_per_s()));
  s += ops::FormatOpsSummary(a);
  if (a.has_rl()) s += rl::FormatRlSummary(a.rl());

  // The JSON keeps every rank past the 5% rule (METRICS.md); the terminal
  // shows the deviations worth at least 1% of the step, grouped.
  s += FormatOutlierRanks(c.slow_ranks(), static_cast<double>(c.step_time_ns().median()), "",
                          "cluster.slow_ranks");
  if (c.collective_waits_size() > 0) {
    s += "collective waits:\n";
    for (int i = 0; i < c.collective_waits_size() && i < 5; ++i) {
      s += "  " + c.collective_waits(i).description() + "\n";
    }
  }
  bool hta_header = false;
  for (const auto& r : a.ranks()) {
    if (!r.has_hta()) continue;
    if (!hta_header) {
      s += "HTA figures (Holistic Trace Analysis semantics):\n";
      hta_header = true;
    }
    const auto& h = r.hta();
    s += fmt::format("  rank {}:", r.rank());
    if (h.has_temporal()) {
      s += fmt::format(" idle {:.2f} %, compute {:.2f} %, non-compute {:.2f} % of {:.0f} us;",
                       h.temporal().idle_pct(), h.temporal().compute_pct(),
                       h.temporal().non_compute_pct(), h.temporal().kernel_span_us());
    }
    if (std::isnan(h.comm_comp_overlap_pct())) {
      s += " overlap n/a;";
    } else {
      s += fmt::format(" overlap {:.2f} %;", h.comm_comp_overlap_pct());
    }
    s += fmt::format(" {} launches", h.launch().count());
    if (h.launch().count() > 0) {
      s += fmt::format(" (delay mean {:.1f} us, median {:.1f} us)", h.launch().launch_delay_mean_us(),
                       h.launch().launch_delay_p50_us());
    }
    s += "\n";
  }
  if (a.label_checks_size() > 0) {
    int compared = 0, over = 0;
    double worst = 0;
    const analysis::LabelCheck* worst_check = nullptr;
    for (const auto& c : a.label_checks()) {
      if (!c.has_error()) continue;
      ++compared;
      if (c.error() > 0.005) ++over;
      if (!worst_check || c.error() > worst) worst = c.error(), worst_check = &c;
    }
    s += fmt::format("labelled figures: {} compared, {} off by more than 0.5%", compared, over);
    if (worst_check) {
      s += fmt::format("; worst {} of rank {} ({:.3f} %)", worst_check->key(), worst_check->rank(),
                       100.0 * worst);
    }
    s += "\n";
  }
  s += FormatClusterOutput(a);
  for (const auto& e : a.hta_errors()) s += "  HTA: " + e + "\n";
  for (const auto& w : a.warnings()) s += "warning: " + w + "\n";
  for (const auto& k : a.skipped_ranks()) {
    s += "skipped " + (k.has_rank() ? "rank " + std::to_string(k.rank()) + " (" + k.file() + ")"
                                    : k.file()) +
         ": " + k.error() + "\n";
  }
  return s;
}

}  // namespace moetrace
