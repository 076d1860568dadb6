#include "tracegen/generate.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <ctime>
#include <memory>
#include <thread>

#include <fmt/core.h>

#include "formats/errors.h"
#include "tracegen/engine.h"
#include "tracegen/rank_stream.h"
#include "tracegen/rl/rl_generate.h"

namespace moetrace::tracegen {

namespace {

using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}
}  // namespace

GenerateSummary Generate(const RunConfig& config, const std::vector<int32_t>& ranks,
                         TraceSink& sink, const std::function<void(int, int)>& progress,
                         int threads, std::string_view pass1) {
  if (!config.rl().algorithm().empty()) return rl::GenerateRl(config, ranks, sink, progress, threads);
  const auto start = Clock::now();
  const double cpu0 = ProcessCpuSeconds();
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  Engine engine(config);
  if (pass1.empty()) {
    engine.Simulate(threads);
  } else {
    engine.LoadPass1(pass1);
  }
  GenerateSummary summary;
  summary.times.simulate = Seconds(start, Clock::now());
  summary.times.simulate_cpu = ProcessCpuSeconds() - cpu0;
  std::vector<int32_t> selected = ranks;
  if (selected.empty())
    for (int r = 0; r < engine.world_size(); ++r) selected.push_back(r);
  Metadata meta = engine.BaseMetadata();
  StreamOptions opts;
  opts.threads = threads;
  opts.hbm_bytes = config.hardware().hbm_bytes();
  StreamRanks(
      selected,
      [&engine]() -> RankEmitFn {
        auto emitter = std::make_shared<RankEmitter>(engine);
        return [emitter](int32_t r, Rank* out) { emitter->Emit(r, out); };
      },
      opts, sink, &meta, &summary, progress);
  summary.times.total = Seconds(start, Clock::now());
  summary.times.total_cpu = ProcessCpuSeconds() - cpu0;
  return summary;
}

std::string SimulatePass1(const RunConfig& config, int threads) {
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  Engine engine(config);
  engine.Simulate(threads);
  return engine.SavePass1();
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
