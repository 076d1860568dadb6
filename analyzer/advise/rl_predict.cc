#include "analyzer/advise/rl_predict.h"

#include <optional>

#include <fmt/core.h>

#include "analyzer/rl/rl_ranges.h"
#include "analyzer/rl/rl_section.h"
#include "analyzer/rl/rl_task.h"
#include "tracegen/config.h"
#include "tracegen/rl/rl_emit.h"
#include "tracegen/rl/rl_generate.h"
#include "tracegen/rl/rl_plan.h"

namespace moetrace::advise {
namespace {

namespace trl = tracegen::rl;

// The rise of the card's generated_tokens counter over [start, end], as
// analyze reads it: the emitter adds a decode step's tokens when the step
// ends, so the steps ending in (start, end] (any iteration: with partial
// rollout a range can hold carried-over work).
int64_t TokensIn(const trl::RolloutInstance& inst, TimeNs start, TimeNs end) {
  int64_t tokens = 0;
  for (const trl::InstanceIteration& it : inst.iterations) {
    for (const trl::RolloutStep& s : it.steps) {
      const TimeNs done = s.start + s.dur;
      if (!s.prefill && done > start && done <= end) tokens += s.new_tokens;
    }
  }
  return tokens;
}

}  // namespace

analysis::Rl PredictRl(const tracegen::RunConfig& config, int threads) {
  const trl::Plan plan = trl::BuildPlan(config, threads);
  std::vector<rl::CardPhases> cards;
  for (int32_t c = 0; c < plan.cards; ++c) {
    rl::CardPhases card;
    card.rank = c;
    for (const trl::PhaseSpan& s : plan.card[c].phases) {
      // The name the emitter writes, recognised as analyze recognises it.
      const std::string name = fmt::format("{}/{}", trl::RoleName(s.task), trl::TaskName(s.task));
      const std::optional<rl::Recognised> r = rl::Recognise(name);
      if (!r) continue;
      rl::PhaseRange range;
      range.iteration = s.iteration;
      range.task = r->task;
      range.role = r->role;
      range.start = s.start + trl::kRlBaseTime;
      range.end = s.end + trl::kRlBaseTime;
      if (r->task == rl::Task::kGenerateSequences && plan.card[c].instance >= 0) {
        range.tokens = TokensIn(plan.instances[plan.card[c].instance], s.start, s.end);
      }
      card.ranges.push_back(range);
    }
    cards.push_back(std::move(card));
  }
  Metadata meta;
  meta.attributes = trl::AnalyzerAttributes(plan);  // as generate writes them
  analysis::Analysis a;
  rl::FillRl(std::move(cards), meta, &a);
  return a.rl();
}

tracegen::RunConfig WithSets(const tracegen::RunConfig& config, const std::vector<std::string>& sets) {
  tracegen::RunConfig c = config;
  for (const std::string& s : sets) tracegen::ApplyOverride(&c, s);
  tracegen::Validate(c);
  return c;
}

}  // namespace moetrace::advise
