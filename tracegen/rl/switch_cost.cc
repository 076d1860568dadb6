#include "tracegen/rl/switch_cost.h"

#include <cmath>

#include "tracegen/rl/inference_cost.h"
#include "tracegen/rl/rl_config.h"

namespace moetrace::tracegen::rl {
namespace {

TimeNs BusNs(const HardwareConfig& hw, int cards, double bytes) {
  const bool inter = cards > hw.devices_per_node();
  const double bw = (inter ? hw.inter_node_bandwidth() : hw.intra_node_bandwidth()) *
                    hw.comm_efficiency();
  const double alpha = inter ? hw.alpha_inter_ns() : hw.alpha_intra_ns();
  return CheckedNs((cards - 1) * alpha + bytes / bw * 1e9);  // no llround overflow
}

TimeNs HostNs(const HardwareConfig& hw, double bytes) {
  return CheckedNs(bytes / hw.host_link_bandwidth() * 1e9);
}

}  // namespace

SwitchCosts ComputeSwitchCosts(const RunConfig& c) {
  const ParallelConfig& p = c.parallel();
  const RlRolloutConfig& r = c.rl().rollout();
  const HardwareConfig& hw = c.hardware();
  const int expert_group = p.ep() * (p.tp_extend_ep() ? p.tp() : 1);
  SwitchCosts s;
  // A training card holds 1/pp of the layers, split as an inference
  // instance of tp cards with experts over the expert group would be.
  s.train_weight_bytes = InferenceCost(c, {p.tp(), 1, expert_group}).WeightBytesPerCard() / p.pp();
  s.infer_weight_bytes = InferenceCost(c, {r.tp(), r.dp(), r.ep()}).WeightBytesPerCard();
  const double params = s.train_weight_bytes / kInferBytes;
  s.optimizer_bytes = 12.0 * params / (c.memory().distributed_optimizer() ? p.dp() : 1);
  const bool same = p.pp() == 1 && p.tp() == r.tp() && expert_group == r.ep() &&
                    r.tp() * r.dp() == p.world_size();
  const int cards = TotalCards(c);
  const double to_train = same ? 0 : s.train_weight_bytes;
  const double to_infer = same ? 0 : s.infer_weight_bytes;
  s.to_train = {BusNs(hw, cards, to_train), static_cast<uint64_t>(std::llround(to_train)),
                HostNs(hw, s.optimizer_bytes), static_cast<uint64_t>(std::llround(s.optimizer_bytes))};
  s.to_infer = {BusNs(hw, cards, to_infer), static_cast<uint64_t>(std::llround(to_infer)),
                HostNs(hw, s.optimizer_bytes), static_cast<uint64_t>(std::llround(s.optimizer_bytes))};
  s.sync = {BusNs(hw, cards, s.infer_weight_bytes),
            static_cast<uint64_t>(std::llround(s.infer_weight_bytes)), 0, 0};
  return s;
}

}  // namespace moetrace::tracegen::rl
