// EDPB's data and pipeline parts in the engine (engine_edpb.cc): the
// attention work of packed documents per DP rank and micro-batch, its
// re-arrangement across DP, the MTP module on the last stage and the
// cost-balanced layer split.
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

}  // namespace
}  // namespace moetrace::tracegen
