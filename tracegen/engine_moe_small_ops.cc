// The small operators of an MoE layer (Megatron / MindSpeed alltoall token
// dispatcher on torch_npu) besides the fused gating, permute and unpermute
// kernels: each lasts a few microseconds on the device but costs a full
// operator launch on the host (framework + launch, or enqueue with the task
// queue). They are what the device runs out of after a host synchronisation:
// the host issues them one by one while the device finishes each at once.
// Sizes are the tensors each op reads and writes (vector class: HBM bound).
// Issued with host.unfused_routing_ops (the 718B preset); without it only the
// fused gating / permute / unpermute kernels are.
#include "tracegen/engine_internal.h"

namespace moetrace::tracegen {

void EngineImpl::AddRouterSmallOps(Block& b, int32_t& chain, int mb, int layer, Phase ph) const {
  if (!cfg.host().unfused_routing_ops()) return;
  const double Nm = double(shape.TokensMoe()), E = shape.experts, k = shape.top_k;
  // The router works in fp32 (Megatron moe_router_dtype): bf16 logits cast.
  Add(b, chain, Compute(kCastRouterLogits, kVector, 0, Nm * E * 6, ph, mb, layer, false));
  // Top-k weights normalised to sum 1 (DeepSeek / Pangu routing).
  Add(b, chain, Compute(kReduceSumTopkProbs, kVector, 0, Nm * k * 4 + Nm * 4, ph, mb, layer, false));
  Add(b, chain, Compute(kDivTopkProbs, kVector, 0, Nm * k * 8 + Nm * 4, ph, mb, layer, false));
  // Load-balancing loss: mean routing probability per expert times the
  // fraction of tokens each expert got (the histogram that is also the
  // dispatcher's token counts).
  Add(b, chain, Compute(kReduceMeanAuxProbs, kVector, 0, Nm * E * 4 + E * 4, ph, mb, layer, false));
  Add(b, chain, Compute(kHistcTokensPerExpert, kVector, 0, Nm * k * 4 + E * 4, ph, mb, layer, false));
  Add(b, chain, Compute(kMulAuxLoss, kVector, 0, E * 12, ph, mb, layer, false));
  Add(b, chain, Compute(kReduceSumAuxLoss, kVector, 0, E * 4 + 4, ph, mb, layer, false));
}

void EngineImpl::AddGroupList(Block& b, int32_t& chain, int mb, int layer, Phase ph) const {
  if (!cfg.host().unfused_routing_ops()) return;
  // The grouped GEMM's group list: cumulative tokens per local expert. (The
  // received tokens stay grouped as MoeInitRouting's expert-major order left
  // them; the unfused dispatcher's sort_chunks_by_idxs, a copy of every
  // received token, is not modelled.)
  Add(b, chain, Compute(kCumsumGroupList, kVector, 0, shape.ExpertsPerRank() * 16.0, ph, mb, layer, false));
}

void EngineImpl::AddSharedExpertAdd(Block& b, int32_t& chain, int mb, int layer, Phase ph) const {
  if (!cfg.host().unfused_routing_ops() || shape.shared <= 0) return;
  // Routed experts' output + shared expert's output (bf16, read 2, write 1).
  Add(b, chain, Compute(kAddSharedExpert, kVector, 0, double(shape.TokensMoe()) * shape.hidden * 6, ph, mb,
                        layer, false));
}

void EngineImpl::AddPermuteIndexOps(Block& b, int32_t& chain, int mb, int layer, Phase ph,
                                    bool repeat_interleave) const {
  if (!cfg.host().unfused_routing_ops()) return;
  const double Nm = double(shape.TokensMoe()), k = shape.top_k;
  // The alltoall dispatcher's index work once the counts are on the host:
  // the flattened top-k expert ids sorted (stable argsort, int64 out), the
  // source token of each sorted slot (// top-k), and the local expert id of
  // every token this rank will receive (repeat_interleave over the counts).
  Add(b, chain, Compute(kArgSortTopkIndices, kVector, 0, Nm * k * 12, ph, mb, layer, false));
  Add(b, chain, Compute(kFloorDivTokenIndices, kVector, 0, Nm * k * 16, ph, mb, layer, false));
  if (repeat_interleave)
    Add(b, chain, Compute(kRepeatInterleaveExpertIds, kVector, 0, Nm * k * 8, ph, mb, layer, false));
}

void EngineImpl::AddCountCopySyncs(Block& b, int32_t& chain, int mb, int layer, Phase ph, int ep) const {
  if (!cfg.host().unfused_routing_ops()) return;
  const double Nm = double(shape.TokensMoe()), k = shape.top_k, L = shape.ExpertsPerRank();
  // What MindSpeed's alltoall preprocess does after the output_splits read,
  // before the permutation (mindspeed/core/transformer/moe/token_dispatcher.py):
  // the tokens per local expert summed over the EP ranks (then copied to the
  // host non-blocking: the grouped GEMMs' counts).
  Add(b, chain, Compute(kSumTokensPerLocalExpert, kVector, 0, ep * L * 8 + L * 8, ph, mb, layer, false));
  // The local expert ids built from a Python list with torch.tensor(...,
  // device=npu): a blocking host-to-device copy, which torch_npu makes by
  // synchronising the stream first (copy_between_host_and_device), so the
  // host waits for the sum above. Then repeat_interleave over the device
  // counts without an output size: torch_npu's op-plugin sizes the output
  // with repeats.sum().item(), a reduction and a blocking read.
  Op sum = Compute(kSumRepeats, kVector, 0, ep * L * 8 + 8, ph, mb, layer, false);
  sum.host_sync = true;
  sum.sync_on = chain;
  const int32_t summed = Add(b, chain, sum);
  Op ri = Compute(kRepeatInterleaveExpertIds, kVector, 0, Nm * k * 8, ph, mb, layer, false);
  ri.host_sync = true;
  ri.sync_on = summed;
  Add(b, chain, ri);
}

}  // namespace moetrace::tracegen
