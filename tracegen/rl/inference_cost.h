// Costs of running the model for inference on one instance of tp x dp cards
// (attention: tp-way tensor parallel, dp-way data parallel; experts spread
// over ep of the instance's cards). Every figure comes from the model shape
// and the hardware calibration (roofline: max of FLOPs / (peak * eff_matmul)
// and bytes / (hbm_bandwidth * eff_vector); collectives: ASCEND.md's alpha-beta
// formulas with the calibration's alpha, bandwidth and comm_efficiency).
#pragma once

#include <cstdint>

#include "formats/trace.h"
#include "tracegen/proto/run_config.pb.h"

namespace moetrace::tracegen::rl {

struct InferenceLayout {
  int tp = 1, dp = 1, ep = 1;
  int cards() const { return tp * dp; }
};

// One step (prefill chunk or decode step) of the instance, per card.
struct StepCost {
  TimeNs dur = 0;      // max(compute, memory) + comm
  TimeNs comm = 0;     // EP all-to-all + TP all-reduce time inside dur
  uint64_t comm_bytes = 0;  // EP dispatch + combine bytes one card sends (CommBytes)
  TimeNs tp_comm = 0;  // of which the TP all-reduce
  uint64_t flops = 0;  // per card
  uint64_t bytes = 0;  // HBM bytes read per card
};

// Longest time the RL plan holds (~31 years): a step or a schedule past it
// comes from a nonsense figure and is an InputError, never an overflow.
inline constexpr TimeNs kMaxPlanNs = 1'000'000'000'000'000'000;
// ns rounded to TimeNs; an InputError past kMaxPlanNs (or NaN).
TimeNs CheckedNs(double ns);

// Weights are BF16 (2 bytes), as the KV cache.
inline constexpr double kInferBytes = 2.0;

// KV-cache bytes of one token over the whole model: MHA keeps K and V of
// every head, 2 * layers * heads * head_dim * bytes; MLA keeps only the
// compressed latent and the rope key, layers * (kv_lora_rank + qk_rope_dim)
// * bytes (the model has no separate kv_heads: heads = num_heads).
double KvBytesPerToken(const ModelConfig& m);

class InferenceCost {
 public:
  InferenceCost(const RunConfig& config, InferenceLayout layout);

  const InferenceLayout& layout() const { return layout_; }
  // Weight bytes held by one card of the instance: attention, dense MLPs,
  // shared experts and embedding/LM head split over tp; routed experts
  // split over ep (whole experts per card); routers replicated.
  double WeightBytesPerCard() const { return weight_bytes_card_; }
  // KV bytes per token held by one card that holds the token: MHA splits
  // heads over tp, MLA's latent is replicated over tp. A sequence lives on
  // the tp cards of one attention-DP group, so a card holding T of the
  // instance's tokens on average holds T / dp * this.
  double KvBytesPerTokenPerCard() const { return kv_token_card_; }
  // KV budget of one card: kv_memory_fraction of the HBM left after the
  // weights (0 if the weights do not fit).
  double KvBudgetPerCard() const;
  // Tokens of KV cache one attention-DP group (tp cards) can hold: a
  // sequence lives in one group, so this bounds a sequence's length.
  int64_t KvCapacityTokensPerGroup() const;
  // Tokens of KV cache the whole instance can hold (dp groups).
  int64_t KvCapacityTokens() const;

  // Prefill of `tokens` prompt tokens whose causal attention covers
  // `attn_pairs` (query, key) pairs (sum over sequences of L*(L+1)/2).
  StepCost Prefill(int64_t tokens, double attn_pairs) const;
  // One decode step: `batch` sequences each producing one token, attending
  // over `context` cached tokens in total.
  StepCost Decode(int64_t batch, int64_t context) const;
  // Per-step collectives for `tokens` tokens going through the instance:
  // the TP all-reduces plus the EP all-to-alls.
  TimeNs CommNs(int64_t tokens) const;
  // Bytes one card sends in those steps' EP all-to-alls (dispatch and
  // combine per MoE layer: (ep-1)/ep of its tokens' top_k copies); 0 without
  // EP. The TP all-reduce's bytes are not counted: the emitted collective is
  // the all-to-all.
  uint64_t CommBytes(int64_t tokens) const;
  TimeNs TpCommNs(int64_t tokens) const;
  TimeNs EpCommNs(int64_t tokens) const;

  // Model FLOPs of one token through the linear layers (2 x active params,
  // LM head included) and of one attention (query, key) pair over all layers.
  double LinearFlopsPerToken() const { return linear_flops_token_; }
  double AttnFlopsPerPair() const { return attn_flops_pair_; }

 private:
  StepCost Roofline(double flops_instance, double bytes_card, int64_t tokens) const;
  InferenceLayout layout_;
  double weight_bytes_card_ = 0, kv_token_card_ = 0;
  double dense_bytes_card_ = 0, expert_bytes_card_ = 0;  // routed experts held per card
  double linear_flops_token_ = 0, attn_flops_pair_ = 0;
  double peak_ = 0, eff_mm_ = 0, hbm_bw_ = 0, eff_mem_ = 0, hbm_ = 0, kv_fraction_ = 0;
  double bus_bw_ = 0, alpha_ns_ = 0;
  int layers_ = 0, moe_layers_ = 0, dense_layers_ = 0, hidden_ = 0, top_k_ = 1, experts_ = 0;
};

}  // namespace moetrace::tracegen::rl
