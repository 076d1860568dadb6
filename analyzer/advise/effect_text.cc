#include "analyzer/advise/effect_text.h"

#include <cmath>

#include <fmt/core.h>

namespace moetrace::advise {
namespace {

bool EndsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

bool IsRatio(std::string_view path) {
  return path.find(".ratios.") != std::string_view::npos || EndsWith(path, "unmasked_fraction");
}

// Relative change in percent, as the texts quote it.
double RelativePct(double before, double after) {
  return before != 0 ? 100.0 * (after - before) / before : 0;
}

}  // namespace

std::string MetricLabel(std::string_view path) {
  struct Name { std::string_view path, label; };
  static constexpr Name kNames[] = {
      {"cluster.ratios.host_bound", "host-bound"},
      {"cluster.breakdown.host_bound_dispatch_ns", "host-bound dispatch time (all ranks)"},
      {"cluster.breakdown.host_bound_sync_ns", "host-bound sync time (all ranks)"},
      {"cluster.ratios.bubble", "bubble"},
      {"cluster.ratios.free", "device free"},
      {"cluster.comm_by_class.EP.unmasked_fraction", "unmasked EP comm"},
      {"cluster.expert_imbalance.ep_max_vio_mean", "EP MaxVio"},
      {"cluster.memory.peak_bytes", "peak memory"},
      {"cluster.breakdown.compute_ns", "compute time (all ranks)"},
      {"cluster.step_time_ns.max", "slowest rank's step"},
      {"rl.iterations[].time_ns.mean", "mean RL iteration"},
  };
  for (const Name& n : kNames) {
    if (n.path == path) return std::string(n.label);
  }
  return std::string(path);
}

std::string MetricValue(std::string_view path, double v) {
  if (IsRatio(path)) return fmt::format("{:.1f} %", 100 * v);
  if (EndsWith(path, "_bytes")) return fmt::format("{:.2f} GiB", v / 1073741824.0);
  if (EndsWith(path, "_ns") || path.find("_ns.") != std::string_view::npos) {
    return std::abs(v) >= 1e10 ? fmt::format("{:.1f} s", v / 1e9) : fmt::format("{:.3f} ms", v / 1e6);
  }
  return fmt::format("{:.2f}", v);
}

bool ImprovesItsMetric(const Proposal& p) {
  if (p.rule == "memory_pressure") {
    return p.peak_after_bytes >= 0 && p.peak_after_bytes < 0.95 * double(p.peak_before_bytes);
  }
  return p.fixes_before > 0 && p.fixes_after < 0.99 * p.fixes_before;
}

std::string EffectText(const Proposal& p) {
  if (!p.predicted) return "";
  // The step change is not repeated here: every place a title is shown puts
  // it beside the title already (advise's "predicted: step ..." line, the
  // reports' "predicted step time" column).
  double before = p.fixes_before, after = p.fixes_after;
  std::string_view path = p.fixes;
  if (p.rule == "memory_pressure") {
    before = double(p.peak_before_bytes);
    after = double(p.peak_after_bytes);
    path = "cluster.memory.peak_bytes";
  }
  if (before <= 0) return "";
  // The slowest rank's step changing as the step does (the layout rule, the
  // bubble rule) would only repeat the step line; a slow rank's fix, which
  // shortens the slowest step more than the others, says something.
  // The RL rules' metric is the figure the step line shows (rl_rules.h).
  if (path == "rl.iterations[].time_ns.mean") return "";
  if (path == "cluster.step_time_ns.max" && std::abs((after - before) / before + p.gain) < 0.005) {
    return "";
  }
  const bool halved = after <= 0.5 * before;
  return fmt::format("{} {}{} -> {} ({:+.0f} %)", MetricLabel(path), halved ? "halved: " : "",
                     MetricValue(path, before), MetricValue(path, after), RelativePct(before, after));
}

std::string DropReason(const Proposal& p) {
  if (!p.predicted) return "";
  const bool memory_fix = p.rule == "memory_pressure";
  if (!ImprovesItsMetric(p)) {
    if (memory_fix) {
      return fmt::format("peak memory {} -> {}: saves less than 5 %",
                         MetricValue("peak_bytes", double(p.peak_before_bytes)),
                         MetricValue("peak_bytes", double(p.peak_after_bytes)));
    }
    return fmt::format("{} {} -> {}: the plan does not lower its own metric", MetricLabel(p.fixes),
                       MetricValue(p.fixes, p.fixes_before), MetricValue(p.fixes, p.fixes_after));
  }
  // Memory fixes trade time for memory; every other proposal must save time,
  // at least as printed (-0.1 %): "-0.0 %" is no gain.
  if (!memory_fix && p.gain < 0.0005) {
    return fmt::format("step time {:+.1f} %: no gain", -100 * p.gain);
  }
  return "";
}

}  // namespace moetrace::advise
