#include "analyzer/search/search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "analyzer/search/estimate.h"
#include "analyzer/search/verify.h"
#include "formats/errors.h"
#include "tracegen/config.h"
#include "tracegen/engine.h"
#include "tracegen/model.h"
#include "tracegen/probe.h"

namespace moetrace::search {
namespace {

tracegen::RunConfig Tiny(std::vector<std::string> sets = {}) {
  return tracegen::BuildConfig({"tiny-moe", "", sets, 1});
}

// tiny-moe's own layout on its 16 cards: TP 1, PP 2, DP 8 with EP 8, MBS 1.
Layout TinyEp8() {
  Layout l;
  l.tp = 1, l.pp = 2, l.vpp = 1, l.ep = 8, l.dp = 8, l.mbs = 1;
  return l;
}

// 2 TP x 3 PP x 2 VPP x 5 EP x 2 TP-extend-EP x 2 schedules = 240.
const std::vector<std::string> kSmall = {
    "parallel.tp=1,2", "parallel.pp=1,2,4", "parallel.vpp=1,2", "parallel.ep=1,2,4,8,16",
    "parallel.tp_extend_ep=false,true", "parallel.micro_batch_size=1",
    "schedule.kind=1f1b,interleaved", "comm.a2a=flat", "memory.recompute=none", "memory.swap=false"};

TEST(SearchSpace, CountsEveryReasonOnASmallSpace) {
  const tracegen::RunConfig base = Tiny();
  const Space space = MakeSpace(base, 16, kSmall);
  EXPECT_EQ(space.Size(), 240);
  SearchOptions o;
  o.top = 3;
  o.verify = 0;
  o.threads = 2;
  const SearchResult r = RunSearch(base, space, o);
  EXPECT_EQ(r.space_size, 240);
  // By hand (tiny-moe: 8 heads, 16 experts, 4 layers, batch 32): EP must
  // divide DP = 16/(TP PP); PP 4 leaves no room for VPP 2; VPP 2 needs the
  // interleaved schedule and PP > 1 (Megatron's rule: the 18 interleaved
  // PP 1 layouts whose EP fits, 5 of them TP-extend-EP at TP 1); TP-extend-EP
  // at TP 1 and interleaved at VPP 1 are other candidates' runs.
  EXPECT_EQ(r.valid, 40);
  EXPECT_EQ(r.feasible, 40);  // 64 GiB holds every tiny-moe layout
  const std::map<std::string, int64_t, std::less<>> want = {
      {"duplicate", 58}, {"parallel.ep", 72}, {"parallel.pp", 20}, {"parallel.vpp", 50}};
  EXPECT_EQ(r.rejected, want);
  ASSERT_EQ(r.top.size(), 3u);
  EXPECT_EQ(r.top[0].rank, 1);
  EXPECT_LE(r.top[0].estimate.step_s, r.top[1].estimate.step_s);
  EXPECT_LE(r.top[1].estimate.step_s, r.top[2].estimate.step_s);
  // The preset's own layout (TP 1 PP 2 EP 8 1F1B) is in the space.
  ASSERT_TRUE(r.configured.has_value());
  EXPECT_EQ(r.configured->layout.pp, 2);
  EXPECT_EQ(r.configured->layout.ep, 8);
}

TEST(SearchSpace, EveryAcceptedLayoutPassesTracegenValidate) {
  const tracegen::RunConfig base = Tiny();
  const Space space = MakeSpace(base, 16, {});
  int64_t accepted = 0;
  Enumerate(
      space, base,
      [&](const Layout& l) {
        ++accepted;
        EXPECT_NO_THROW(tracegen::Validate(ApplyLayout(base, l))) << Describe(l);
      },
      [](std::string_view) {});
  EXPECT_GT(accepted, 100);
}

TEST(SearchSpace, BadKeyOrValueNamesTheKey) {
  const tracegen::RunConfig base = Tiny();
  try {
    MakeSpace(base, 16, {"parallel.tq=1,2"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("parallel.tq"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("unknown key"), std::string::npos) << e.what();
  }
  try {
    MakeSpace(base, 16, {"schedule.kind=1f1b,zigzag"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("schedule.kind"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("zigzag"), std::string::npos) << e.what();
  }
  EXPECT_THROW(MakeSpace(base, 16, {"parallel.tp=0"}), InputError);
  EXPECT_THROW(MakeSpace(base, 16, {"parallel.tp"}), InputError);
}

TEST(SearchEstimate, StaticMemoryIsTheEnginesCounters) {
  // The probe's static memory per stage is what the engine's memory
  // counters start at (weights + gradients + optimizer states).
  const tracegen::RunConfig c = Tiny();
  const tracegen::CostProbe p = tracegen::ProbeCosts(c, std::vector<double>(16, 1.0 / 16));
  tracegen::Engine engine(c);
  engine.Simulate(1);
  ASSERT_EQ(p.static_bytes.size(), 2u);
  for (int stage = 0; stage < 2; ++stage) {
    Rank rank = engine.EmitRank(stage * 8);
    double first = 0;
    for (const Track& t : rank.tracks) {
      if (t.counter != CounterKind::kMemWeights && t.counter != CounterKind::kMemGradients &&
          t.counter != CounterKind::kMemOptimizer)
        continue;
      ASSERT_FALSE(t.sample_value.empty());
      first += t.sample_value.front();
    }
    EXPECT_DOUBLE_EQ(p.static_bytes[stage], first) << "stage " << stage;
  }
}

// The 718B preset pads 61 layers to 64 for its own 32 virtual stages
// (parallel.noop_layers 61,62,63); a candidate with 48 (PP 16 x VPP 3) would
// not divide 64, so its config drops the padding as it drops the split.
// Model FLOPs per token of the 718B model (the MFU convention of
// analyzer/README.md "MFU and HFU"; bench/README.md "run41, session 14"
// converts the published 41% with them). Three passes of, per token:
// attention projections 2 x 196,575,232 (MLA: 7680*1536 + 1536*128*192 +
// 7680*576 + 512*128*256 + 128*128*7680) on 61 layers, dense MLP 2 x
// 424,673,280 (3*7680*18432) on 3, MoE 2 x 426,639,360 (router 7680*256,
// 8 routed + 1 shared of 3*7680*2048) on 58, LM head 2 x 7680*153600:
// 235,139,039,232 for the three passes; the causal attention core, half the
// square, 2 x s x 128 x (128+64+128) / 2 per token, layer and pass:
// 30,702,305,280 at 4K for the three passes, twice that at 8K.
TEST(SearchEstimate, ModelFlopsPerTokenOfThe718BAt4KAnd8K) {
  for (const auto& [seq, per_token] : {std::pair{4096, 265841344512.0}, std::pair{8192, 296543649792.0}}) {
    const tracegen::RunConfig c = tracegen::BuildConfig(
        {"pangu-ultra-moe-718b-41", "", {"model.seq_length=" + std::to_string(seq)}, 1});
    const double tokens = double(c.parallel().global_batch_size()) * seq;
    EXPECT_DOUBLE_EQ(ModelFlopsPerStep(c) / tokens, per_token) << seq;
  }
}

TEST(SearchSpace, CandidatesDropTheBasesNoopPadding) {
  const tracegen::RunConfig base = tracegen::BuildConfig({"pangu-ultra-moe-718b", "", {}, 0});
  ASSERT_EQ(base.parallel().noop_layers(), "61,62,63");
  Layout l;
  l.tp = 8, l.pp = 16, l.vpp = 3, l.ep = 4, l.dp = 48, l.mbs = 2, l.extend = true, l.swap = true;
  l.schedule = 1;   // interleaved
  l.a2a = 1;        // hierarchical
  l.recompute = 1;  // selective
  const tracegen::RunConfig c = ApplyLayout(base, l);
  EXPECT_EQ(c.parallel().noop_layers(), "");
  EXPECT_NO_THROW(tracegen::Validate(c));
}

// A pinned MTP stage is a stage of the base's slices: on other slices it is
// pinned to the last stage (-1, what advise's --set list then says), not
// cleared (unset lets EDPB's split choose: another run than the advised one).
TEST(SearchSpace, OtherSlicesPinTheMtpToTheLastStage) {
  tracegen::RunConfig pinned = tracegen::BuildConfig({"pangu-ultra-moe-718b", "", {}, 0});
  Layout l;
  l.tp = 8, l.pp = 16, l.vpp = 3, l.ep = 4, l.dp = 48, l.mbs = 2, l.extend = true, l.swap = true;
  l.schedule = 1, l.a2a = 1, l.recompute = 1;
  EXPECT_FALSE(ApplyLayout(pinned, l).parallel().has_mtp_stage());
  pinned.mutable_parallel()->set_mtp_stage(30);
  const tracegen::RunConfig c = ApplyLayout(pinned, l);
  ASSERT_TRUE(c.parallel().has_mtp_stage());
  EXPECT_EQ(c.parallel().mtp_stage(), -1);
}

// The configured layout's row is the configured run: tiny-moe padded to 6
// layers on its PP 2 (3 a stage, the second holding layer 3 alone) keeps
// the padding, so its estimate differs from the unpadded run's (before, the
// padding was cleared for every candidate: the same figures either way); a
// PP 1 candidate drops it (the padding is for two slices).
TEST(SearchSpace, ConfiguredLayoutKeepsTheBasesNoopPadding) {
  const tracegen::RunConfig padded = Tiny({"parallel.noop_layers=4,5"});
  const tracegen::RunConfig plain = Tiny();
  const Layout mine = LayoutOf(padded);
  const tracegen::RunConfig c = ApplyLayout(padded, mine);
  EXPECT_EQ(c.parallel().noop_layers(), "4,5");
  EXPECT_EQ(tracegen::ModelShape(c).stage_layers, (std::vector<int>{3, 1}));
  EXPECT_EQ(tracegen::ModelShape(ApplyLayout(plain, mine)).stage_layers, (std::vector<int>{2, 2}));
  Figures with, without;
  ASSERT_TRUE(Estimator(padded).Estimate(mine, &with));
  ASSERT_TRUE(Estimator(plain).Estimate(mine, &without));
  EXPECT_NE(with.step_s, without.step_s);
  // Another schedule on the same slices keeps it too; DualPipe (no empty
  // slice allowed) and another PP do not.
  Layout adaptive = mine;
  adaptive.schedule = 2;
  EXPECT_EQ(ApplyLayout(padded, adaptive).parallel().noop_layers(), "4,5");
  Layout dualpipe = mine;
  dualpipe.schedule = 3;
  EXPECT_EQ(ApplyLayout(padded, dualpipe).parallel().noop_layers(), "");
  Layout one = mine;
  one.pp = 1, one.dp = 16;
  EXPECT_EQ(ApplyLayout(padded, one).parallel().noop_layers(), "");
  // So with parallel.layers_per_stage.
  const tracegen::RunConfig split = Tiny({"parallel.layers_per_stage=3,1"});
  EXPECT_EQ(ApplyLayout(split, mine).parallel().layers_per_stage(), "3,1");
  EXPECT_EQ(ApplyLayout(split, one).parallel().layers_per_stage(), "");
}

// The shape of the accuracy table's misses (TP 8, EP across nodes, swap,
// interleaved: bench/README.md), small: tiny-moe on 64 cards, TP 8 PP 2
// VPP 2 EP 4 (one rank per node), each item one layer whose forward is
// mostly all-to-all, so the swap copies are as long as the layers. The
// backward waits for each layer's swap-in, queued on the copy stream
// behind the swap-outs: before tracegen waited for them and the estimator
// timed the copy stream per layer, the estimate was +53% off. Since the
// swap-out starts at the GEMM that saves the tensors and the backward waits
// at the first op reading them (branch swapmbs1; the probe measures both
// offsets per layer), 57.91 -> 43.41 ms simulated, 57.24 -> 43.01 estimated.
TEST(SearchEstimate, SwapCopiesPerLayerMatchTheSimulation) {
  const tracegen::RunConfig base = Tiny();
  Layout l;
  l.tp = 8, l.pp = 2, l.vpp = 2, l.ep = 4, l.dp = 4, l.mbs = 1, l.swap = true;
  l.schedule = 1;  // interleaved
  l.a2a = 0;       // flat
  l.recompute = 0;
  ASSERT_STREQ(kSchedules[l.schedule], "interleaved");
  const tracegen::RunConfig c = ApplyLayout(base, l);
  ASSERT_NO_THROW(tracegen::Validate(c));
  Estimator est(base);
  Figures e;
  ASSERT_TRUE(est.Estimate(l, &e));
  const Figures s = Simulate(c, 2);
  EXPECT_NEAR(s.step_s * 1e3, 43.46, 0.005);  // 43.41 with launch_ns 10 us
  EXPECT_NEAR(e.step_s * 1e3, 43.01, 0.005);
  EXPECT_LT(std::abs(e.step_s / s.step_s - 1), 0.02);
}

// The two offsets the estimator's copy stream uses, as the probe measures
// them on the layout above: a MoE layer's swap-out starts once the GEMM that
// saves its last swapped tensor has run (the expert gate/up GEMM when the
// swap reaches the dispatched tokens, else the output projection), and its
// backward first reads a swapped tensor at that GEMM's gradient. Both were 0 before
// (swap-out at the layer's end, i.e. fwd.ns; the wait at the first op).
TEST(SearchEstimate, ProbeTimesTheSwapOffsetsInTheLayer) {
  Layout l;
  l.tp = 8, l.pp = 2, l.vpp = 2, l.ep = 4, l.dp = 4, l.mbs = 1, l.swap = true;
  l.schedule = 1;
  l.a2a = 0;
  l.recompute = 0;
  const tracegen::RunConfig c = ApplyLayout(Tiny(), l);
  const int experts = c.model().num_experts();  // balanced routing
  const tracegen::CostProbe p = tracegen::ProbeCosts(c, std::vector<double>(experts, 1.0 / experts));
  ASSERT_TRUE(p.has_moe);
  EXPECT_EQ(p.moe.swap_ns, 673089);
  EXPECT_EQ(p.moe.swap_out_at_ns, 458406);
  EXPECT_EQ(p.moe.swap_in_slack_ns, 445521);
  EXPECT_LT(p.moe.swap_out_at_ns, p.moe.fwd.ns);
  EXPECT_LT(p.moe.swap_in_slack_ns, p.moe.bwd.ns);
}

// routing.redundant_experts: the probe's routing has the engine's copies
// (the hot experts' tokens split over their holders) and its static memory
// the copies of the position that holds the most. tiny-moe with one
// dominant expert (skew 2), the preset's layout (EP 8): ignoring the 4
// copies, the estimate was 16.89 ms against 14.08 ms simulated (+20.0%).
TEST(SearchEstimate, RedundantExpertsAsTheEngineCopiesThem) {
  const tracegen::RunConfig base = Tiny({"routing.skew=2", "routing.redundant_experts=4"});
  const Layout l = TinyEp8();
  const tracegen::RunConfig c = ApplyLayout(base, l);
  Estimator est(base);
  Figures e;
  ASSERT_TRUE(est.Estimate(l, &e));
  const Figures s = Simulate(c, 2);
  EXPECT_NEAR(s.step_s * 1e3, 14.17, 0.005);  // 14.08 with launch_ns 10 us
  EXPECT_NEAR(e.step_s * 1e3, 13.90, 0.005);
  EXPECT_LT(std::abs(e.step_s / s.step_s - 1), 0.02);
  // Static memory: the engine's counters at the step start, on the stage-0
  // rank holding the most copies.
  const tracegen::CostProbe p = tracegen::ProbeCosts(c, std::vector<double>(16, 1.0 / 16));
  tracegen::Engine engine(c);
  engine.Simulate(1);
  double most = 0, fewest = 1e300;
  for (int rank = 0; rank < 8; ++rank) {
    Rank out = engine.EmitRank(rank);
    double first = 0;
    for (const Track& t : out.tracks)
      if (t.counter == CounterKind::kMemWeights || t.counter == CounterKind::kMemGradients ||
          t.counter == CounterKind::kMemOptimizer)
        first += t.sample_value.front();
    most = std::max(most, first);
    fewest = std::min(fewest, first);
  }
  EXPECT_GT(most, fewest);  // some positions hold copies, some none
  EXPECT_DOUBLE_EQ(p.static_bytes[0], most);
}

// routing.edpb with routing.redundant_experts: the estimate stands for a
// step before EDPB's first migration (the engine's first step keeps the
// contiguous placement and its copies), so its probe plans the copies as
// without EDPB. Planning them with EDPB's migration there (review of
// session 15) estimated 13.621 ms against 15.593 ms simulated (-12.6%);
// EDPB alone and copies alone were within 1.1%.
TEST(SearchEstimate, EdpbWithCopiesEstimatesTheStepBeforeMigrating) {
  const tracegen::RunConfig base =
      Tiny({"routing.skew=2", "routing.edpb=true", "routing.redundant_experts=1"});
  const Layout l = TinyEp8();
  const tracegen::RunConfig c = ApplyLayout(base, l);
  Estimator est(base);
  Figures e;
  ASSERT_TRUE(est.Estimate(l, &e));
  const Figures s = Simulate(c, 1);
  EXPECT_LT(std::abs(e.step_s / s.step_s - 1), 0.02) << e.step_s << " vs " << s.step_s;
}

// The adaptive schedule's last stage runs a micro-batch's forward, then
// its backward (tracegen's BuildItem): no fused gain there. tiny-moe, the
// preset's layout with Adaptive Pipe: before tracegen chained them (its
// backward ran ahead of its own forward), 16.21 ms estimated against
// 11.34 ms simulated (+42.9%).
TEST(SearchEstimate, AdaptiveLastStageChainsForwardAndBackward) {
  const tracegen::RunConfig base = Tiny();
  Layout l;
  l.tp = 1, l.pp = 2, l.vpp = 1, l.ep = 8, l.dp = 8, l.mbs = 1;
  l.schedule = 2;
  ASSERT_STREQ(kSchedules[l.schedule], "adaptive");
  Estimator est(base);
  Figures e;
  ASSERT_TRUE(est.Estimate(l, &e));
  const Figures s = Simulate(ApplyLayout(base, l), 2);
  EXPECT_NEAR(s.step_s * 1e3, 17.53, 0.005);  // 17.44 with launch_ns 10 us
  EXPECT_NEAR(e.step_s * 1e3, 17.40, 0.005);
  EXPECT_LT(std::abs(e.step_s / s.step_s - 1), 0.02);
}

TEST(SearchEstimate, MemoryRejectionsCountTheLayoutsOverHbm) {
  // PP 1 holds all four layers (and both embeddings), PP 2 half: an HBM
  // between their peaks rejects exactly the PP 1 layout, for memory.
  const std::vector<std::string> space = {
      "parallel.tp=1", "parallel.pp=1,2", "parallel.vpp=1", "parallel.ep=8",
      "parallel.tp_extend_ep=false", "parallel.micro_batch_size=1", "schedule.kind=1f1b",
      "comm.a2a=flat", "memory.recompute=none", "memory.swap=false"};
  SearchOptions o;
  o.verify = 0;
  const SearchResult all = RunSearch(Tiny(), MakeSpace(Tiny(), 16, space), o);
  ASSERT_EQ(all.feasible, 2);
  double pp1 = 0, pp2 = 0;
  for (const Ranked& x : all.top) (x.layout.pp == 1 ? pp1 : pp2) = x.estimate.peak_bytes;
  ASSERT_GT(pp1, pp2);
  const std::string hbm = "hardware.hbm_bytes=" + std::to_string((pp1 + pp2) / 2);
  const SearchResult r = RunSearch(Tiny({hbm}), MakeSpace(Tiny({hbm}), 16, space), o);
  EXPECT_EQ(r.valid, 2);
  EXPECT_EQ(r.feasible, 1);
  EXPECT_EQ(r.rejected.at("memory"), 1);
  ASSERT_EQ(r.top.size(), 1u);
  EXPECT_EQ(r.top[0].layout.pp, 2);
  // The estimate of the peak is tracegen's simulated one within 5%.
  const Figures sim = Simulate(ApplyLayout(Tiny(), r.top[0].layout), 1);
  EXPECT_NEAR(r.top[0].estimate.peak_bytes / sim.peak_bytes, 1.0, 0.05);
}

TEST(SearchJson, StableKeysInOrder) {
  const std::vector<std::string> space = {"parallel.tp=1", "parallel.pp=2", "parallel.vpp=1",
                                          "parallel.ep=4,8", "parallel.micro_batch_size=1",
                                          "schedule.kind=1f1b", "comm.a2a=flat",
                                          "memory.recompute=none", "memory.swap=false"};
  SearchOptions o;
  o.top = 2;
  o.verify = 1;
  const SearchResult r = RunSearch(Tiny(), MakeSpace(Tiny(), 16, space), o);
  const std::string json = SearchJson(r, 4);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  std::vector<std::string> keys;
  for (auto field : doc.get_object()) keys.emplace_back(field.key);
  const std::vector<std::string> want = {"model", "cards", "global_batch", "seq_length", "hbm_bytes",
                                         "space_size", "valid", "feasible", "rejected",
                                         "estimate_cpu_s", "configured", "top"};
  EXPECT_EQ(keys, want);
  EXPECT_EQ(std::string_view(doc["model"]), "tiny-moe");
  EXPECT_EQ(int64_t(doc["space_size"]), 4);  // EP 4, 8 x TP-extend-EP false, true
  EXPECT_EQ(int64_t(doc["rejected"]["duplicate"]), 2);
  simdjson::dom::array top = doc["top"];
  ASSERT_EQ(top.size(), 2u);
  std::vector<std::string> row;
  for (auto field : simdjson::dom::object(top.at(0))) row.emplace_back(field.key);
  EXPECT_EQ(row, (std::vector<std::string>{"rank", "layout", "mindspeed_args", "estimate", "simulated"}));
  row.clear();
  for (auto field : simdjson::dom::object(top.at(1))) row.emplace_back(field.key);
  EXPECT_EQ(row, (std::vector<std::string>{"rank", "layout", "mindspeed_args", "estimate"}));
  std::vector<std::string> fig;
  for (auto field : simdjson::dom::object(top.at(0)["simulated"])) fig.emplace_back(field.key);
  EXPECT_EQ(fig, (std::vector<std::string>{"step_s", "tokens_per_s", "mfu", "peak_bytes", "ep_exposed_s",
                                           "bubble_s"}));
  EXPECT_EQ(std::string_view(top.at(0)["mindspeed_args"]).substr(0, 48),
            "--tensor-model-parallel-size 1 --pipeline-model-");
  EXPECT_EQ(SearchJson(r, 4), json);  // same result, same bytes
}

TEST(SearchVerify, TopOneIsWithinTwoPercentOfTheTrueBestOnTinyMoe) {
  // Exhaustive: every valid layout of this space simulated in full.
  const tracegen::RunConfig base = Tiny();
  const std::vector<std::string> space_args = {
      "parallel.tp=1,2", "parallel.pp=1,2", "parallel.vpp=1,2", "parallel.micro_batch_size=1,2",
      "comm.a2a=flat", "memory.recompute=none", "memory.swap=false"};
  const Space space = MakeSpace(base, 16, space_args);
  SearchOptions o;
  o.top = 1;
  o.verify = 1;
  const SearchResult r = RunSearch(base, space, o);
  ASSERT_EQ(r.top.size(), 1u);
  ASSERT_TRUE(r.top[0].simulated.has_value());
  double best = std::numeric_limits<double>::infinity();
  int simulated = 0;
  Enumerate(
      space, base,
      [&](const Layout& l) {
        best = std::min(best, Simulate(ApplyLayout(base, l), 2).step_s);
        ++simulated;
      },
      [](std::string_view) {});
  EXPECT_EQ(simulated, r.valid);
  EXPECT_LE(r.top[0].simulated->step_s, best * 1.02)
      << Describe(r.top[0].layout) << ": " << r.top[0].simulated->step_s << " s, best " << best << " s";
}

// The mid-size model (issue #15): bench/search_exhaustive simulated every one
// of the 9,396 valid layouts of kLiteSpace (bench/README.md, "mid-size model:
// verified top-1 vs the true best"); since session 20 the 1,728 of them at
// PP 1 with VPP 2 are refused (Megatron-LM's arguments.py: the interleaved
// schedule needs PP > 1), 7,668 remain. None of them was a best or a
// runner-up pinned here; the ranks quoted are the 9,396-layout table's. The search's top-1, the true best and
// the runners-up are pinned here, so a change of the estimator that moves the
// top-1 away from the true best, or of tracegen that changes the best, fails.
const std::vector<std::string> kLiteSpace = {"parallel.tp=1,2,4", "parallel.pp=1,2,4", "parallel.vpp=1,2",
                                             "parallel.micro_batch_size=1,2,4"};

int64_t Ns(double s) { return std::llround(s * 1e9); }

// The simulated steps below moved by exactly +8,460 ns each when launch_ns
// went from 10 to 18.46 us (branch launchmean): a simulated step starts with
// the host's first issue (framework + enqueue on the Python thread, then the
// launch on the dequeue thread), and on DeepSeek-V2-Lite's millisecond ops
// the host stays ahead of the device after it, so only that one launch shows.

TEST(SearchVerify, TopOneIsTheTrueBestOnDeepSeekV2LiteWithoutAdaptive) {
  // Without the adaptive schedule (whose simulation is optimistic: it fuses
  // a micro-batch's backward with its own forward on the last stage, see
  // bench/README.md) the search's top-1 is the true best of the 4,428.
  const tracegen::RunConfig base = tracegen::BuildConfig({"deepseek-v2-lite-16b", "", {}, 1});
  std::vector<std::string> args = kLiteSpace;
  args.push_back("schedule.kind=1f1b,interleaved,dualpipe");
  SearchOptions o;
  o.top = 1;
  o.verify = 1;
  o.threads = 1;
  const SearchResult r = RunSearch(base, MakeSpace(base, 32, args), o);
  EXPECT_EQ(r.valid, 4428);  // 5,292 before PP 1 VPP 2 was refused
  EXPECT_EQ(r.feasible, 3239);
  ASSERT_EQ(r.top.size(), 1u);
  ASSERT_TRUE(r.top[0].simulated.has_value());
  EXPECT_EQ(Describe(r.top[0].layout), "TP 1 PP 4 EP 2 DP 8 MBS 1 1f1b flat recompute-none swap");
  const int64_t top1 = Ns(r.top[0].simulated->step_s);
  EXPECT_EQ(top1, 3819868799);
  // The next two distinct layouts by simulation (ranks 3 and 7 of the
  // exhaustive table; the others are their swap and all-to-all twins).
  const Layout second{2, 2, 2, 4, 8, 1, true, false, 1, 0, 0};  // interleaved flat, no recompute
  const Layout third{2, 4, 1, 2, 4, 1, true, false, 0, 0, 0};   // 1f1b flat, no recompute
  EXPECT_EQ(Describe(second), "TP 2 PP 2 VPP 2 EP 4 (x TP: 8) DP 8 MBS 1 interleaved flat recompute-none");
  EXPECT_EQ(Ns(Simulate(ApplyLayout(base, second), 1).step_s), 3824767660);
  EXPECT_EQ(Ns(Simulate(ApplyLayout(base, third), 1).step_s), 3829648012);
  EXPECT_LT(top1, 3824767660);
}

TEST(SearchVerify, TopOneIsTheTrueBestOnDeepSeekV2LiteWithAdaptive) {
  // All 9,396 layouts of kLiteSpace simulated (7,668 valid since session 20) (bench/README.md, "mid-size
  // model"): the true best is the estimate's own rank 1, TP 2 PP 2 VPP 2
  // EP 4 x TP MBS 1 adaptive (3.722 s). Before tracegen ran an adaptive
  // last stage's forward before its own backward, the simulated best was an
  // adaptive PP 1 layout at 3.504 s (the backward overlapped its own
  // forward) and the top-1 missed it by 2.17%. The layouts simulated here are
  // the next ones by simulation and that former best: none beats the top-1,
  // and the former best no longer fits in HBM.
  const tracegen::RunConfig base = tracegen::BuildConfig({"deepseek-v2-lite-16b", "", {}, 1});
  SearchOptions o;
  o.top = 1;
  o.verify = 1;
  o.threads = 1;
  const SearchResult r = RunSearch(base, MakeSpace(base, 32, kLiteSpace), o);
  EXPECT_EQ(r.valid, 7668);
  EXPECT_EQ(r.feasible, 5726);
  ASSERT_EQ(r.top.size(), 1u);
  ASSERT_TRUE(r.top[0].simulated.has_value());
  EXPECT_EQ(Describe(r.top[0].layout), "TP 2 PP 2 VPP 2 EP 4 (x TP: 8) DP 8 MBS 1 adaptive flat recompute-none");
  const int64_t top1 = Ns(r.top[0].simulated->step_s);
  EXPECT_EQ(top1, 3722300837);
  const Layout mbs2_swap{2, 2, 2, 4, 8, 2, true, true, 2, 0, 0};     // sim. rank 5, est. rejects
  const Layout tp4{4, 2, 2, 2, 4, 2, true, false, 2, 0, 0};          // sim. rank 7
  const Layout former_best{2, 1, 1, 8, 16, 4, true, false, 2, 1, 0};  // 3.504 s before the fix
  const int64_t a = Ns(Simulate(ApplyLayout(base, mbs2_swap), 1).step_s);
  const int64_t b = Ns(Simulate(ApplyLayout(base, tp4), 1).step_s);
  const Figures f = Simulate(ApplyLayout(base, former_best), 1);
  EXPECT_EQ(a, 3736865975);  // 3795863556 before the swap waited at its readers (swapmbs1)
  EXPECT_EQ(b, 3799891118);
  EXPECT_EQ(Ns(f.step_s), 4348116242);
  EXPECT_FALSE(f.fits);  // its forward's activations are now held: 110 GiB
  EXPECT_GE(a, top1);
  EXPECT_GE(b, top1);
  EXPECT_GE(Ns(f.step_s), top1);
}

}  // namespace
}  // namespace moetrace::search
