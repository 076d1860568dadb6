// Quantities derived once from a RunConfig: model shapes, the parallel
// layout (which rank is where, which groups it belongs to), layer slices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tracegen/proto/run_config.pb.h"

namespace moetrace::tracegen {

struct ModelShape {
  // model
  int layers = 0, dense_layers = 0, hidden = 0, heads = 0;
  int q_lora = 0, kv_lora = 0, rope = 0, nope = 0, v_dim = 0;
  bool mla = false;
  int experts = 0, shared = 0, top_k = 1, expert_ffn = 0, dense_ffn = 0, vocab = 0, seq = 0;
  int mtp_layers = 0;
  // parallel
  int world = 1, dp = 1, tp = 1, pp = 1, vpp = 1, ep = 1;
  bool sp = false, extend = false;
  int expert_group = 1;  // ranks the experts are spread over
  int devices_per_node = 8;
  int mbs = 1, micro_batches = 1;
  std::string schedule;
  int model_stages = 1;
  std::vector<int> stage_first_layer, stage_layers;  // per model stage
  // The model stage whose slice runs the MTP modules' layers (their heads
  // and losses run on the last stage): parallel.mtp_stage, else the last.
  int mtp_stage = 0;

  explicit ModelShape(const RunConfig& c);
  // Replaces the layers per model stage (EDPB's balanced split).
  void SetStageLayers(const std::vector<int>& counts);

  bool IsMoe(int layer) const { return experts > 0 && layer >= dense_layers; }
  int64_t TokensPerMicroBatch() const { return int64_t{mbs} * seq; }
  // Tokens a rank holds outside attention (norms, sends): split by SP.
  int64_t TokensSeqSplit() const { return sp ? TokensPerMicroBatch() / tp : TokensPerMicroBatch(); }
  // Tokens a rank routes to experts.
  int64_t TokensMoe() const {
    return extend && tp > 1 ? TokensPerMicroBatch() / tp : TokensPerMicroBatch();
  }
  int ExpertsPerRank() const { return experts / expert_group; }
  int ExpertShard() const { return extend ? 1 : tp; }  // expert FFN split across TP

  // Layout: rank = (stage * dp + dp_index) * tp + tp_index.
  int Stage(int r) const { return r / (dp * tp); }
  int DpIndex(int r) const { return (r / tp) % dp; }
  int TpIndex(int r) const { return r % tp; }
  int RankOf(int stage, int dpi, int tpi) const { return (stage * dp + dpi) * tp + tpi; }
  int Node(int r) const { return r / devices_per_node; }

  // Groups as sorted global ranks, and a unique id per group.
  std::vector<int32_t> EpGroup(int r) const;
  int EpPosition(int r) const;
  uint64_t EpGroupId(int r) const;
  std::vector<int32_t> TpGroup(int r) const;
  std::vector<int32_t> DpGroup(int r) const;   // dense gradients
  std::vector<int32_t> EdpGroup(int r) const;  // expert gradients
  bool SpansNodes(const std::vector<int32_t>& g) const;

  // Parameters (elements) of one layer, as held by one rank.
  double AttentionParams() const;  // per rank (TP split)
  double DenseMlpParams() const;
  double ExpertParamsEach() const;  // one routed expert, per rank shard
  double SharedParams() const;
  double RouterParams() const { return double(hidden) * experts; }
  // Forward FLOPs of one layer for one micro-batch of the whole replica
  // (no TP split), routing balanced: the model FLOPs used for MFU.
  double LayerForwardFlops(int layer) const;
  // Causal attention core (FlashAttention forward) of one micro-batch, whole
  // layer (not TP-split): the part of LayerForwardFlops selective recompute
  // re-runs with FLOPs (its other re-run op, SwiGLU, is vector work).
  double AttentionCoreFlops() const;
  // FLOPs of one micro-batch's re-run forward under memory.recompute
  // (none | selective | full): what the hardware computes beyond the model.
  double RecomputeFlopsPerMicroBatch(const std::string& recompute) const;
};

}  // namespace moetrace::tracegen
