// EDPB's data and pipeline parts in the engine (engine_edpb.cc): the
// attention work of packed documents per DP rank and micro-batch, its
// re-arrangement across DP, the MTP module on the last stage or the one
// before it (parallel.mtp_stage), and the cost-balanced layer split.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tracegen/config.h"
#include "tracegen/documents.h"
#include "tracegen/generate.h"
#include "tracegen/simulate_for_test.h"

namespace moetrace::tracegen {
namespace {

// FLOPs of the forward FlashAttentionScore ops of a rank's first layer,
// per micro-batch.
std::vector<uint64_t> AttentionFlops(const Rank& r, int layer) {
  std::vector<uint64_t> out;
  for (const Track& tr : r.tracks) {
    if (tr.kind != TrackKind::kDeviceStream) continue;
    for (size_t i = 0; i < tr.events.size(); ++i)
      if (tr.events.phase[i] == Phase::kForward && tr.events.layer[i] == layer &&
          r.strings.Get(tr.events.name[i]) == "FlashAttentionScore") {
        if (out.size() <= size_t(tr.events.micro_batch[i])) out.resize(size_t(tr.events.micro_batch[i]) + 1);
        out[size_t(tr.events.micro_batch[i])] = tr.events.flops[i];
      }
  }
  return out;
}

int Count(const Rank& r, const std::string& name, Phase phase) {
  int n = 0;
  for (const Track& tr : r.tracks)
    if (tr.kind == TrackKind::kDeviceStream)
      for (size_t i = 0; i < tr.events.size(); ++i)
        if (tr.events.phase[i] == phase && r.strings.Get(tr.events.name[i]) == name) ++n;
  return n;
}

// tiny-moe: seq 1024, 8 heads of 64 + 32 (q/k) and 64 (v), TP 1, MBS 1:
// causal attention 2 * 1024^2 * 8 * 160 / 2 FLOPs per sequence.
constexpr double kFullAttention = 1342177280.0;

TEST(EngineEdpb, PackedDocumentsCutAttentionWork) {
  EXPECT_EQ(AttentionFlops(SimulateTinyMoe({"steps=1"}, {0}).ranks[0], 0),
            std::vector<uint64_t>(4, uint64_t(kFullAttention)));
  // Four documents of 256 tokens per sequence: 4 * 256^2 = a quarter of 1024^2.
  Trace t = SimulateTinyMoe({"steps=1", "data.doc_distribution=fixed", "data.doc_mean=256"}, {0});
  EXPECT_EQ(AttentionFlops(t.ranks[0], 0), std::vector<uint64_t>(4, 335544320u));
}

TEST(EngineEdpb, AttentionPerDpRankFollowsTheDocumentsAndEdpbRearrangesThem) {
  DocumentModel d;
  d.distribution = "lognormal";
  d.mean = 256;
  d.sigma = 1.0;
  d.seq = 1024;
  d.mbs = 1;
  d.dp = 8;
  d.micro_batches = 4;  // global batch 32 / (MBS 1 x DP 8)
  d.seed = 1;
  for (bool edpb : {false, true}) {
    d.rearrange = edpb;
    const std::vector<double> f = d.AttentionFactors(0);
    // Stage 0's ranks 0..7 are DP ranks 0..7 (TP 1).
    Trace t = SimulateTinyMoe({"steps=1", "data.doc_distribution=lognormal", "data.doc_mean=256", "data.doc_sigma=1",
                        std::string("routing.edpb=") + (edpb ? "true" : "false")},
                       {0, 1, 2, 3, 4, 5, 6, 7});
    double worst_sum = 0;
    for (int mb = 0; mb < 4; ++mb) {
      uint64_t worst = 0;
      for (int dp = 0; dp < 8; ++dp) {
        const uint64_t got = AttentionFlops(t.ranks[size_t(dp)], 0)[size_t(mb)];
        EXPECT_EQ(got, uint64_t(kFullAttention * f[size_t(dp * 4 + mb)])) << edpb << " " << dp << " " << mb;
        worst = std::max(worst, got);
      }
      worst_sum += double(worst);
    }
    // What the EP all-to-alls of a micro-batch wait for: the slowest DP
    // rank's attention, 71.9% of seq^2 on average without the
    // re-arrangement, 45.5% with it (the mean over ranks is 37.1%).
    EXPECT_NEAR(worst_sum / 4 / kFullAttention, edpb ? 0.4546 : 0.7188, 1e-4) << edpb;
  }
}

TEST(EngineEdpb, MtpModuleRunsOnTheLastStage) {
  // Stage 1 (rank 8) holds layers 2 and 3, the LM head, and the MTP module:
  // its input (embedding, norms, projection), layer 4, the head again.
  Trace t = SimulateTinyMoe({"steps=1", "model.mtp_layers=1", "model.mtp_modelled=true"}, {0, 8});
  const Rank& first = t.ranks[0];
  const Rank& last = t.ranks[1];
  EXPECT_EQ(Count(first, "MatMul_mtp_proj", Phase::kForward), 0);
  EXPECT_EQ(Count(last, "MatMul_mtp_proj", Phase::kForward), 4);
  EXPECT_EQ(Count(last, "MatMul_mtp_projGrad", Phase::kBackward), 4);
  EXPECT_EQ(Count(last, "MatMul_lm_head", Phase::kForward), 8);
  EXPECT_EQ(Count(last, "FlashAttentionScore", Phase::kForward), 3 * 4);
  EXPECT_EQ(AttentionFlops(last, 4).size(), 4u);
  // Without mtp_modelled the layer is recorded only (today's traces).
  Trace off = SimulateTinyMoe({"steps=1", "model.mtp_layers=1"}, {8});
  EXPECT_EQ(Count(off.ranks[0], "MatMul_mtp_proj", Phase::kForward), 0);
  EXPECT_EQ(Count(off.ranks[0], "MatMul_lm_head", Phase::kForward), 4);
}

std::string Split(const Trace& t) {
  for (const auto& [k, v] : t.metadata.attributes)
    if (k == "tracegen.layers_per_stage") return v;
  return "";
}

TEST(EngineEdpb, BalancedSplitMovesLayersOffTheHeadAndMtpStage) {
  // tiny-moe's LM head (vocab 32000, hidden 1024) costs about three of its
  // layers; with the MTP module (one more layer and the head again) the
  // last stage carries more than the four layers of the model even with
  // none of its own: the balanced split gives stage 0 all four layers and
  // stage 1 the head and the MTP module only (Megatron's "...|mL").
  Trace even = SimulateTinyMoe({"steps=1"}, {0});
  EXPECT_EQ(Split(even), "");
  Trace bal = SimulateTinyMoe({"steps=1", "parallel.balance_stages=true", "model.mtp_layers=1", "model.mtp_modelled=true"},
                       {0, 8});
  EXPECT_EQ(Split(bal), "4,0");
  EXPECT_EQ(AttentionFlops(bal.ranks[0], 3).size(), 4u);  // layer 3 moved to stage 0
  EXPECT_EQ(Count(bal.ranks[1], "FlashAttentionScore", Phase::kForward), 1 * 4);  // the MTP layer
  EXPECT_EQ(Count(bal.ranks[1], "MatMul_lm_head", Phase::kForward), 2 * 4);
}

// Bytes of the p2p sends of a rank in one phase, as distinct values.
std::vector<uint64_t> SendBytes(const Rank& r, Phase phase) {
  std::vector<uint64_t> out;
  for (const Track& tr : r.tracks)
    if (tr.kind == TrackKind::kDeviceStream)
      for (size_t i = 0; i < tr.events.size(); ++i)
        if (tr.events.phase[i] == phase && r.strings.Get(tr.events.name[i]) == "HcomSend" &&
            std::find(out.begin(), out.end(), tr.events.bytes[i]) == out.end())
          out.push_back(tr.events.bytes[i]);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(EngineEdpb, MtpLayerOnTheStageBeforeTheLoss) {
  // tiny-moe with 6 layers on PP 4 (DP 4, 8 micro-batches), padded with
  // noop layers 6,7 to 2,2,2,0 (the last stage holds no decoder layer) and
  // the MTP layer on stage 2 (ranks 8-11): its input and layer run there, its head
  // and loss on stage 3 (ranks 12-15) after the main head, as Megatron's
  // "...|tm|L" layouts run them; the p2p between stages 2 and 3 carries
  // the main and the MTP hidden states (2 x 1024 x 1024 x 2 bytes).
  const std::vector<std::string> base = {"steps=1", "parallel.pp=4", "parallel.dp=4", "parallel.ep=4",
                                         "model.mtp_layers=1", "model.mtp_modelled=true",
                                         "model.num_layers=6", "parallel.noop_layers=6,7"};
  std::vector<std::string> apart = base;
  apart.push_back("parallel.mtp_stage=2");
  Trace t = SimulateTinyMoe(apart, {4, 8, 12});
  const Rank& s1 = t.ranks[0];
  const Rank& s2 = t.ranks[1];
  const Rank& s3 = t.ranks[2];
  EXPECT_EQ(Count(s2, "MatMul_mtp_proj", Phase::kForward), 8);
  EXPECT_EQ(Count(s2, "MatMul_mtp_projGrad", Phase::kBackward), 8);
  EXPECT_EQ(Count(s2, "FlashAttentionScore", Phase::kForward), 3 * 8);  // layers 4, 5 and the MTP's
  EXPECT_EQ(Count(s2, "MatMul_lm_head", Phase::kForward), 0);
  EXPECT_EQ(Count(s3, "MatMul_mtp_proj", Phase::kForward), 0);
  EXPECT_EQ(Count(s3, "FlashAttentionScore", Phase::kForward), 0);
  EXPECT_EQ(Count(s3, "MatMul_lm_head", Phase::kForward), 2 * 8);
  EXPECT_EQ(Count(s3, "MatMul_lm_headGrad", Phase::kBackward), 2 * 8);
  EXPECT_EQ(SendBytes(s1, Phase::kForward), (std::vector<uint64_t>{2097152}));
  EXPECT_EQ(SendBytes(s2, Phase::kForward), (std::vector<uint64_t>{4194304}));
  EXPECT_EQ(SendBytes(s2, Phase::kBackward), (std::vector<uint64_t>{2097152}));
  EXPECT_EQ(SendBytes(s3, Phase::kBackward), (std::vector<uint64_t>{4194304}));
  EXPECT_EQ(Split(t), "");
  bool attr = false;
  for (const auto& [k, v] : t.metadata.attributes) attr |= k == "tracegen.mtp_stage" && v == "2";
  EXPECT_TRUE(attr);
  // The same split with the MTP on the last stage: today's placement.
  Trace last = SimulateTinyMoe(base, {8, 12});
  EXPECT_EQ(Count(last.ranks[0], "MatMul_mtp_proj", Phase::kForward), 0);
  EXPECT_EQ(Count(last.ranks[1], "MatMul_mtp_proj", Phase::kForward), 8);
  EXPECT_EQ(Count(last.ranks[1], "MatMul_lm_head", Phase::kForward), 2 * 8);
  EXPECT_EQ(SendBytes(last.ranks[0], Phase::kForward), (std::vector<uint64_t>{2097152}));
  // The total work is the same: the MTP layer moved, the heads did not.
  EXPECT_EQ(Count(s2, "FlashAttentionScore", Phase::kForward) + Count(s3, "FlashAttentionScore", Phase::kForward),
            Count(last.ranks[0], "FlashAttentionScore", Phase::kForward) +
                Count(last.ranks[1], "FlashAttentionScore", Phase::kForward));
}

TEST(EngineEdpb, SplitChoosesTheMtpStage) {
  // tiny-moe on PP 4 with the MTP modelled: EDPB's split runs the pipeline
  // with the MTP layer on stage 3 (today's) and on stage 2, and keeps the
  // latter: 1,1,2,0 with stage 3 running the two heads only. Pinned to the
  // last stage (-1) the split is 2,1,1,0 and no attribute is written.
  auto run = [](const std::string& pin) {
    std::vector<std::string> sets = {"steps=1", "parallel.pp=4", "parallel.dp=4", "parallel.ep=4",
                                     "model.mtp_layers=1", "model.mtp_modelled=true", "parallel.balance_stages=true"};
    if (!pin.empty()) sets.push_back("parallel.mtp_stage=" + pin);
    return SimulateTinyMoe(sets, {8, 12});
  };
  auto mtp_stage = [](const Trace& t) {
    for (const auto& [k, v] : t.metadata.attributes)
      if (k == "tracegen.mtp_stage") return v;
    return std::string();
  };
  Trace chosen = run("");
  EXPECT_EQ(Split(chosen), "1,1,2,0");
  EXPECT_EQ(mtp_stage(chosen), "2");
  EXPECT_EQ(Count(chosen.ranks[0], "MatMul_mtp_proj", Phase::kForward), 8);
  EXPECT_EQ(Count(chosen.ranks[1], "MatMul_lm_head", Phase::kForward), 2 * 8);
  Trace pinned = run("-1");
  EXPECT_EQ(Split(pinned), "2,1,1,0");
  EXPECT_EQ(mtp_stage(pinned), "");
  EXPECT_EQ(Count(pinned.ranks[1], "MatMul_mtp_proj", Phase::kForward), 8);
}

TEST(EngineEdpb, SplitWeighsEachMoeLayerByItsPredictedRouting) {
  // tiny-moe with 16 layers (1 dense) on PP 4 (DP 4, EP 4), the LM head on
  // stage 3. Balanced routing: every MoE layer costs the same, 5,5,4,2.
  // At skew 1 the layers differ by their most loaded EP rank, under
  // contiguous placement (no EDPB) otherwise than after EDPB's migration,
  // and each gives its own split.
  auto split = [](const std::string& skew, bool edpb) {
    return Split(SimulateTinyMoe({"steps=1", "model.num_layers=16", "parallel.pp=4", "parallel.dp=4", "parallel.ep=4",
                                  "parallel.balance_stages=true", "routing.skew=" + skew,
                                  std::string("routing.edpb=") + (edpb ? "true" : "false")},
                                 {0}));
  };
  EXPECT_EQ(split("0", true), "5,5,4,2");
  EXPECT_EQ(split("0", false), "5,5,4,2");
  EXPECT_EQ(split("1", false), "6,4,4,2");
  EXPECT_EQ(split("1", true), "5,4,5,2");
}

// A rank's constant memory counter (its first sample: weights, gradients).
int64_t Constant(const Rank& r, CounterKind kind) {
  for (const Track& tr : r.tracks)
    if (tr.kind == TrackKind::kCounter && tr.counter == kind) return int64_t(tr.sample_value[0]);
  return -1;
}

// The embedding-group all-reduces of a rank: (bytes, end) of each.
std::vector<std::pair<uint64_t, int64_t>> EmbeddingAllReduces(const Rank& r) {
  std::vector<std::pair<uint64_t, int64_t>> out;
  for (const Track& tr : r.tracks)
    if (tr.kind == TrackKind::kDeviceStream)
      for (size_t i = 0; i < tr.events.size(); ++i)
        if (r.strings.Get(tr.events.name[i]) == "HcomAllReduce_embedding_grads")
          out.emplace_back(tr.events.bytes[i], tr.events.End(i));
  return out;
}

TEST(EngineEdpb, MtpStageKeepsAnEmbeddingCopyAndAllReducesItsGradient) {
  // The MTP input embeds the shifted tokens with the word embedding, so the
  // rank holding the MTP layer but not stage 0 keeps a copy (vocab 32000 x
  // hidden 1024, TP 1: 32,768,000 parameters) and sums its fp32 gradient
  // with stage 0's after the DP reduction (Megatron's embedding group).
  // Split 2,2,2,0 on PP 4, MTP on stage 2: rank 8 holds MoE layers 4, 5,
  // the MTP layer (a MoE layer and the 2h -> h projection, 2 x 1024^2) and
  // the copy; rank 4 holds MoE layers 2, 3. So rank 8's weights are 1.5 x
  // rank 4's + 2 B x (2 x 1024^2 + 32,768,000), gradients at 4 B.
  const std::vector<std::string> base = {"steps=1", "parallel.pp=4", "parallel.dp=4", "parallel.ep=4",
                                         "model.mtp_layers=1", "model.mtp_modelled=true",
                                         "model.num_layers=6", "parallel.noop_layers=6,7"};
  std::vector<std::string> apart = base;
  apart.push_back("parallel.mtp_stage=2");
  Trace t = SimulateTinyMoe(apart, {0, 4, 8, 12});
  const int64_t w4 = Constant(t.ranks[1], CounterKind::kMemWeights);
  const int64_t g4 = Constant(t.ranks[1], CounterKind::kMemGradients);
  EXPECT_EQ(Constant(t.ranks[2], CounterKind::kMemWeights) - w4 * 3 / 2, 69730304);
  EXPECT_EQ(Constant(t.ranks[2], CounterKind::kMemGradients) - g4 * 3 / 2, 139460608);
  // One all-reduce per step of the 131,072,000-byte fp32 gradient, on
  // rank 0 and rank 8 only, ending together (one collective of the pair).
  const auto a0 = EmbeddingAllReduces(t.ranks[0]);
  const auto a8 = EmbeddingAllReduces(t.ranks[2]);
  ASSERT_EQ(a0.size(), 1u);
  ASSERT_EQ(a8.size(), 1u);
  EXPECT_EQ(a0[0].first, 131072000u);
  EXPECT_EQ(a8[0].first, 131072000u);
  EXPECT_EQ(a0[0].second, a8[0].second);
  EXPECT_TRUE(EmbeddingAllReduces(t.ranks[1]).empty());
  EXPECT_TRUE(EmbeddingAllReduces(t.ranks[3]).empty());  // the loss stage: the LM head, no copy
  // The MTP on the last stage (today's placement): rank 12 holds the copy.
  Trace last = SimulateTinyMoe(base, {0, 12});
  EXPECT_EQ(EmbeddingAllReduces(last.ranks[0]).size(), 1u);
  EXPECT_EQ(EmbeddingAllReduces(last.ranks[1]).size(), 1u);
  // Without the MTP modelled nothing holds a copy.
  std::vector<std::string> off = base;
  off[5] = "model.mtp_modelled=false";
  Trace none = SimulateTinyMoe(off, {0, 12});
  EXPECT_TRUE(EmbeddingAllReduces(none.ranks[0]).empty());
  EXPECT_TRUE(EmbeddingAllReduces(none.ranks[1]).empty());
}

}  // namespace
}  // namespace moetrace::tracegen
