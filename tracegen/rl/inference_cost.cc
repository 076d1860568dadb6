#include "tracegen/rl/inference_cost.h"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include "formats/errors.h"

namespace moetrace::tracegen::rl {
namespace {

// Parameters of one layer's attention, unsplit (as ModelShape counts them).
double AttentionParams(const ModelConfig& m) {
  const double h = m.hidden(), H = m.num_heads();
  if (m.kv_lora_rank() <= 0) return 4 * h * h;
  const double nope = m.qk_nope_dim(), rope = m.qk_rope_dim(), v = m.v_head_dim();
  const double q = m.q_lora_rank() > 0 ? h * m.q_lora_rank() + m.q_lora_rank() * H * (nope + rope)
                                       : h * H * (nope + rope);
  return q + h * (m.kv_lora_rank() + rope) + m.kv_lora_rank() * H * (nope + v) + H * v * h;
}

}  // namespace

double KvBytesPerToken(const ModelConfig& m) {
  if (m.kv_lora_rank() > 0)
    return double(m.num_layers()) * (m.kv_lora_rank() + m.qk_rope_dim()) * kInferBytes;
  const double head_dim = double(m.hidden()) / m.num_heads();
  return 2.0 * m.num_layers() * m.num_heads() * head_dim * kInferBytes;
}

InferenceCost::InferenceCost(const RunConfig& c, InferenceLayout layout) : layout_(layout) {
  const ModelConfig& m = c.model();
  const HardwareConfig& hw = c.hardware();
  layers_ = m.num_layers();
  experts_ = m.num_experts();
  moe_layers_ = experts_ > 0 ? m.num_layers() - m.dense_layers() : 0;
  dense_layers_ = m.num_layers() - moe_layers_;
  hidden_ = m.hidden();
  top_k_ = std::max(1, m.top_k());
  const double h = m.hidden(), tp = layout.tp;
  const double attn = AttentionParams(m), dense = 3.0 * h * m.dense_ffn();
  const double expert = 3.0 * h * m.expert_ffn(), router = h * experts_;
  const double vocab = 2.0 * m.vocab() * h;  // embedding + LM head
  dense_bytes_card_ = kInferBytes * (layers_ * attn / tp + dense_layers_ * dense / tp +
                                     moe_layers_ * (m.shared_experts() * expert / tp + router) +
                                     vocab / tp);
  expert_bytes_card_ =
      experts_ > 0 ? kInferBytes * moe_layers_ * (double(experts_) / layout.ep) * expert : 0;
  weight_bytes_card_ = dense_bytes_card_ + expert_bytes_card_;
  kv_token_card_ = m.kv_lora_rank() > 0 ? KvBytesPerToken(m) : KvBytesPerToken(m) / tp;
  linear_flops_token_ =
      2.0 * (layers_ * attn + dense_layers_ * dense +
             moe_layers_ * (router + (top_k_ + m.shared_experts()) * expert) + m.vocab() * h);
  double qk = m.qk_nope_dim() + m.qk_rope_dim(), v = m.v_head_dim();
  if (m.kv_lora_rank() <= 0) qk = v = h / m.num_heads();
  attn_flops_pair_ = 2.0 * layers_ * m.num_heads() * (qk + v);
  const bool opt = c.compute().optimized_kernels();
  peak_ = hw.peak_flops();
  eff_mm_ = opt ? hw.eff_matmul_opt() : hw.eff_matmul();
  eff_mem_ = opt ? hw.eff_vector_opt() : hw.eff_vector();
  hbm_bw_ = hw.hbm_bandwidth();
  hbm_ = hw.hbm_bytes();
  kv_fraction_ = c.rl().rollout().kv_memory_fraction();
  // A step's collectives stay inside a TP group (all-reduce) or an EP
  // group (all-to-all), contiguous cards: only a group wider than a node
  // (super-node) crosses the inter-node links. An instance spanning several
  // super-nodes (scoring over every training card of 4 CloudMatrix 384)
  // does not put them on RoCE: its DP replicas do not talk per step.
  const bool inter = std::max(layout.tp, layout.ep) > hw.devices_per_node();
  bus_bw_ = (inter ? hw.inter_node_bandwidth() : hw.intra_node_bandwidth()) * hw.comm_efficiency();
  alpha_ns_ = inter ? hw.alpha_inter_ns() : hw.alpha_intra_ns();
}

double InferenceCost::KvBudgetPerCard() const {
  return std::max(0.0, (hbm_ - weight_bytes_card_) * kv_fraction_);
}

int64_t InferenceCost::KvCapacityTokensPerGroup() const {
  // Clamped before the cast: a huge HBM over a tiny cache would overflow int64.
  return static_cast<int64_t>(std::min(std::floor(KvBudgetPerCard() / kv_token_card_), 1e15));
}

int64_t InferenceCost::KvCapacityTokens() const { return KvCapacityTokensPerGroup() * layout_.dp; }

TimeNs CheckedNs(double ns) {
  // llround of a value past int64 is undefined (in practice INT64_MIN): a
  // figure that far out is a config error, not a time.
  if (!(ns >= 0 && ns <= double(kMaxPlanNs)))
    ThrowInputError("config", "hardware",
                    fmt::format("an RL step lasts {:.3g} ns, past {:.0e} ns: check "
                                "hardware.peak_flops, hbm_bandwidth and the bus bandwidths",
                                ns, double(kMaxPlanNs)));
  return static_cast<TimeNs>(std::llround(ns));
}

uint64_t InferenceCost::CommBytes(int64_t tokens) const {
  if (layout_.ep <= 1 || moe_layers_ == 0) return 0;
  // The same send as CommNs's all-to-all term.
  const double ep = layout_.ep;
  const double send = double(tokens) / layout_.cards() * top_k_ * hidden_ * kInferBytes *
                      (ep - 1) / ep;
  return static_cast<uint64_t>(std::llround(moe_layers_ * 2 * send));
}

TimeNs InferenceCost::TpCommNs(int64_t tokens) const {
  if (layout_.tp <= 1) return 0;
  // Ring all-reduce of the attention (and dense MLP) output of this DP
  // group's tokens: 2(n-1)a + 2(n-1)/n S/B.
  const double tp = layout_.tp;
  const double s = double(tokens) / layout_.dp * hidden_ * kInferBytes;
  return CheckedNs((layers_ + dense_layers_) *
                   (2 * (tp - 1) * alpha_ns_ + 2 * (tp - 1) / tp * s / bus_bw_ * 1e9));
}

TimeNs InferenceCost::EpCommNs(int64_t tokens) const {
  if (layout_.ep <= 1 || moe_layers_ <= 0) return 0;
  // Dispatch and combine all-to-all per MoE layer: (n-1)a + send/B, a card
  // sending (ep-1)/ep of its tokens' top_k copies.
  const double ep = layout_.ep;
  const double send = double(tokens) / layout_.cards() * top_k_ * hidden_ * kInferBytes *
                      (ep - 1) / ep;
  return CheckedNs(moe_layers_ * 2 * ((ep - 1) * alpha_ns_ + send / bus_bw_ * 1e9));
}

TimeNs InferenceCost::CommNs(int64_t tokens) const { return TpCommNs(tokens) + EpCommNs(tokens); }

StepCost InferenceCost::Roofline(double flops_instance, double bytes_card, int64_t tokens) const {
  const double flops_card = flops_instance / layout_.cards();
  const double compute_ns = flops_card / (peak_ * eff_mm_) * 1e9;
  const double memory_ns = bytes_card / (hbm_bw_ * eff_mem_) * 1e9;
  StepCost s;
  s.tp_comm = TpCommNs(tokens);
  s.comm = s.tp_comm + EpCommNs(tokens);
  s.comm_bytes = CommBytes(tokens);
  s.dur = CheckedNs(std::max(compute_ns, memory_ns)) + s.comm;
  // Clamped below int64's end before llround (undefined past it); a step
  // that large is already rejected by its time on any plausible hardware.
  s.flops = static_cast<uint64_t>(std::llround(std::min(flops_card, 9e18)));
  s.bytes = static_cast<uint64_t>(std::llround(std::min(bytes_card, 9e18)));
  return s;
}

StepCost InferenceCost::Prefill(int64_t tokens, double attn_pairs) const {
  // Every weight is read once; with a chunk of prompts this is compute-bound.
  const double flops = tokens * linear_flops_token_ + attn_pairs * attn_flops_pair_;
  return Roofline(flops, weight_bytes_card_, tokens);
}

StepCost InferenceCost::Decode(int64_t batch, int64_t context) const {
  // Routed experts a step touches: each of the batch's tokens picks top_k of
  // E; an expert replica group (ep cards) serves batch * ep / cards tokens,
  // so an expert is left untouched with probability (1 - k/E)^tokens.
  double touched = 1.0;
  if (experts_ > 0) {
    const double tokens = double(batch) * layout_.ep / layout_.cards();
    touched = 1.0 - std::pow(1.0 - double(top_k_) / experts_, tokens);
  }
  const double bytes = dense_bytes_card_ + expert_bytes_card_ * touched +
                       double(context) / layout_.dp * kv_token_card_;
  const double flops = batch * linear_flops_token_ + double(context) * attn_flops_pair_;
  return Roofline(flops, bytes, batch);
}

}  // namespace moetrace::tracegen::rl
