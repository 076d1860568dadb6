// Making ops: the compute and collective op constructors with their cost
// model (roofline with per-class efficiencies; alpha-beta collectives), the
// chaining of ops into a block (Add, Chain), and the sizes the memory
// counters use: activation bytes a layer keeps per micro-batch and the
// parameters a pipeline stage holds.
#include <algorithm>
#include <cmath>
#include <string>

#include "tracegen/engine_internal.h"
#include "tracegen/op_cost.h"

namespace moetrace::tracegen {

EngineImpl::ActBytes EngineImpl::LayerActivation(int layer, double recv_tokens) const {
  // Korthikanti et al.: per layer s*b*h*(34 + 5*a*s/h) bytes; 15 sbh + 5as^2b
  // of it in attention+norms, 3 sbh + 4 sb*ffn in the MLP; with SP all of it
  // divided by t; without SP 7 + 3 sbh stay whole.
  const double t = shape.tp;
  const double sbh = double(shape.TokensPerMicroBatch()) * shape.hidden;
  const double s = shape.seq, a = shape.heads, bsz = shape.mbs;
  const bool split_all = shape.sp || shape.tp == 1;
  const std::string& rc = cfg.memory().recompute();
  double score = 5 * a * s * s * bsz / t;
  double attn = split_all ? 15 * sbh / t : 7 * sbh + 8 * sbh / t;
  double mlp;
  ActBytes out;
  if (shape.IsMoe(layer)) {
    // Per tensor: router probabilities, the tokens the dispatch all-to-all
    // delivered (the grouped GEMM's input), each expert's SwiGLU input
    // (2*ffn values) and output (ffn values, the down projection's input),
    // and the shared expert's.
    double tok = double(shape.TokensMoe());
    const double shard = shape.ExpertShard(), div = shape.extend ? 1 : t;
    const double fe = double(shape.expert_ffn), fs = fe * shape.shared;
    out.permuted = recv_tokens * 2.0 * shape.hidden;
    out.act_fn_out = recv_tokens * 2.0 * fe / shard + tok * 2.0 * fs / div;
    mlp = (split_all ? 3 * sbh / t : 3 * sbh) + tok * shape.experts * 4.0 + out.permuted +
          recv_tokens * 4.0 * fe / shard + tok * 4.0 * fs / div + out.act_fn_out;
  } else {
    double sbf = double(shape.TokensPerMicroBatch()) * shape.dense_ffn;
    mlp = (split_all ? 3 * sbh / t : 3 * sbh) + 4 * sbf / t;
  }
  out.full = attn + score + mlp;
  out.attention = attn;
  // FlashAttention never materialises the s x s scores: recomputing the
  // attention core (selective) rebuilds them tile by tile on chip, so no
  // transient.
  if (rc == "none") {
    out.kept = out.full;
  } else if (rc == "selective") {
    // Selective: attention core (Korthikanti) and, per tensor, the MoE
    // activation function (SwiGLU output rebuilt before the down
    // projection's backward, a cheap vector op).
    out.kept = attn + mlp - out.act_fn_out;
    out.extra = out.act_fn_out;
  } else {
    // Full: the re-run forward rebuilds what `none` keeps (the memory model
    // of `none` is Korthikanti's, scores included).
    out.kept = 2 * sbh / (split_all ? t : 1);
    out.extra = out.full - out.kept;
    out.attention = out.kept;  // the checkpointed layer input is what can be swapped
    out.permuted = 0;
  }
  return out;
}

void EngineImpl::ComputeParams(int stage, double* dense, double* expert) const {
  *dense = *expert = 0;
  auto add_slice = [&](int ms) {
    for (int l = shape.stage_first_layer[ms]; l < SliceEnd(ms); ++l) {
      *dense += shape.AttentionParams();
      if (l >= shape.layers) *dense += 2.0 * shape.hidden * shape.hidden / shape.tp;  // MTP projection
      if (shape.IsMoe(l)) {
        *dense += shape.RouterParams() + shape.SharedParams();
        *expert += shape.ExpertParamsEach() * shape.ExpertsPerRank();
      } else {
        *dense += shape.DenseMlpParams();
      }
    }
    if (ms == 0) *dense += double(shape.vocab) * shape.hidden / shape.tp;
    if (ms == shape.model_stages - 1) *dense += double(shape.vocab) * shape.hidden / shape.tp;
  };
  if (shape.schedule == "dualpipe") {
    add_slice(stage);
    if (shape.pp - 1 - stage != stage) add_slice(shape.pp - 1 - stage);
  } else {
    for (int c = 0; c < shape.vpp; ++c) add_slice(c * shape.pp + stage);
  }
  // The MTP input embeds the shifted tokens with the main model's word
  // embedding: a rank holding the MTP layers but not stage 0 keeps a copy
  // (Megatron builds the embedding where mtp_process holds too).
  if (stage == MtpEmbeddingStage()) *dense += double(shape.vocab) * shape.hidden / shape.tp;
}

Op EngineImpl::Compute(OpName n, OpClass cls, double flops, double bytes, Phase ph, int mb,
                       int layer, bool grad, double tpe) const {
  // The kernel follows the op's work: the token permutations are the
  // VectorSort-class kernels the published vector gain was measured on.
  Kernel k = Kernel::kVector;
  switch (cls) {
    case kMatMul: k = Kernel::kMatMul; break;
    case kFlashFwd: k = Kernel::kFlashFwd; break;
    case kFlashBwd: k = Kernel::kFlashBwd; break;
    case kGrouped: k = Kernel::kGrouped; break;
    case kVector: k = (n == kMoeInitRouting || n == kMoeFinalizeRouting) ? Kernel::kPermute : Kernel::kVector; break;
  }
  if (cls == kVector) flops = 0;
  const double t = ComputeOpSeconds(hw, cfg.compute().optimized_kernels(), k, flops, bytes, tpe,
                                    cfg.compute().kernel_gains() == "class");
  Op op;
  op.name = n;
  op.grad = grad;
  op.stream = kSCompute;
  op.cat = Category::kCompute;
  op.phase = ph;
  op.mb = mb;
  op.layer = layer;
  op.dur = static_cast<TimeNs>(std::ceil(t * 1e9 + hw.kernel_overhead_ns()));
  op.flops = static_cast<uint64_t>(flops);
  op.bytes = static_cast<uint64_t>(bytes);
  return op;
}

Op EngineImpl::Collective(RankSim& r, OpName n, CollectiveKind k, CommClass cc, uint64_t group,
                          const std::vector<int32_t>& members, double bytes, Phase ph, int mb,
                          int layer, bool grad) const {
  Op op;
  op.name = n;
  op.grad = grad;
  op.stream = kSComm;
  op.cat = Category::kCollective;
  op.phase = ph;
  op.mb = mb;
  op.layer = layer;
  op.ckind = k;
  op.cclass = cc;
  op.group = group;
  op.group_size = static_cast<int32_t>(members.size());
  op.bytes = static_cast<uint64_t>(bytes);
  const double nn = members.size();
  const bool inter = shape.SpansNodes(members);
  const double alpha = inter ? hw.alpha_inter_ns() : hw.alpha_intra_ns();
  double t = 0;
  switch (k) {
    case CollectiveKind::kAllReduce:
      t = 2 * (nn - 1) * alpha + TransferNs(2 * (nn - 1) / nn * bytes, inter);
      break;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      t = (nn - 1) * alpha + TransferNs((nn - 1) / nn * bytes, inter);
      break;
    default:
      t = (nn - 1) * alpha + TransferNs(bytes, inter);
  }
  op.dur = static_cast<TimeNs>(t);
  return op;
}

int32_t EngineImpl::Add(Block& b, int32_t& chain, const Op& op, bool depend) const {
  b.ops.push_back(op);  // one copy: Op is ~150 bytes and ops are built by the million
  return Chain(b, chain, depend);
}

int32_t EngineImpl::Chain(Block& b, int32_t& chain, bool depend) const {
  Op& op = b.ops.back();
  if (depend && op.dep < 0) op.dep = chain;
  chain = static_cast<int32_t>(b.ops.size() - 1);
  return chain;
}

}  // namespace moetrace::tracegen
