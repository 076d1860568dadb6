#include "analyzer/search/verify.h"

#include <algorithm>
#include <thread>

#include "tracegen/engine.h"
#include "tracegen/labels.h"
#include "tracegen/model.h"

namespace moetrace::search {

Figures Simulate(const tracegen::RunConfig& config, int threads) {
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  tracegen::Engine engine(config);
  engine.Simulate(threads);
  const std::vector<int64_t> ends = engine.RankEndTimes();
  const double step_ns = double(*std::max_element(ends.begin(), ends.end())) / config.steps();
  const tracegen::ModelShape s(config);
  Figures f;
  f.step_s = step_ns * 1e-9;
  f.tokens_per_s = double(config.parallel().global_batch_size()) * s.seq / f.step_s;
  f.mfu = ModelFlopsPerStep(config) / (f.step_s * s.world * config.hardware().peak_flops());
  tracegen::RankEmitter emitter(engine);
  Rank rank;
  double ep = 0, bubble = 0;
  for (int st = 0; st < s.pp; ++st) {
    emitter.Emit(s.RankOf(st, 0, 0), &rank);
    for (const tracegen::StepBreakdown& b : tracegen::ComputeBreakdown(rank)) {  // one per step
      f.peak_bytes = std::max(f.peak_bytes, b.peak_allocated);
      ep += double(b.class_exposed[size_t(CommClass::kEP)]);
      bubble += double(b.bubble);
    }
  }
  f.ep_exposed_s = ep / s.pp / config.steps() * 1e-9;
  f.bubble_s = bubble / s.pp / config.steps() * 1e-9;
  f.fits = f.peak_bytes <= config.hardware().hbm_bytes();
  return f;
}

}  // namespace moetrace::search
