#include "tracegen/rl/rl_config.h"

#include <fmt/core.h>

#include <algorithm>

#include "formats/errors.h"
#include "tracegen/rl/inference_cost.h"
#include "tracegen/rl/rollout_sim.h"

namespace moetrace::tracegen::rl {
namespace {

[[noreturn]] void KeyError(std::string_view key, std::string_view what) {
  ThrowInputError("config", key, what);
}

void AtLeast(std::string_view key, double v, double min) {
  if (!(v >= min)) KeyError(key, fmt::format("must be >= {} (got {})", min, v));
}

}  // namespace

bool HasRl(const RunConfig& c) { return c.has_rl() && !c.rl().algorithm().empty(); }

void ApplyRlDefaults(RunConfig* c) {
  if (!HasRl(*c)) return;
  RlConfig* rl = c->mutable_rl();
  if (!rl->has_iterations()) rl->set_iterations(1);
  if (!rl->has_samples_per_prompt()) rl->set_samples_per_prompt(1);
  if (!rl->has_response_distribution()) rl->set_response_distribution("fixed");
  if (!rl->has_response_sigma()) rl->set_response_sigma(0);
  if (!rl->has_response_max()) rl->set_response_max(rl->response_mean());
  if (!rl->has_placement()) rl->set_placement("colocated");
  if (!rl->has_staleness()) rl->set_staleness(0);
  if (!rl->has_reward_model()) rl->set_reward_model(false);
  if (!rl->has_update_steps()) rl->set_update_steps(1);
  RlRolloutConfig* r = rl->mutable_rollout();
  if (!r->has_tp()) r->set_tp(1);
  if (!r->has_dp()) r->set_dp(1);
  if (!r->has_ep()) r->set_ep(1);
  if (!r->has_max_batch()) r->set_max_batch(256);
  if (!r->has_kv_memory_fraction()) r->set_kv_memory_fraction(0.9);
}

int RolloutPoolCards(const RunConfig& c) {
  return c.rl().placement() == "separate" ? c.rl().rollout().cards() : c.parallel().world_size();
}

int TotalCards(const RunConfig& c) {
  return c.parallel().world_size() + (c.rl().placement() == "separate" ? c.rl().rollout().cards() : 0);
}

int64_t SequencesPerIteration(const RunConfig& c) {
  return int64_t{c.rl().prompts_per_iteration()} * c.rl().samples_per_prompt();
}

void ValidateRl(const RunConfig& c) {
  if (!HasRl(c)) return;
  const RlConfig& rl = c.rl();
  const RlRolloutConfig& r = rl.rollout();
  const ModelConfig& m = c.model();
  const ParallelConfig& p = c.parallel();
  if (rl.algorithm() != "grpo" && rl.algorithm() != "ppo")
    KeyError("rl.algorithm", "'" + rl.algorithm() + "' is not one of grpo, ppo");
  AtLeast("rl.iterations", rl.iterations(), 1);
  if (rl.iterations() > 1000) KeyError("rl.iterations", "more than 1000 iterations");
  AtLeast("rl.prompts_per_iteration", rl.prompts_per_iteration(), 1);
  AtLeast("rl.samples_per_prompt", rl.samples_per_prompt(), 1);
  AtLeast("rl.prompt_length", rl.prompt_length(), 1);
  AtLeast("rl.response_mean", rl.response_mean(), 1);
  if (SequencesPerIteration(c) > 10'000'000)
    KeyError("rl.prompts_per_iteration", "more than 10,000,000 sequences per iteration");
  const std::string& dist = rl.response_distribution();
  if (dist != "fixed" && dist != "lognormal")
    KeyError("rl.response_distribution", "'" + dist + "' is not one of fixed, lognormal");
  AtLeast("rl.response_sigma", rl.response_sigma(), 0);
  if (rl.response_sigma() > 4) KeyError("rl.response_sigma", "must be <= 4");
  if (rl.response_max() < rl.response_mean())
    KeyError("rl.response_max", fmt::format("{} is below rl.response_mean {}", rl.response_max(),
                                            rl.response_mean()));
  if (int64_t{rl.prompt_length()} + rl.response_max() > 10'000'000)
    KeyError("rl.response_max", "prompt + response longer than 10,000,000 tokens");
  if (rl.placement() != "separate" && rl.placement() != "colocated")
    KeyError("rl.placement", "'" + rl.placement() + "' is not one of separate, colocated");
  AtLeast("rl.staleness", rl.staleness(), 0);
  if (rl.staleness() > rl.iterations())
    KeyError("rl.staleness", fmt::format("{} exceeds rl.iterations {}", rl.staleness(),
                                         rl.iterations()));
  AtLeast("rl.update_steps", rl.update_steps(), 1);
  AtLeast("rl.rollout.tp", r.tp(), 1);
  AtLeast("rl.rollout.dp", r.dp(), 1);
  AtLeast("rl.rollout.ep", r.ep(), 1);
  AtLeast("rl.rollout.max_batch", r.max_batch(), 1);
  if (!(r.kv_memory_fraction() > 0 && r.kv_memory_fraction() <= 1))
    KeyError("rl.rollout.kv_memory_fraction",
             fmt::format("must be in (0, 1] (got {})", r.kv_memory_fraction()));
  if (rl.placement() == "separate") {
    AtLeast("rl.rollout.cards", r.cards(), 1);
    if (int64_t{r.cards()} + p.world_size() > 1'000'000)
      KeyError("rl.rollout.cards", "more than 1,000,000 cards");
  } else {
    // colocated: rl.rollout.cards is ignored (the rollout runs on every
    // card), but a negative count is a typo worth naming.
    AtLeast("rl.rollout.cards", r.cards(), 0);
  }
  const int64_t instance = int64_t{r.tp()} * r.dp();
  const int pool = RolloutPoolCards(c);
  if (instance > pool || pool % instance != 0)
    KeyError("rl.rollout.tp", fmt::format("an instance of tp*dp = {}*{} = {} cards does not "
                                          "divide the rollout pool of {} cards",
                                          r.tp(), r.dp(), instance, pool));
  if (instance % r.ep() != 0)
    KeyError("rl.rollout.ep", fmt::format("ep {} does not divide the instance's tp*dp = {}",
                                          r.ep(), instance));
  if (m.num_heads() % r.tp() != 0)
    KeyError("rl.rollout.tp", fmt::format("tp {} does not divide model.num_heads {}", r.tp(),
                                          m.num_heads()));
  if (m.num_experts() > 0 && m.num_experts() % r.ep() != 0)
    KeyError("rl.rollout.ep", fmt::format("ep {} does not divide model.num_experts {}", r.ep(),
                                          m.num_experts()));
  // The actor update trains each iteration's sequences as update_steps
  // global batches of the training layout.
  const int64_t seqs = SequencesPerIteration(c);
  if (seqs % rl.update_steps() != 0)
    KeyError("rl.update_steps", fmt::format("prompts*samples = {} sequences not divisible by {} "
                                            "update steps",
                                            seqs, rl.update_steps()));
  const int64_t per_step = seqs / rl.update_steps();
  const int64_t unit = int64_t{p.micro_batch_size()} * p.dp();
  if (per_step % unit != 0)
    KeyError("rl.prompts_per_iteration",
             fmt::format("{} sequences per update step is not a multiple of the training "
                         "layout's micro_batch_size*dp = {}",
                         per_step, unit));
  // The rollout's weights and at least one full-length sequence must fit.
  InferenceCost cost(c, {r.tp(), r.dp(), r.ep()});
  if (cost.WeightBytesPerCard() >= c.hardware().hbm_bytes())
    KeyError("rl.rollout.ep",
             fmt::format("rollout weights {:.1f} GB per card exceed the HBM of {:.1f} GB "
                         "(raise rl.rollout.tp / ep)",
                         cost.WeightBytesPerCard() / 1e9, c.hardware().hbm_bytes() / 1e9));
  // A sequence's cache lives in one attention-DP group (tp cards), so one
  // group, not the instance, must hold a full-length sequence.
  const int64_t seq_tokens = int64_t{rl.prompt_length()} + rl.response_max();
  const int64_t group_tokens = cost.KvCapacityTokensPerGroup();
  if (group_tokens < seq_tokens)
    KeyError("rl.rollout.kv_memory_fraction",
             fmt::format("an attention-DP group's KV cache holds {} tokens, less than one "
                         "sequence of prompt + response_max = {}",
                         group_tokens, seq_tokens));
  ValidateRlSize(c, group_tokens / seq_tokens);
}

void ValidateRlSize(const RunConfig& c, int64_t fit_per_group) {
  // The plan holds every rollout step and the file every step's events on
  // each card of its instance: bound them before any is made. A rollout of
  // n sequences, b at once, lasts at most (ceil(n / b) + 1) * response_max
  // decode steps (greedy refill: the last wave starts before
  // ceil(n / b) * response_max), and at most one prefill chunk per decode step.
  const RlConfig& rl = c.rl();
  const RlRolloutConfig& r = rl.rollout();
  const int64_t seqs = SequencesPerIteration(c);
  const int64_t instance = int64_t{r.tp()} * r.dp();
  const int64_t n_inst = RolloutPoolCards(c) / instance;
  const int64_t per_inst = (seqs + n_inst - 1) / n_inst;
  const int64_t batch =
      std::max<int64_t>(1, std::min<int64_t>(r.max_batch(), fit_per_group * r.dp()));
  const double steps = 2.0 * double(rl.iterations()) * double(n_inst) *
                       double((per_inst + batch - 1) / batch + 1) * double(rl.response_max());
  const std::string_view keys =
      "rl.iterations x rollout waves (rl.prompts_per_iteration x rl.samples_per_prompt / "
      "instances / rl.rollout.max_batch) x rl.response_max";
  if (steps > double(kMaxRolloutSteps))
    KeyError("rl.response_max", fmt::format("the rollout may take {:.3g} steps, more than {} "
                                            "({})",
                                            steps, kMaxRolloutSteps, keys));
  if (steps * double(instance) > double(kMaxRolloutStepCards))
    KeyError("rl.response_max", fmt::format("the rollout may emit {:.3g} card-steps, more than "
                                            "{} ({}, x cards per instance)",
                                            steps * double(instance), kMaxRolloutStepCards, keys));
  // Response lengths are drawn for every iteration up front.
  if (double(rl.iterations()) * double(seqs) > double(kMaxResponseLengths))
    KeyError("rl.iterations", fmt::format("rl.iterations x rl.prompts_per_iteration x "
                                          "rl.samples_per_prompt = {:.3g} responses, more than {}",
                                          double(rl.iterations()) * double(seqs),
                                          kMaxResponseLengths));
}

}  // namespace moetrace::tracegen::rl
