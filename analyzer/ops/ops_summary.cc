#include "analyzer/ops/ops_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "analyzer/human_number.h"

namespace moetrace::ops {
namespace {

std::string Us(double ns) { return fmt::format("{:.1f} us", ns / 1e3); }
std::string Ms(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }

}  // namespace

std::string OpLabel(const std::string& name, const std::string* shape) {
  if (shape == nullptr) return name;
  return shape->starts_with('[') ? name + " " + *shape : name + " [" + *shape + "]";
}

std::string FormatOpsSummary(const analysis::Analysis& a) {
  const analysis::Operators& o = a.cluster().operators();
  if (o.classes_size() == 0) return "";
  int64_t rank_steps = 0;
  for (const auto& r : a.ranks()) rank_steps += r.steps_size();
  const double per = static_cast<double>(std::max<int64_t>(rank_steps, 1));
  std::string s = "operators (device time summed over ranks; per rank and step):\n";
  std::vector<const analysis::OpClassTime*> classes;
  for (const auto& c : o.classes()) classes.push_back(&c);
  std::stable_sort(classes.begin(), classes.end(),
                   [](const auto* x, const auto* y) { return x->total_ns() > y->total_ns(); });
  s += "  classes          ";
  for (size_t i = 0; i < classes.size() && i < 5; ++i) {
    s += fmt::format("{} {} {:.1f} %", i == 0 ? "" : ",", classes[i]->op_class(),
                     100.0 * classes[i]->share_of_device());
  }
  s += "\n";
  for (int i = 0; i < o.top_size() && i < 5; ++i) {
    const analysis::OpStat& t = o.top(i);
    s += fmt::format("  {}. {} ({})  {} per step, {:.1f} %, {} ops, p50 {}, p99 {}\n", i + 1,
                     OpLabel(t.name(), t.has_shape() ? &t.shape() : nullptr), t.op_class(),
                     Ms(static_cast<double>(t.total_ns()) / per), 100.0 * t.share(),
                     HumanCount(static_cast<double>(t.count())), Us(static_cast<double>(t.p50_ns())),
                     Us(static_cast<double>(t.p99_ns())));
  }
  if (a.cluster().breakdown().host_bound_ns() > 0 && o.dispatch_size() > 0 &&
      o.dispatch(0).host_bound_ns() > 0) {
    const analysis::DispatchStat& d = o.dispatch(0);
    s += fmt::format(
        "  host-bound on    {}: {} of the {} host-bound wait per step ({} launches, mean {}, {} smaller "
        "than their launch)\n",
        d.name(), Ms(static_cast<double>(d.host_bound_ns()) / per),
        Ms(static_cast<double>(a.cluster().breakdown().host_bound_ns()) / per),
        HumanCount(static_cast<double>(d.count())), Us(static_cast<double>(d.mean_launch_ns())),
        HumanCount(static_cast<double>(d.small())));
  }
  return s;
}

}  // namespace moetrace::ops
