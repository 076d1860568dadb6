#include "tracegen/generate.h"

#include <algorithm>
#include <charconv>

#include <fmt/core.h>

#include "formats/errors.h"
#include "tracegen/engine.h"
#include "tracegen/labels.h"

namespace moetrace::tracegen {

GenerateSummary Generate(const RunConfig& config, const std::vector<int32_t>& ranks,
                         TraceSink& sink, const std::function<void(int, int)>& progress) {
  Engine engine(config);
  engine.Simulate();
  std::vector<int32_t> selected = ranks;
  if (selected.empty())
    for (int r = 0; r < engine.world_size(); ++r) selected.push_back(r);
  Metadata meta = engine.BaseMetadata();
  GenerateSummary summary;
  const double capacity = config.hardware().hbm_bytes();
  int done = 0;
  Rank rank;  // reused: keeps its columns' capacity from one rank to the next
  for (int32_t r : selected) {
    engine.EmitRank(r, &rank);
    auto labels = GroundTruthLabels(rank);
    meta.ground_truth.insert(meta.ground_truth.end(), std::make_move_iterator(labels.begin()),
                             std::make_move_iterator(labels.end()));
    MemoryPeak peak = FindMemoryPeak(rank);
    if (peak.peak > capacity) {
      std::string msg = fmt::format(
          "rank {}: out of memory: peak {:.2f} GiB > {:.2f} GiB HBM at t={} ns; largest holder: "
          "{} ({:.2f} GiB)",
          r, peak.peak / double(1 << 30), capacity / double(1 << 30), peak.at, peak.holder,
          peak.holder_bytes / double(1 << 30));
      meta.attributes.emplace_back(fmt::format("oom.rank{}", r), msg);
      if (summary.warnings.size() < 8) summary.warnings.push_back(msg);
    }
    summary.events += int64_t(rank.EventCount());
    sink.AddRank(rank);
    ++summary.ranks;
    if (progress) progress(++done, int(selected.size()));
  }
  sink.Finish(meta);
  return summary;
}

std::vector<int32_t> ParseRankSpec(std::string_view spec, int world) {
  std::vector<int32_t> out;
  auto num = [&](std::string_view s) {
    int v = -1;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size())
      ThrowInputError("--ranks", spec, fmt::format("'{}' is not a rank number", s));
    if (v < 0 || v >= world)
      ThrowInputError("--ranks", spec, fmt::format("rank {} outside 0-{}", v, world - 1));
    return v;
  };
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view part = spec.substr(0, comma);
    size_t dash = part.find('-');
    if (dash == std::string_view::npos) {
      out.push_back(num(part));
    } else {
      int a = num(part.substr(0, dash)), b = num(part.substr(dash + 1));
      if (b < a) ThrowInputError("--ranks", part, "range end before its start");
      for (int r = a; r <= b; ++r) out.push_back(r);
    }
    if (comma == std::string_view::npos) break;
    spec = spec.substr(comma + 1);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace moetrace::tracegen
