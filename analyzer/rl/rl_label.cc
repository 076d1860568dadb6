#include "analyzer/rl/rl_label.h"

#include <algorithm>

#include "analyzer/label_check.h"

namespace moetrace::rl {

bool LabelFigure(const analysis::Rl& rl, int iteration, std::string_view key, double* actual,
                 double* time_denominator) {
  // FillRl lists the iterations in increasing order: a binary search keeps
  // checking every label linear in the labels (a scan made it labels x
  // iterations, minutes at 40 k iterations).
  const auto& all = rl.iterations();
  const auto at = std::lower_bound(
      all.begin(), all.end(), iteration,
      [](const analysis::RlIteration& i, int v) { return i.iteration() < v; });
  if (at == all.end() || at->iteration() != iteration) return false;
  const analysis::RlIteration* it = &*at;
  bool found = false;
  constexpr std::string_view kPhases = "phases.";
  if (key.starts_with(kPhases)) {
    std::string_view rest = key.substr(kPhases.size());
    const size_t dot = rest.find('.');
    if (dot == std::string_view::npos) return false;
    const std::string_view task = rest.substr(0, dot);
    for (const analysis::RlPhase& p : it->phases()) {
      if (p.task() == task) found = LookupNumber(p, rest.substr(dot + 1), actual);
    }
  } else {
    found = LookupNumber(*it, key, actual);
  }
  if (!found) return false;
  const double time = static_cast<double>(it->time_ns());
  if (key.ends_with("card_ns")) {
    *time_denominator = static_cast<double>(rl.cards()) * time;
  } else if (key.ends_with("_ns")) {
    *time_denominator = time;
  } else {
    *time_denominator = 0;
  }
  return true;
}

}  // namespace moetrace::rl
