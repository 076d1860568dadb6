#include "tracegen/rl/inference_cost.h"

#include <gtest/gtest.h>

#include <cmath>

#include "formats/errors.h"
#include "tracegen/config.h"

namespace moetrace::tracegen::rl {
namespace {

RunConfig Tiny(std::vector<std::string> sets = {}) { return BuildConfig({"tiny-rl", "", sets, 0}); }

TEST(KvCache, MlaKeepsTheCompressedLatent) {
  // tiny-rl: 4 layers, kv_lora_rank 128, qk_rope_dim 32, BF16:
  // 4 * (128 + 32) * 2 = 1280 bytes per token.
  EXPECT_DOUBLE_EQ(KvBytesPerToken(Tiny().model()), 1280);
  // Pangu 718B: 61 * (512 + 64) * 2 = 70272 bytes per token; 16K tokens of
  // one long response: 70272 * 16384 = 1151336448 bytes (1.15 GB).
  const RunConfig pangu = BuildConfig({"pangu-ultra-moe-718b-rl", "", {}, 0});
  EXPECT_DOUBLE_EQ(KvBytesPerToken(pangu.model()), 70272);
  EXPECT_DOUBLE_EQ(KvBytesPerToken(pangu.model()) * 16384, 1151336448.0);
}

TEST(KvCache, MultiHeadKeepsKeysAndValuesOfEveryHead) {
  // Without MLA: 2 * layers * heads * head_dim * bytes = 2 * 4 * 8 * 128 * 2.
  const RunConfig mha = Tiny({"model.kv_lora_rank=0", "model.q_lora_rank=0"});
  EXPECT_DOUBLE_EQ(KvBytesPerToken(mha.model()), 16384);
  // A card holds its tp share of the heads: tp 2 -> 8192 per token.
  InferenceCost cost(BuildConfig({"tiny-rl", "", {"model.kv_lora_rank=0", "model.q_lora_rank=0",
                                                  "rl.rollout.tp=2", "rl.rollout.dp=2"}, 0}),
                     {2, 2, 4});
  EXPECT_DOUBLE_EQ(cost.KvBytesPerTokenPerCard(), 8192);
}

// tiny-rl's model on an instance of tp 1, dp 4, ep 4 (elements):
//   attention  q 1024*256 + 256*8*96 = 458752; kv 1024*160 + 128*8*128 =
//              294912; o 8*64*1024 = 524288; total 1277952 per layer
//   dense MLP  3*1024*2816 = 8650752;  expert 3*1024*512 = 1572864
//   router     1024*16 = 16384;        embedding + LM head 2*32000*1024
// dense part per card, BF16: 2 * (4*1277952 + 8650752 + 3*(1572864 + 16384)
//   + 65536000) = 168132608; routed experts: 2 * 3 layers * 16/4 * 1572864
//   = 37748736; total 205881344 bytes.
TEST(InferenceCost, WeightsPerCard) {
  InferenceCost cost(Tiny(), {1, 4, 4});
  EXPECT_DOUBLE_EQ(cost.WeightBytesPerCard(), 205881344);
  EXPECT_DOUBLE_EQ(cost.KvBytesPerTokenPerCard(), 1280);
  // KV budget: 0.9 * (137438953472 - 205881344) = 123509764915.2 bytes per
  // card; / 1280 = 96492003.8 -> 96492003 tokens per card, x dp 4.
  EXPECT_EQ(cost.KvCapacityTokens(), 96492003 * 4);
}

// Decode of 8 sequences holding 1024 cached tokens in all, cloudmatrix-384
// with optimized kernels (eff_vector_opt 0.6, eff_matmul_opt 0.68):
//  experts touched: each EP group serves 8*4/4 = 8 tokens, an expert is left
//    out with probability (1 - 4/16)^8 = 6561/65536, so 37748736 *
//    (1 - 6561/65536) = 37748736 - 576*6561 = 33969600 expert bytes read;
//  KV read: 1024 / dp 4 * 1280 = 327680;
//  bytes 168132608 + 33969600 + 327680 = 202429888, at 3.2e12 * 0.6 B/s:
//    105432.23 ns -> memory-bound (the FLOPs take < 1 us);
//  EP all-to-all: a card sends 8/4 tokens * top-4 * 1024 * 2 B * 3/4 = 12288
//    B; (4-1)*4000 ns + 12288 / (392e9 * 0.8) s = 12039.18 ns, dispatch and
//    combine on 3 MoE layers: 72235.1 ns;
//  step 105432 + 72235 = 177667 ns.
TEST(InferenceCost, DecodeStepIsBoundByReadingWeightsAndCache) {
  InferenceCost cost(Tiny(), {1, 4, 4});
  StepCost s = cost.Decode(8, 1024);
  EXPECT_EQ(s.bytes, 202429888u);
  EXPECT_EQ(s.comm, 72235);
  EXPECT_EQ(s.dur, 177667);
  // Bytes of those all-to-alls: 12288 B per all-to-all, x 6 = 73728.
  EXPECT_EQ(s.comm_bytes, 73728u);
  EXPECT_EQ(cost.CommBytes(8), 73728u);
  // FLOPs: linear 2 * (4*1277952 + 8650752 + 3*(16384 + 5*1572864) +
  // 32000*1024) = 140345344 per token; attention 2 * 4 * 8 * (96 + 64) =
  // 10240 per (query, key) pair: (8*140345344 + 1024*10240) / 4 cards.
  EXPECT_DOUBLE_EQ(cost.LinearFlopsPerToken(), 140345344);
  EXPECT_DOUBLE_EQ(cost.AttnFlopsPerPair(), 10240);
  EXPECT_EQ(s.flops, 283312128u);
}

// Prefill of 8 prompts of 128 tokens: (1024 * 140345344 + 8 * 128*129/2 *
// 10240) / 4 = (143713632256 + 676331520) / 4 = 36097490944 FLOPs per card,
// at 752e12 * 0.68 FLOP/s: 70591.3 ns; weights 205881344 B read at 1.92e12
// B/s take 107229.9 ns: still memory-bound at this size. EP: 1024/4 tokens
// * 4 * 1024 * 2 * 3/4 = 1572864 B: 12000 + 5015.51 ns per all-to-all, x 6
// = 102093.1 ns.
TEST(InferenceCost, PrefillChunk) {
  InferenceCost cost(Tiny(), {1, 4, 4});
  StepCost s = cost.Prefill(1024, 8 * 128.0 * 129 / 2);
  EXPECT_EQ(s.flops, 36097490944u);
  EXPECT_EQ(s.comm, 102093);
  EXPECT_EQ(s.dur, 107230 + 102093);
  // 1572864 B per all-to-all x 6.
  EXPECT_EQ(s.comm_bytes, 9437184u);
}

// Without EP there is no all-to-all: no bytes (the TP all-reduce's time is
// in comm, not its bytes).
TEST(InferenceCost, NoExpertParallelSendsNoAllToAllBytes) {
  InferenceCost cost(BuildConfig({"tiny-rl", "", {"rl.rollout.tp=2", "rl.rollout.dp=2",
                                                  "rl.rollout.ep=1"}, 0}),
                     {2, 2, 1});
  const StepCost s = cost.Decode(8, 1024);
  EXPECT_GT(s.comm, 0);
  EXPECT_EQ(s.comm_bytes, 0u);
}

// TP and EP apart (the emitter writes them as two collectives). tp 2 x dp 2,
// ep 4, 8 tokens, bus 392e9 * 0.8 B/s, alpha 4000 ns. TP: a DP group's 4
// tokens * 1024 * 2 = 8192 B ring-all-reduced per layer and dense MLP (4 + 1):
// 5 * (2 * 4000 + 8192 / 313.6e9 s) = 5 * 8026.12 = 40131 ns. EP: 8/4 tokens
// * 4 copies * 2048 B * 3/4 = 12288 B: 3 MoE layers * 2 * (3 * 4000 + 39.18)
// = 72235 ns.
TEST(InferenceCost, TpAndEpCommApart) {
  InferenceCost cost(Tiny(), {2, 2, 4});
  EXPECT_EQ(cost.TpCommNs(8), 40131);
  EXPECT_EQ(cost.EpCommNs(8), 72235);
  const StepCost s = cost.Decode(8, 1024);
  EXPECT_EQ(s.tp_comm, 40131);
  EXPECT_EQ(s.comm, 40131 + 72235);
  EXPECT_EQ(InferenceCost(Tiny(), {1, 4, 4}).Decode(8, 1024).tp_comm, 0);
}

TEST(InferenceCost, HugeFiguresAreCheckedNotCast) {
  // 1e30 bytes of HBM over ~1.3 kB per token would be 7e26 tokens: clamped
  // to 1e15 before the cast (int64 overflow is undefined).
  InferenceCost big(Tiny({"hardware.hbm_bytes=1e30"}), {1, 4, 4});
  EXPECT_EQ(big.KvCapacityTokensPerGroup(), 1'000'000'000'000'000);
  EXPECT_EQ(big.KvCapacityTokens(), 4'000'000'000'000'000);
  // A time past 1e18 ns is an InputError, not llround's INT64_MIN.
  EXPECT_EQ(CheckedNs(1e18), 1'000'000'000'000'000'000);
  EXPECT_THROW(CheckedNs(1.01e18), InputError);
  EXPECT_THROW(CheckedNs(std::nan("")), InputError);
}

// Scoring on four CloudMatrix 384 (1,536 cards, TP 8, expert groups of 16)
// with four times the tokens: each TP and EP group still sits in one
// super-node, so a step's collectives cost what they cost on one (before:
// the instance's span put them on the 50 GB/s inter-node links, 3.2x the
// time on the 718B RL preset). A TP group wider than a node does cross.
TEST(InferenceCost, CollectivesStayInTheirGroupsSuperNode) {
  const RunConfig c = BuildConfig({"pangu-ultra-moe-718b-rl", "", {}, 0});
  const InferenceCost one(c, {8, 48, 16}), four(c, {8, 192, 16});
  EXPECT_GT(one.CommNs(384 * 4096), 0);
  EXPECT_EQ(four.CommNs(4 * 384 * 4096), one.CommNs(384 * 4096));
  RunConfig small_nodes = Tiny();
  small_nodes.mutable_hardware()->set_devices_per_node(2);
  const InferenceCost wide(small_nodes, {4, 1, 1});
  const InferenceCost narrow(Tiny(), {4, 1, 1});
  EXPECT_GT(wide.CommNs(1024), narrow.CommNs(1024));
}

}  // namespace
}  // namespace moetrace::tracegen::rl
