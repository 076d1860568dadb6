// BuildPlan: the RL iteration schedule (tracegen/rl/README.md, "Mechanisms"
// and "Schedule"). Every time of the plan is decided here.
#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/core.h>

#include "formats/errors.h"

#include "tracegen/config.h"
#include "tracegen/engine.h"
#include "tracegen/rl/inference_cost.h"
#include "tracegen/rl/response_lengths.h"
#include "tracegen/rl/rl_config.h"
#include "tracegen/rl/rl_labels.h"
#include "tracegen/rl/rl_plan.h"
#include "tracegen/rl/rollout_sim.h"
#include "tracegen/rl/switch_cost.h"

namespace moetrace::tracegen::rl {
namespace {

// The actor update's pre-training run: the `parallel` layout, one global
// batch per optimizer step (prompts x samples / update_steps sequences),
// sequences packed: seq_length = prompt + the iteration's mean response,
// rounded up to a multiple of tp (sequence parallelism splits it).
RunConfig TrainConfig(const RunConfig& c, const std::vector<int64_t>& lengths) {
  RunConfig t = c;
  t.clear_rl();
  const double sum = std::accumulate(lengths.begin(), lengths.end(), 0.0);
  const int64_t mean = static_cast<int64_t>(std::ceil(sum / double(lengths.size())));
  const int64_t tp = c.parallel().tp();
  const int64_t seq = (c.rl().prompt_length() + mean + tp - 1) / tp * tp;
  t.mutable_model()->set_seq_length(static_cast<int32_t>(seq));
  t.mutable_parallel()->set_global_batch_size(
      static_cast<int32_t>(SequencesPerIteration(c) / c.rl().update_steps()));
  t.set_steps(c.rl().update_steps());
  Validate(t);
  return t;
}

void Add(Plan* plan, int card, int iteration, Task task, TimeNs start, TimeNs dur) {
  // Phases follow each other from 0: past kMaxPlanNs the next sum could
  // overflow int64, so the schedule stops there with the config to blame.
  if (dur < 0 || dur > kMaxPlanNs || start > kMaxPlanNs - dur)
    ThrowInputError("config", "hardware",
                    fmt::format("the RL schedule runs past {:.0e} ns ({} of iteration {}): check "
                                "the hardware figures and rl.iterations",
                                double(kMaxPlanNs), TaskName(task), iteration));
  PhaseSpan s;
  s.iteration = iteration;
  s.task = task;
  s.start = start;
  s.end = start + dur;
  plan->card[card].phases.push_back(s);
}

}  // namespace

Plan BuildPlan(const RunConfig& config, int threads) {
  Plan plan;
  plan.config = config;
  const RlConfig& rl = config.rl();
  const RlRolloutConfig& r = rl.rollout();
  const int world = config.parallel().world_size();
  const int iterations = rl.iterations();
  const bool separate = rl.placement() == "separate";
  const bool ppo = rl.algorithm() == "ppo";
  plan.cards = TotalCards(config);
  plan.card.resize(plan.cards);
  for (int c = 0; c < world; ++c) plan.card[c].train_rank = c;

  // Rollout instances: consecutive cards of the pool (the training cards
  // themselves when colocated, the cards after them when separate).
  const InferenceLayout layout{r.tp(), r.dp(), r.ep()};
  const int pool_first = separate ? world : 0;
  const int n_inst = RolloutPoolCards(config) / layout.cards();
  plan.instances.resize(n_inst);
  for (int i = 0; i < n_inst; ++i)
    for (int j = 0; j < layout.cards(); ++j) {
      const int card = pool_first + i * layout.cards() + j;
      plan.instances[i].cards.push_back(card);
      plan.card[card].instance = i;
    }
  const InferenceCost infer(config, layout);
  plan.infer_weight_bytes = std::llround(infer.WeightBytesPerCard());

  const int64_t seqs = SequencesPerIteration(config);
  std::vector<std::vector<int64_t>> lengths(iterations);
  for (int it = 0; it < iterations; ++it)
    lengths[it] = DrawResponseLengths(rl, config.seed(), it, seqs);
  plan.response_lengths = lengths[0];
  plan.generated_tokens.assign(iterations, 0);
  plan.trained_tokens.assign(iterations, 0);
  plan.staleness.assign(iterations, 0);

  // Actor update: simulated once, repeated every iteration.
  plan.train_config = TrainConfig(config, lengths[0]);
  plan.train_engine = std::make_shared<Engine>(plan.train_config);
  plan.train_engine->Simulate(threads);
  const std::vector<int64_t> update = plan.train_engine->RankEndTimes();
  const TimeNs update_max = *std::max_element(update.begin(), update.end());
  // Model FLOPs of one update (update_steps optimizer steps) per training card.
  const uint64_t critic_flops = static_cast<uint64_t>(std::llround(
      plan.train_engine->BaseMetadata().model_flops_per_step * plan.train_config.steps() / world));

  // Scoring: a forward over prompt + response tokens spread over the
  // training cards (the training layout's tp and expert group; the
  // pipeline's forward bubble is not modelled).
  const ParallelConfig& p = config.parallel();
  const InferenceCost score_cost(
      config, {p.tp(), world / p.tp(), p.ep() * (p.tp_extend_ep() ? p.tp() : 1)});
  std::vector<Task> scoring = {Task::kComputeLogProb, Task::kComputeRefLogProb};
  if (rl.reward_model()) scoring.push_back(Task::kComputeRmScore);
  if (ppo) scoring.push_back(Task::kComputeValues);
  const SwitchCosts sw = ComputeSwitchCosts(config);

  std::vector<TimeNs> rollout_end(iterations, 0);
  std::vector<std::vector<DoneSequence>> done(iterations);
  std::vector<int> version(iterations, 0);  // weight version rollout i used
  TimeNs pool_free = 0, train_free = 0;
  // A switch phase of card c: its transfer's bus and host-link parts.
  auto add_switch = [&](int c, int j, Task task, TimeNs t, const Transfer& x) {
    Add(&plan, c, j, task, t, x.dur());
    PhaseSpan& s = plan.card[c].phases.back();
    s.comm_dur = x.comm_dur;
    s.comm_bytes = x.comm_bytes;
    s.copy_dur = x.copy_dur;
    s.copy_bytes = x.copy_bytes;
  };
  // Places iteration j's training side: (reshard_to_train,) scoring, the
  // update(s), then reshard_to_infer or sync_weights.
  auto place_training = [&](int j) {
    TimeNs t = std::max(rollout_end[j], train_free);
    if (!separate) {
      for (int c = 0; c < world; ++c) add_switch(c, j, Task::kReshardToTrain, t, sw.to_train);
      t += sw.to_train.dur();
    }
    // The sequences this rollout completed (with partial rollout, some
    // started in an earlier one) are scored and trained.
    int64_t tokens = 0;
    double pairs = 0;
    for (const DoneSequence& d : done[j]) {
      const int64_t n = d.seq.prompt + d.seq.response;
      tokens += n;
      pairs += 0.5 * double(n) * double(n + 1);
    }
    const StepCost sc = score_cost.Prefill(tokens, pairs);
    for (Task task : scoring) {
      for (int c = 0; c < world; ++c) {
        Add(&plan, c, j, task, t, sc.dur);
        PhaseSpan& s = plan.card[c].phases.back();
        s.flops = sc.flops;
        s.bytes = sc.bytes;
        s.comm_dur = sc.comm;
        s.comm_bytes = sc.comm_bytes;
      }
      t += sc.dur;
    }
    // A card's update lasts its own run of the training engine; the next
    // phase waits for the slowest card (the update ends with a barrier).
    for (Task task : {Task::kUpdateActor, Task::kUpdateCritic}) {
      if (task == Task::kUpdateCritic && !ppo) continue;
      for (int c = 0; c < world; ++c) {
        Add(&plan, c, j, task, t, update[c]);
        // The critic (the actor's architecture) trains as the actor does, but
        // its events are not the engine's (they would be a second set of
        // optimizer steps): its span carries the update's model FLOPs per
        // card, which the emitter spreads over its range.
        if (task == Task::kUpdateCritic) plan.card[c].phases.back().flops = critic_flops;
      }
      t += update_max;
    }
    if (!separate) {
      for (int c = 0; c < world; ++c) add_switch(c, j, Task::kReshardToInfer, t, sw.to_infer);
      t += sw.to_infer.dur();
      pool_free = t;
    } else {
      // The rollout pool receives the weights between two of its rollouts.
      t = std::max(t, pool_free);
      for (int c = 0; c < plan.cards; ++c) add_switch(c, j, Task::kSyncWeights, t, sw.sync);
      t += sw.sync.dur();
      pool_free = t;
    }
    train_free = t;
  };

  // Partial rollout (staleness k >= 1): an iteration's rollout ends when its
  // quota of responses is done; the next iteration's prompts fill the slots
  // freed in the long tail, and what is still decoding carries over. A
  // response is trained at most k weight versions after the version that
  // started it, so the pipeline of separate pools (rollout i on version
  // >= i - k) spends the budget first: partial rollout runs only while a
  // response started now could still be trained next iteration. The last
  // iteration drains.
  const int k = rl.staleness();
  std::vector<InstanceRollout> inst;
  for (int i = 0; i < n_inst; ++i) inst.emplace_back(infer, r.max_batch(), rl.response_max());
  int enqueued = 0;
  auto enqueue_through = [&](int last) {
    for (; enqueued <= last && enqueued < iterations; ++enqueued) {
      std::vector<std::vector<RolloutSequence>> per_inst(n_inst);
      for (int64_t s = 0; s < seqs; ++s)
        per_inst[s % n_inst].push_back({rl.prompt_length(), lengths[enqueued][s]});
      for (int i = 0; i < n_inst; ++i) inst[i].Enqueue(enqueued, per_inst[i]);
    }
  };
  int trained = 0;  // iterations whose training side is placed
  for (int it = 0; it < iterations; ++it) {
    // Rollout `it` needs weights of version >= it - k (version v: after the
    // update of iteration v - 1). Colocated cards cannot run the next
    // rollout while they train, so there it is always version `it`.
    const int need = separate ? std::max(0, it - k) : it;
    while (trained < need) place_training(trained++);
    version[it] = trained;
    const bool partial = k > 0 && it + 1 < iterations && it + 1 - version[it] <= k;
    enqueue_through(partial ? it + 1 : it);
    // Responses started by rollouts before `oldest` must be done now.
    int oldest = it + 1;
    while (oldest > 0 && it + 1 - version[oldest - 1] <= k) --oldest;
    const TimeNs start = pool_free;
    TimeNs end = start;
    for (int i = 0; i < n_inst; ++i) {
      const int64_t quota = partial ? (seqs - i + n_inst - 1) / n_inst : -1;
      InstanceIteration ii = inst[i].Run(it, start, quota, oldest, &done[it]);
      uint64_t flops = 0, bytes = 0;
      TimeNs comm = 0;
      uint64_t comm_bytes = 0;
      for (const RolloutStep& st : ii.steps) {
        flops += st.flops;
        bytes += st.bytes;
        comm += st.comm_dur;
        comm_bytes += st.comm_bytes;
      }
      // An instance with nothing to decode (a drain whose carried-over
      // responses all sat on other instances) has no range: a zero-length
      // marker reads as an instant, which is no phase, and the card did not
      // wait for the long tail.
      for (int card : ii.end > ii.start ? plan.instances[i].cards : std::vector<int32_t>{}) {
        Add(&plan, card, it, Task::kGenerateSequences, ii.start, ii.end - ii.start);
        PhaseSpan& s = plan.card[card].phases.back();
        s.flops = flops;
        s.bytes = bytes;
        s.comm_dur = comm;
        s.comm_bytes = comm_bytes;
      }
      end = std::max(end, ii.end);
      plan.generated_tokens[it] += ii.generated_tokens;
      plan.instances[i].iterations.push_back(std::move(ii));
    }
    for (const DoneSequence& d : done[it]) {
      plan.trained_tokens[it] += d.seq.prompt + d.seq.response;
      plan.staleness[it] = std::max(plan.staleness[it], it - version[d.first_rollout]);
    }
    rollout_end[it] = end;
    pool_free = end;
  }
  while (trained < iterations) place_training(trained++);
  for (CardPlan& card : plan.card)
    std::stable_sort(card.phases.begin(), card.phases.end(),
                     [](const PhaseSpan& a, const PhaseSpan& b) { return a.start < b.start; });
  plan.labels = PlanLabels(plan);
  return plan;
}

}  // namespace moetrace::tracegen::rl
