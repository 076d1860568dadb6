#include "reports/findings.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "analyzer/human_number.h"
#include "analyzer/outlier_lines.h"

namespace moetrace {
namespace {

// Lower is better: good below `good`, bad from `bad` on. The cut points are
// rules of thumb for MoE training (reports/README.md), not part of METRICS.md.
Verdict Lower(double v, double good, double bad) {
  return v < good ? Verdict::kGood : v < bad ? Verdict::kWarn : Verdict::kBad;
}
Verdict Higher(double v, double good, double bad) {
  return v >= good ? Verdict::kGood : v > bad ? Verdict::kWarn : Verdict::kBad;
}

RankBar BarOf(const analysis::RankAnalysis& r) {
  RankBar bar;
  const double steps = std::max(1, r.steps_size());
  const analysis::Breakdown& b = r.breakdown();
  bar.label = fmt::format("rank {}", r.rank());
  bar.span = b.span_ns() / steps;
  bar.compute = b.compute_ns() / steps;
  bar.comm_exposed = b.comm_exposed_ns() / steps;
  bar.copy_exposed = b.copy_exposed_ns() / steps;
  bar.host_bound = std::min(b.host_bound_ns(), b.free_ns()) / steps;
  bar.other_free = (b.free_ns() - std::min(b.host_bound_ns(), b.free_ns())) / steps;
  return bar;
}

void AddTo(RankBar* sum, const RankBar& b) {
  sum->span += b.span;
  sum->compute += b.compute;
  sum->comm_exposed += b.comm_exposed;
  sum->copy_exposed += b.copy_exposed;
  sum->host_bound += b.host_bound;
  sum->other_free += b.other_free;
}

void Scale(RankBar* b, double f) {
  b->span *= f;
  b->compute *= f;
  b->comm_exposed *= f;
  b->copy_exposed *= f;
  b->host_bound *= f;
  b->other_free *= f;
}

}  // namespace

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kGood: return "good";
    case Verdict::kWarn: return "warn";
    case Verdict::kBad: return "bad";
    case Verdict::kInfo: return "info";
  }
  return "info";
}

std::string FormatDuration(double ns) {
  // From 1 s on in seconds: "8.010 s", not "8009.663 ms" (the 718B trace's EP time).
  if (std::abs(ns) >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  return fmt::format("{:.3f} ms", ns / 1e6);
}
std::string FormatPct(double r) { return fmt::format("{:.1f} %", 100.0 * r); }
std::string FormatBytes(double b) {
  const double a = std::abs(b);
  if (a >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
  if (a >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  if (a >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{:.0f} B", b);
}

Findings BuildFindings(const analysis::Analysis& a, size_t max_bars) {
  Findings f;
  const analysis::Cluster& c = a.cluster();
  const analysis::Breakdown& b = c.breakdown();
  f.title = fmt::format("{} rank{}, {} step{}{}", c.rank_count(), c.rank_count() == 1 ? "" : "s", c.steps(),
                        c.steps() == 1 ? "" : "s",
                        a.source().empty() ? "" : " (" + a.source() + ")");
  int64_t rank_steps = 0;
  for (const auto& r : a.ranks()) rank_steps += r.steps_size();
  const double span = static_cast<double>(b.span_ns());
  if (span > 0 && rank_steps > 0) {
    const auto& st = c.step_time_ns();
    const double spread = st.median() > 0 ? double(st.max() - st.min()) / st.median() : 0;
    f.headlines.push_back({"Step time", FormatDuration(st.median()),
                           fmt::format("median over ranks; min {}, max {}", FormatDuration(st.min()),
                                       FormatDuration(st.max())),
                           Lower(spread, 0.05, 0.15)});
    f.headlines.push_back({"Host-bound", FormatPct(c.ratios().host_bound()),
                           fmt::format("sync {}, dispatch {}", FormatPct(b.host_bound_sync_ns() / span),
                                       FormatPct(b.host_bound_dispatch_ns() / span)),
                           Lower(c.ratios().host_bound(), 0.05, 0.15)});
    const auto& ep = c.comm_by_class().ep();
    if (ep.total_ns() > 0) {
      f.headlines.push_back({"Unmasked EP comm", FormatPct(ep.unmasked_fraction()),
                             fmt::format("{} exposed of {} per step", FormatDuration(ep.exposed_ns() / double(rank_steps)),
                                         FormatDuration(ep.total_ns() / double(rank_steps))),
                             Lower(ep.unmasked_fraction(), 0.2, 0.5)});
    }
    if (b.comm_ns() > 0) {
      f.headlines.push_back({"Unmasked comm", FormatPct(c.ratios().unmasked_comm()), "all classes",
                             Lower(c.ratios().unmasked_comm(), 0.2, 0.5)});
    }
    f.headlines.push_back({"Pipeline bubble", FormatPct(c.ratios().bubble()), "exposed PP receive",
                           Lower(c.ratios().bubble(), 0.05, 0.15)});
    f.headlines.push_back({"Device free", FormatPct(c.ratios().free()), "nothing running",
                           Lower(c.ratios().free(), 0.1, 0.25)});
  }
  const auto& ei = c.expert_imbalance();
  if (ei.has_max_vio_mean()) {
    f.headlines.push_back({"Expert MaxVio", fmt::format("{:.3f}", ei.max_vio_mean()),
                           fmt::format("max {:.3f}; over EP ranks {:.3f}", ei.max_vio_max(), ei.ep_max_vio_mean()),
                           Lower(ei.max_vio_mean(), 0.2, 0.5)});
  } else if (!ei.source().empty()) {
    f.headlines.push_back({"EP MaxVio", fmt::format("{:.3f}", ei.ep_max_vio_mean()),
                           "from all-to-all sizes", Lower(ei.ep_max_vio_mean(), 0.2, 0.5)});
  }
  if (c.memory().peak_bytes() > 0) {
    int64_t capacity = 0;
    for (const auto& r : a.ranks()) {
      if (r.rank() == c.memory().rank() && r.memory().has_capacity_bytes()) capacity = r.memory().capacity_bytes();
    }
    const double peak = static_cast<double>(c.memory().peak_bytes());
    f.headlines.push_back(
        {"Peak memory", FormatBytes(peak),
         capacity > 0 ? fmt::format("rank {}, {} of {}", c.memory().rank(), FormatPct(peak / capacity),
                                    FormatBytes(capacity))
                      : fmt::format("rank {}", c.memory().rank()),
         capacity > 0 ? Lower(peak / capacity, 0.85, 0.95) : Verdict::kInfo});
  }
  if (c.has_mfu()) {
    f.headlines.push_back({"MFU", FormatPct(c.mfu()), "model FLOPs / peak", Higher(c.mfu(), 0.4, 0.25)});
  }
  if (c.has_tokens_per_s()) {
    f.headlines.push_back({"Throughput", HumanCount(c.tokens_per_s()) + " tokens/s", "", Verdict::kInfo});
  }

  // Slow ranks by the terminal's rule; the bars single out the same ranks.
  const double step = static_cast<double>(c.step_time_ns().median());
  for (const auto& s : c.slow_ranks()) {
    if (IsNotableOutlier(s, step)) {
      f.slow_ranks.push_back(s);
    } else {
      ++f.minor_slow_ranks;
    }
  }
  std::vector<const analysis::SlowRank*> notable;
  for (const auto& s : f.slow_ranks) notable.push_back(&s);
  f.slow_groups = GroupOutliers(notable);

  // Step breakdown bars.
  std::set<int32_t> slow;
  for (const auto& s : f.slow_ranks) slow.insert(s.rank());
  const size_t n = static_cast<size_t>(a.ranks_size());
  size_t with_steps = 0;
  for (const auto& r : a.ranks()) with_steps += r.breakdown().span_ns() > 0;
  if (with_steps > 0 && n <= max_bars) {
    for (const auto& r : a.ranks()) {
      if (r.breakdown().span_ns() <= 0) continue;
      RankBar bar = BarOf(r);
      bar.outlier = slow.count(r.rank()) > 0;
      f.bars.push_back(bar);
    }
  } else if (with_steps > 0) {
    f.grouped = true;
    const size_t groups = std::max<size_t>(1, max_bars - std::min<size_t>(slow.size(), max_bars / 4));
    const size_t per = (n + groups - 1) / groups;
    for (size_t g = 0; g * per < n; ++g) {
      RankBar sum;
      int count = 0;
      const size_t end = std::min(n, (g + 1) * per);
      for (size_t i = g * per; i < end; ++i) {
        if (a.ranks(i).breakdown().span_ns() <= 0) continue;
        AddTo(&sum, BarOf(a.ranks(i)));
        ++count;
      }
      if (count == 0) continue;
      Scale(&sum, 1.0 / count);
      sum.label = fmt::format("ranks {}-{} (mean)", a.ranks(g * per).rank(), a.ranks(end - 1).rank());
      f.bars.push_back(sum);
    }
    size_t shown = 0;
    for (const auto& r : a.ranks()) {
      if (!slow.count(r.rank()) || r.breakdown().span_ns() <= 0 || shown >= max_bars / 4) continue;
      RankBar bar = BarOf(r);
      bar.outlier = true;
      f.bars.push_back(bar);
      ++shown;
    }
  }

  // Communication by class, per step.
  if (rank_steps > 0) {
    const auto& cc = c.comm_by_class();
    const std::pair<const char*, const analysis::CommClassStats*> classes[] = {
        {"EP", &cc.ep()}, {"TP", &cc.tp()}, {"PP", &cc.pp()}, {"DP", &cc.dp()}, {"other", &cc.other()}};
    for (const auto& [name, s] : classes) {
      if (s->total_ns() <= 0) continue;
      f.classes.push_back({name, s->total_ns() / double(rank_steps), s->exposed_ns() / double(rank_steps),
                           s->unmasked_fraction()});
    }
  }
  for (const auto& w : a.warnings()) f.warnings.push_back(w);
  return f;
}

}  // namespace moetrace
