#include "tracegen/rl/rollout_sim.h"

#include <cmath>
#include <functional>
#include <queue>
#include <stdexcept>

namespace moetrace::tracegen::rl {

InstanceIteration SimulateRollout(const InferenceCost& cost, int max_batch,
                                  const std::vector<RolloutSequence>& seqs,
                                  int64_t response_cap, TimeNs start, int iteration) {
  InstanceIteration out;
  out.iteration = iteration;
  out.start = out.end = start;
  const int64_t capacity = cost.KvCapacityTokens();
  const double kv_card = cost.KvBytesPerTokenPerCard() / cost.layout().dp;
  // In flight: (decode step after which it is done, its index).
  using Done = std::pair<int64_t, size_t>;
  std::priority_queue<Done, std::vector<Done>, std::greater<Done>> active;
  size_t next = 0;
  int64_t reserved = 0, context = 0, decoded = 0;
  TimeNs t = start;
  while (next < seqs.size() || !active.empty()) {
    int64_t chunk_tokens = 0;
    double pairs = 0;
    int32_t admitted = 0;
    while (next < seqs.size() && static_cast<int64_t>(active.size()) < max_batch) {
      const RolloutSequence& s = seqs[next];
      const int64_t need = s.prompt + response_cap;
      if (reserved + need > capacity) break;
      if (need > capacity) throw std::logic_error("rollout: one sequence exceeds the KV cache");
      reserved += need;
      chunk_tokens += s.prompt;
      pairs += 0.5 * double(s.prompt) * double(s.prompt + 1);
      active.push({decoded + s.response, next});
      ++next;
      ++admitted;
    }
    if (active.empty()) throw std::logic_error("rollout: one sequence exceeds the KV cache");
    if (admitted > 0) {
      const StepCost c = cost.Prefill(chunk_tokens, pairs);
      context += chunk_tokens;
      RolloutStep step{t, c.dur, true, admitted, chunk_tokens,
                       std::llround(double(context) * kv_card), c.flops, c.bytes, c.comm};
      out.steps.push_back(step);
      t += c.dur;
    }
    const int64_t batch = static_cast<int64_t>(active.size());
    const StepCost c = cost.Decode(batch, context);
    context += batch;
    ++decoded;
    out.generated_tokens += batch;
    while (!active.empty() && active.top().first == decoded) {
      const RolloutSequence& s = seqs[active.top().second];
      context -= s.prompt + s.response;
      reserved -= s.prompt + response_cap;
      active.pop();
    }
    RolloutStep step{t, c.dur, false, static_cast<int32_t>(batch), batch,
                     std::llround(double(context) * kv_card), c.flops, c.bytes, c.comm};
    out.steps.push_back(step);
    t += c.dur;
  }
  out.end = t;
  return out;
}

}  // namespace moetrace::tracegen::rl
