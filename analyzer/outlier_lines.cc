#include "analyzer/outlier_lines.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace moetrace {
namespace {

std::string Ms(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }

}  // namespace

std::vector<OutlierGroup> GroupOutliers(std::vector<const analysis::SlowRank*> rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const auto* x, const auto* y) {
    if (x->metric() != y->metric()) return x->metric() < y->metric();
    return x->deviation() < y->deviation();
  });
  std::vector<OutlierGroup> groups;
  for (const analysis::SlowRank* r : rows) {
    if (groups.empty() || groups.back().metric != r->metric() ||
        r->deviation() - groups.back().max_dev > 0.05 ||
        (r->deviation() > 0) != (groups.back().max_dev > 0)) {
      groups.push_back({r->metric(), {}, 0, r->mean(), r->deviation(), r->deviation()});
    }
    OutlierGroup& g = groups.back();
    g.ranks.push_back(r->rank());
    g.value += r->value();
    g.max_dev = r->deviation();
  }
  for (OutlierGroup& g : groups) {
    g.value /= static_cast<double>(g.ranks.size());
    std::sort(g.ranks.begin(), g.ranks.end());
  }
  // Largest time away from the mean first.
  std::stable_sort(groups.begin(), groups.end(), [](const OutlierGroup& x, const OutlierGroup& y) {
    const double dx = std::abs(x.value - x.mean), dy = std::abs(y.value - y.mean);
    if (dx != dy) return dx > dy;
    return x.ranks.front() < y.ranks.front();
  });
  return groups;
}

std::string OutlierDeviation(const OutlierGroup& g) {
  if (std::round(1000 * g.min_dev) == std::round(1000 * g.max_dev)) {
    return fmt::format("{:+.1f} %", 100.0 * g.min_dev);
  }
  return fmt::format("{:+.1f}..{:+.1f} %", 100.0 * g.min_dev, 100.0 * g.max_dev);
}

namespace {

// "0-7,12,14" from sorted ranks; long lists end with the count.
std::string RankListText(const std::vector<int32_t>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    if (out.size() > 40) return out + fmt::format("... ({} ranks)", ranks.size());
    out += j > i ? fmt::format("{}-{}", ranks[i], ranks[j]) : fmt::format("{}", ranks[i]);
    i = j + 1;
  }
  return out;
}

}  // namespace

std::string OutlierRanks(const OutlierGroup& g) {
  return (g.ranks.size() == 1 ? "rank " : "ranks ") + RankListText(g.ranks);
}

bool IsNotableOutlier(const analysis::SlowRank& r, double step_ns) {
  return std::abs(r.value() - r.mean()) >= 0.01 * step_ns;
}

std::string FormatOutlierRanks(const google::protobuf::RepeatedPtrField<analysis::SlowRank>& rows,
                               double step, std::string_view indent, std::string_view json_path) {
  if (rows.empty()) return "";
  std::string s;
  // A 70% swing of a 0.3% free time must not bury a slow rank.
  std::vector<const analysis::SlowRank*> shown;
  for (const auto& r : rows) {
    if (IsNotableOutlier(r, step)) shown.push_back(&r);
  }
  const size_t minor = static_cast<size_t>(rows.size()) - shown.size();
  s += fmt::format("{}outlier ranks (more than 5% from the mean", indent);
  s += step > 0 ? " and at least 1% of the step):\n" : "):\n";
  const std::vector<OutlierGroup> groups = GroupOutliers(shown);
  for (size_t i = 0; i < groups.size() && i < 10; ++i) {
    const OutlierGroup& g = groups[i];
    s += fmt::format("{}  {:<11} {:<11} {}  ({} vs mean {} per step)\n", indent, OutlierRanks(g), g.metric,
                     OutlierDeviation(g),
                     Ms(g.value), Ms(g.mean));
  }
  if (groups.size() > 10) s += fmt::format("{}  ... {} more\n", indent, groups.size() - 10);
  if (minor > 0) {
    s += fmt::format("{}  {} smaller deviation{} (under 1% of the step): {} in --json\n", indent, minor,
                     minor == 1 ? "" : "s", json_path);
  }
  return s;
}

}  // namespace moetrace
