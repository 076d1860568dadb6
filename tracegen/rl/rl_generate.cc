#include "tracegen/rl/rl_generate.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <fmt/core.h>

#include "formats/errors.h"
#include "tracegen/config.h"
#include "tracegen/engine.h"
#include "tracegen/rank_stream.h"
#include "tracegen/rl/rl_emit.h"

namespace moetrace::tracegen::rl {

namespace {
using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}
int DefaultThreads(int threads) {
  return threads > 0 ? threads : int(std::max(1u, std::thread::hardware_concurrency()));
}
}  // namespace

GenerateSummary GeneratePlan(const Plan& plan, const std::vector<int32_t>& cards, TraceSink& sink,
                             const std::function<void(int, int)>& progress, int threads) {
  const auto start = Clock::now();
  const double cpu0 = ProcessCpuSeconds();
  threads = DefaultThreads(threads);
  GenerateSummary summary;
  // The actor update's pass 1 (BuildPlan normally ran it: idempotent).
  if (plan.train_engine) plan.train_engine->Simulate(threads);
  summary.times.simulate = Seconds(start, Clock::now());
  summary.times.simulate_cpu = ProcessCpuSeconds() - cpu0;
  const int n = int(plan.card.size());
  std::vector<int32_t> selected = cards;
  if (selected.empty())
    for (int c = 0; c < n; ++c) selected.push_back(c);
  for (int32_t c : selected)
    if (c < 0 || c >= n) ThrowInputError("--ranks", std::to_string(c), fmt::format("card {} outside 0-{}", c, n - 1));
  Metadata meta;
  if (plan.train_engine) meta = plan.train_engine->BaseMetadata();
  meta.source = "tracegen";
  meta.origin = plan.config.preset().empty() ? "config" : "preset:" + plan.config.preset();
  meta.producer = "moetrace tracegen";
  meta.config_json = ConfigToJson(plan.config);
  // The world is every card of the job; the training layout's dp/tp/pp/ep
  // describe only the cards that train (in config_json), so they are left
  // unknown here.
  meta.layout = WorldLayout();
  meta.layout.world_size = n;
  meta.layout.devices_per_node = plan.config.hardware().devices_per_node();
  // Per-step model FLOPs and tokens are a training step's over the training
  // world: an MFU from them over every card of an RL job would be wrong.
  meta.model_flops_per_step = 0;
  meta.tokens_per_step = 0;
  meta.attributes.emplace_back("tracegen.rl.algorithm", plan.config.rl().algorithm());
  meta.attributes.emplace_back("tracegen.rl.placement", plan.config.rl().placement());
  meta.attributes.emplace_back("tracegen.rl.cards", std::to_string(n));
  for (auto& kv : AnalyzerAttributes(plan)) meta.attributes.push_back(std::move(kv));
  // Labels are the plan's; its instants (start_ns) move with the events to
  // the trace's time base, its durations and counts are unchanged.
  meta.ground_truth = plan.labels;
  for (LabeledValue& l : meta.ground_truth) {
    const std::string_view key = l.key;
    if (key.size() >= 8 && key.substr(key.size() - 8) == "start_ns") l.value += double(kRlBaseTime);
  }
  const PhaseGroups groups = BuildPhaseGroups(plan);
  StreamOptions opts;
  opts.threads = threads;
  opts.hbm_bytes = plan.config.hardware().hbm_bytes();
  // Per-rank step labels (GroundTruthLabels): the actor update's optimizer
  // steps on the cards that train, each window ending at the step's last op
  // when the RL phases' stepless work follows (labels.cc); a rollout-only
  // card has no step and no such label.
  opts.rank_labels = true;
  StreamRanks(
      selected,
      [&]() -> RankEmitFn {
        auto emitter = std::make_shared<CardEmitter>(plan, groups);
        return [emitter](int32_t c, Rank* out) { emitter->Emit(c, out); };
      },
      opts, sink, &meta, &summary, progress);
  summary.times.total = Seconds(start, Clock::now());
  summary.times.total_cpu = ProcessCpuSeconds() - cpu0;
  return summary;
}

std::vector<std::pair<std::string, std::string>> AnalyzerAttributes(const Plan& plan) {
  std::vector<std::pair<std::string, std::string>> out;
  // The analyzer divides the summed rise of the cards' generated_tokens
  // counters by this (each card of an instance records the instance's
  // count; instances are of one size).
  if (!plan.instances.empty())
    out.emplace_back("rl.instance_cards", std::to_string(plan.instances[0].cards.size()));
  // What the ranges cannot show: the tokens each iteration trained, and its
  // weight lag (partial rollout's carried-over responses).
  for (size_t i = 0; i < plan.trained_tokens.size(); ++i)
    out.emplace_back(fmt::format("rl.trained_tokens.{}", i), std::to_string(plan.trained_tokens[i]));
  for (size_t i = 0; i < plan.staleness.size(); ++i)
    out.emplace_back(fmt::format("rl.staleness.{}", i), std::to_string(plan.staleness[i]));
  return out;
}

GenerateSummary GenerateRl(const RunConfig& config, const std::vector<int32_t>& cards, TraceSink& sink,
                           const std::function<void(int, int)>& progress, int threads) {
  const auto start = Clock::now();
  const double cpu0 = ProcessCpuSeconds();
  threads = DefaultThreads(threads);
  const Plan plan = BuildPlan(config, threads);
  const double plan_s = Seconds(start, Clock::now()), plan_cpu = ProcessCpuSeconds() - cpu0;
  GenerateSummary s = GeneratePlan(plan, cards, sink, progress, threads);
  // Building the plan is RL's pass 1.
  s.times.simulate += plan_s;
  s.times.simulate_cpu += plan_cpu;
  s.times.total = Seconds(start, Clock::now());
  s.times.total_cpu = ProcessCpuSeconds() - cpu0;
  return s;
}

}  // namespace moetrace::tracegen::rl
