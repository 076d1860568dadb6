#include "tracegen/rl/rollout_sim.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/core.h>

#include "formats/errors.h"

namespace moetrace::tracegen::rl {
InstanceRollout::InstanceRollout(const InferenceCost& cost, int max_batch, int64_t response_cap,
                                 int64_t max_steps)
    : cost_(cost), max_batch_(max_batch), response_cap_(response_cap),
      capacity_(cost.KvCapacityTokensPerGroup()), max_steps_(max_steps),
      reserved_(size_t(std::max(1, cost.layout().dp)), 0) {}

void InstanceRollout::Enqueue(int iteration, const std::vector<RolloutSequence>& seqs) {
  for (const auto& s : seqs) queue_.push_back({s, iteration});
}

TimeNs InstanceRollout::Advance(TimeNs t, TimeNs dur) {
  // Backstops behind ValidateRl's estimate: a plan that would not fit in
  // memory, or whose clock would pass int64, is refused, never attempted.
  if (++steps_ > max_steps_)
    ThrowInputError("config", "rl.response_max",
                    fmt::format("the rollout needs more than {} steps (lower rl.iterations, "
                                "rl.prompts_per_iteration or rl.response_max, or raise "
                                "rl.rollout.max_batch)",
                                max_steps_));
  if (dur > kMaxPlanNs - t)
    ThrowInputError("config", "hardware",
                    fmt::format("the rollout runs past {:.0e} ns: check the hardware figures",
                                double(kMaxPlanNs)));
  return t + dur;
}

InstanceIteration InstanceRollout::Run(int rollout, TimeNs start, int64_t quota, int oldest_kept,
                                       std::vector<DoneSequence>* done) {
  InstanceIteration out;
  out.iteration = rollout;
  out.start = out.end = start;
  const double kv_card = cost_.KvBytesPerTokenPerCard() / cost_.layout().dp;
  // A std heap with this order keeps the first sequence to finish on top.
  auto later = [](const Active& a, const Active& b) { return a.done_after > b.done_after; };
  // Partial rollout refills the slots its own sequences free; it does not
  // start more than a quota at once (spare slots stay spare, as without it).
  const int64_t slots = quota >= 0 ? std::min<int64_t>(max_batch_, std::max<int64_t>(quota, 1))
                                   : max_batch_;
  TimeNs t = start;
  int64_t finished = 0;
  // Sequences carried over from the last rollout are prefilled again.
  int64_t chunk_tokens = 0;
  double pairs = 0;
  int32_t admitted = 0;
  for (const Active& a : active_) {
    const int64_t n = a.seq.prompt + a.seq.response - (a.done_after - decoded_);
    chunk_tokens += n;
    pairs += 0.5 * double(n) * double(n + 1);
    ++admitted;
  }
  while (!queue_.empty() || !active_.empty()) {
    while (!queue_.empty() && static_cast<int64_t>(active_.size()) < slots) {
      const Queued& q = queue_.front();
      const int64_t need = q.seq.prompt + response_cap_;
      const auto group = std::min_element(reserved_.begin(), reserved_.end());
      if (*group + need > capacity_) break;
      *group += need;
      chunk_tokens += q.seq.prompt;
      context_ += q.seq.prompt;
      pairs += 0.5 * double(q.seq.prompt) * double(q.seq.prompt + 1);
      active_.push_back({q.seq, q.iteration, rollout, decoded_ + q.seq.response,
                         static_cast<int32_t>(group - reserved_.begin())});
      std::push_heap(active_.begin(), active_.end(), later);
      queue_.pop_front();
      ++admitted;
    }
    if (active_.empty()) throw std::logic_error("rollout: one sequence exceeds the KV cache");
    if (admitted > 0) {
      const StepCost c = cost_.Prefill(chunk_tokens, pairs);
      out.steps.push_back({t, c.dur, true, admitted, chunk_tokens,
                           std::llround(double(context_) * kv_card), c.flops, c.bytes, c.comm, c.comm_bytes,
                           c.tp_comm});
      t = Advance(t, c.dur);
      chunk_tokens = 0;
      pairs = 0;
      admitted = 0;
    }
    const int64_t batch = static_cast<int64_t>(active_.size());
    const StepCost c = cost_.Decode(batch, context_);
    context_ += batch;
    ++decoded_;
    out.generated_tokens += batch;
    while (!active_.empty() && active_.front().done_after == decoded_) {
      std::pop_heap(active_.begin(), active_.end(), later);
      const Active& a = active_.back();
      context_ -= a.seq.prompt + a.seq.response;
      reserved_[size_t(a.group)] -= a.seq.prompt + response_cap_;
      if (done) done->push_back({a.seq, a.iteration, a.first_rollout});
      ++finished;
      active_.pop_back();
    }
    out.steps.push_back({t, c.dur, false, static_cast<int32_t>(batch), batch,
                         std::llround(double(context_) * kv_card), c.flops, c.bytes, c.comm, c.comm_bytes,
                         c.tp_comm});
    t = Advance(t, c.dur);
    if (quota >= 0 && finished >= quota &&
        std::none_of(active_.begin(), active_.end(),
                     [&](const Active& a) { return a.first_rollout < oldest_kept; }))
      break;
  }
  out.end = t;
  return out;
}

InstanceIteration SimulateRollout(const InferenceCost& cost, int max_batch,
                                  const std::vector<RolloutSequence>& seqs,
                                  int64_t response_cap, TimeNs start, int iteration) {
  InstanceRollout inst(cost, max_batch, response_cap);
  inst.Enqueue(iteration, seqs);
  return inst.Run(iteration, start, -1, 0, nullptr);
}

}  // namespace moetrace::tracegen::rl
