#include "reports/ops_rows.h"

#include <fmt/format.h>

#include <algorithm>

#include "analyzer/human_number.h"
#include "analyzer/ops/ops_summary.h"
#include "reports/findings.h"

namespace moetrace {

OpsRows BuildOpsRows(const analysis::Analysis& a, size_t max_top, size_t max_dispatch) {
  OpsRows out;
  const analysis::Operators& o = a.cluster().operators();
  if (o.classes_size() == 0) return out;
  int64_t rank_steps = 0;
  for (const auto& r : a.ranks()) rank_steps += r.steps_size();
  const double per = static_cast<double>(std::max<int64_t>(rank_steps, 1));
  std::vector<const analysis::OpClassTime*> classes;
  for (const auto& c : o.classes()) classes.push_back(&c);
  std::stable_sort(classes.begin(), classes.end(),
                   [](const auto* x, const auto* y) { return x->total_ns() > y->total_ns(); });
  for (const auto* c : classes) {
    out.classes.push_back({c->op_class(), FormatDuration(static_cast<double>(c->total_ns()) / per),
                           FormatPct(c->share_of_device()),
                           c->has_share_of_compute() ? FormatPct(c->share_of_compute()) : std::string("-")});
    out.class_share.push_back(c->share_of_device());
  }
  for (int i = 0; i < o.top_size() && static_cast<size_t>(i) < max_top; ++i) {
    const analysis::OpStat& t = o.top(i);
    out.top.push_back({ops::OpLabel(t.name(), t.has_shape() ? &t.shape() : nullptr), t.op_class(),
                       HumanCount(static_cast<double>(t.count())),
                       FormatDuration(static_cast<double>(t.total_ns()) / per),
                       FormatDuration(static_cast<double>(t.mean_ns())), FormatDuration(static_cast<double>(t.p50_ns())),
                       FormatDuration(static_cast<double>(t.p99_ns())), FormatPct(t.share())});
  }
  for (int i = 0; i < o.dispatch_size() && static_cast<size_t>(i) < max_dispatch; ++i) {
    const analysis::DispatchStat& d = o.dispatch(i);
    out.dispatch.push_back({d.name(), HumanCount(static_cast<double>(d.count())),
                            FormatDuration(static_cast<double>(d.host_ns()) / per),
                            FormatDuration(static_cast<double>(d.mean_launch_ns())),
                            HumanCount(static_cast<double>(d.small())),
                            FormatDuration(static_cast<double>(d.device_ns()) / per),
                            FormatDuration(static_cast<double>(d.host_bound_ns()) / per)});
  }
  out.note = a.cluster().rank_count() == 1
                 ? fmt::format("Device time of the one rank, per step; {} distinct operator names. "
                               "Percentiles are read from log histograms (within 3.2 %).",
                               o.distinct_names())
                 : fmt::format(
                       "Device time summed over {} ranks, per rank and step; {} distinct operator names. "
                       "Percentiles over ranks are read from merged log histograms (within 3.2 %).",
                       a.cluster().rank_count(), o.distinct_names());
  if (a.cluster().breakdown().host_bound_ns() > 0 && o.dispatch_size() > 0 && o.dispatch(0).host_bound_ns() > 0) {
    out.note += fmt::format(" The device waited longest for the host's launches of {} ({} per rank-step).",
                            o.dispatch(0).name(),
                            FormatDuration(static_cast<double>(o.dispatch(0).host_bound_ns()) / per));
  }
  return out;
}

}  // namespace moetrace
