#include "tracegen/config.h"

#include <gtest/gtest.h>

#include "formats/errors.h"
#include "tracegen/model.h"

namespace moetrace::tracegen {
namespace {

std::string ErrorOf(std::vector<std::string> sets, std::string preset = "tiny-moe") {
  try {
    BuildConfig({preset, "", sets, 0});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Config, PresetsExistAndValidate) {
  auto presets = ListPresets();
  ASSERT_GE(presets.size(), 3u);
  for (const auto& p : presets) {
    RunConfig c = BuildConfig({p.name, "", {}, 0});
    EXPECT_GT(c.hardware().peak_flops(), 0) << p.name;
    EXPECT_FALSE(p.description.empty());
  }
  EXPECT_EQ(BuildConfig({"pangu-ultra-moe-718b", "", {}, 0}).parallel().world_size(), 6144);
  // DeepSeek-V2-Lite as published (27 layers, the first dense; MLA without
  // query compression; 2 shared + 64 routed experts, 6 active): 15.7 B
  // parameters, 2.4 B active per token.
  const RunConfig lite = BuildConfig({"deepseek-v2-lite-16b", "", {}, 0});
  EXPECT_EQ(lite.parallel().world_size(), 32);
  EXPECT_EQ(lite.model().num_layers(), 27);
  EXPECT_EQ(lite.model().q_lora_rank(), 0);
  EXPECT_EQ(lite.model().kv_lora_rank(), 512);
  EXPECT_EQ(lite.model().num_experts(), 64);
  EXPECT_EQ(lite.model().top_k(), 6);
  auto hw = ListHardwarePresets();
  EXPECT_EQ(hw, (std::vector<std::string>{"atlas-800t-a2", "cloudmatrix-384"}));
}

// The 41% MFU run as the training-system report gives it (ASCEND.md): 8K
// sequences, PP 16, TP 8, VPP 2, an expert group of 32 (EP 4 x TP-extend-EP,
// as the arXiv layout), the arXiv micro-batch doubled, ~10K cards, and the
// optimised system.
TEST(Config, Preset41IsThePublishedRun) {
  const RunConfig arxiv = BuildConfig({"pangu-ultra-moe-718b", "", {}, 0});
  const RunConfig c = BuildConfig({"pangu-ultra-moe-718b-41", "", {}, 0});
  EXPECT_EQ(c.model().seq_length(), 8192);
  EXPECT_EQ(c.parallel().world_size(), 10240);
  EXPECT_EQ(c.parallel().pp(), 16);
  EXPECT_EQ(c.parallel().tp(), 8);
  EXPECT_EQ(c.parallel().vpp(), 2);
  EXPECT_EQ(c.parallel().ep() * c.parallel().tp(), 32);
  EXPECT_TRUE(c.parallel().tp_extend_ep());
  EXPECT_EQ(c.parallel().micro_batch_size(), 2 * arxiv.parallel().micro_batch_size());
  EXPECT_EQ(c.schedule().kind(), "adaptive_pipe");
  EXPECT_TRUE(c.parallel().balance_stages());
  EXPECT_TRUE(c.model().mtp_modelled());
  EXPECT_TRUE(c.routing().edpb());
  EXPECT_TRUE(c.compute().optimized_kernels());
  EXPECT_EQ(c.memory().recompute(), "selective");
  EXPECT_TRUE(c.memory().swap());
  EXPECT_EQ(c.compute().kernel_gains(), "measured");
  EXPECT_EQ(arxiv.compute().kernel_gains(), "measured");
  EXPECT_EQ(BuildConfig({"tiny-moe", "", {}, 0}).compute().kernel_gains(), "class");
}

// The arXiv layout's split is MindSpeed's padding (--noop-layers 61,62,63,
// the DeepSeek-V3 recipe's): 61 layers padded to 64, 2 a virtual stage, so
// the last of the 32 (pipeline rank 15's second) holds only the LM head.
TEST(Config, ArxivPresetPadsWithMindSpeedsNoopLayers) {
  const RunConfig c = BuildConfig({"pangu-ultra-moe-718b", "", {}, 0});
  EXPECT_EQ(c.parallel().noop_layers(), "61,62,63");
  const ModelShape shape(c);
  std::vector<int> want(32, 2);
  want[30] = 1;
  want[31] = 0;
  EXPECT_EQ(shape.stage_layers, want);
  EXPECT_EQ(shape.stage_first_layer[31], 61);
  // PP 16 without VPP: 4 a stage, the last keeps layer 60 alone.
  const ModelShape no_vpp(BuildConfig({"pangu-ultra-moe-718b", "", {"schedule.kind=1f1b", "parallel.vpp=1"}, 0}));
  std::vector<int> want16(16, 4);
  want16[15] = 1;
  EXPECT_EQ(no_vpp.stage_layers, want16);
}

TEST(Config, MtpStageNamesItsKey) {
  const std::string p = "pangu-ultra-moe-718b";
  const std::string mtp = "model.mtp_modelled=true";
  // MindSpeed's padding leaves slice 31 without a decoder layer: the MTP
  // may run on slice 30 (rank 14's second chunk), as in "...,m|L".
  EXPECT_EQ(ErrorOf({mtp, "parallel.mtp_stage=30"}, p), "");
  EXPECT_EQ(ModelShape(BuildConfig({p, "", {mtp, "parallel.mtp_stage=30"}, 0})).mtp_stage, 30);
  EXPECT_EQ(ModelShape(BuildConfig({p, "", {mtp, "parallel.mtp_stage=-1"}, 0})).mtp_stage, 31);
  EXPECT_EQ(ModelShape(BuildConfig({p, "", {mtp}, 0})).mtp_stage, 31);
  EXPECT_EQ(ErrorOf({mtp, "parallel.mtp_stage=-1"}, p), "");
  EXPECT_EQ(ErrorOf({"parallel.mtp_stage=30"}, p),
            "config: parallel.mtp_stage: places the MTP modules: needs model.mtp_modelled=true");
  EXPECT_EQ(ErrorOf({mtp, "parallel.mtp_stage=-2"}, p),
            "config: parallel.mtp_stage: must be -1 (the last stage) or a (virtual) stage 0..31 (got -2)");
  EXPECT_EQ(ErrorOf({mtp, "parallel.mtp_stage=29"}, p),
            "config: parallel.mtp_stage: only the last stage (31) or the one before it (30) is modelled (got 29)");
  EXPECT_EQ(ErrorOf({mtp, "parallel.mtp_stage=14"}, p),
            "config: parallel.mtp_stage: stage 14 is not in the last virtual chunk (stages 16..31): Megatron's "
            "layouts put the MTP in the last virtual stage of its rank");
  // Without the padding the even split puts layer 60 on slice 31, after
  // the MTP; EDPB's split empties it itself.
  EXPECT_EQ(ErrorOf({mtp, "parallel.mtp_stage=30", "parallel.noop_layers="}, p),
            "config: parallel.mtp_stage: the last stage holds 1 decoder layer(s), which would come after the MTP "
            "layer: the split must leave it the losses only (parallel.noop_layers padding it, or parallel.balance_stages=true)");
  EXPECT_EQ(ErrorOf({mtp, "parallel.mtp_stage=30", "parallel.noop_layers=", "parallel.balance_stages=true"}, p), "");
  // tiny-moe on PP 2: the slice before the last is on the first rank.
  EXPECT_EQ(ErrorOf({"model.mtp_layers=1", mtp, "parallel.mtp_stage=0"}),
            "config: parallel.mtp_stage: stage 0 is on the first pipeline rank, which Megatron's layouts forbid");
  EXPECT_EQ(ErrorOf({"model.mtp_layers=1", mtp, "parallel.mtp_stage=1"}), "");
  EXPECT_EQ(ErrorOf({"model.mtp_layers=1", mtp, "schedule.kind=dualpipe", "parallel.mtp_stage=1"}),
            "config: parallel.mtp_stage: not modelled for schedule.kind dualpipe");
}

TEST(Config, NoopLayersNamesItsKey) {
  const std::string p = "pangu-ultra-moe-718b";
  auto has = [](const std::string& error, const std::string& what) { return error.find(what) != std::string::npos; };
  EXPECT_TRUE(has(ErrorOf({"parallel.noop_layers=61,x"}, p),
                  "parallel.noop_layers: 'x' is not a layer index >= 0 (expected e.g. 61,62,63)"));
  EXPECT_TRUE(has(ErrorOf({"parallel.noop_layers=61,62"}, p),
                  "parallel.noop_layers: model.num_layers + the noop layers = 61 + 2 = 63 does not divide into 32 "
                  "(virtual) stages"));
  EXPECT_TRUE(has(ErrorOf({"parallel.noop_layers=0,1,2"}, p),
                  "parallel.noop_layers: (virtual) stage 0 of 32 would hold only noop layers"));
  // DualPipe cuts the model into pp slices (two a rank), not 2 x pp: 64
  // padded layers are 4 a slice on PP 16, the last keeping layer 60.
  EXPECT_EQ(ErrorOf({"schedule.kind=dualpipe", "parallel.vpp=1"}, p), "");
  // tiny-moe (4 layers) on DualPipe PP 2 padded to 8: slice 1 of 2 is all noop.
  EXPECT_EQ(ErrorOf({"schedule.kind=dualpipe", "parallel.noop_layers=4,5,6,7"}),
            "config: parallel.noop_layers: (virtual) stage 1 of 2 would hold only noop layers (dualpipe needs a "
            "layer on every stage; drop the padding with parallel.noop_layers=\"\")");
  std::string even = "1";
  for (int i = 0; i < 29; ++i) even += ",2";
  even += ",1,1";
  EXPECT_TRUE(has(ErrorOf({"parallel.layers_per_stage=" + even}, p), "parallel.noop_layers: pads the even split"));
  EXPECT_EQ(ErrorOf({"parallel.layers_per_stage=" + even, "parallel.noop_layers="}, p), "");
  // EDPB's split replaces the padding: no error even where it would not fit.
  EXPECT_EQ(ErrorOf({"parallel.balance_stages=true", "parallel.noop_layers=61,62"}, p), "");
  EXPECT_EQ(ErrorOf({"parallel.noop_layers=4,5,"}),
            "config: parallel.noop_layers: '4,5,' has an empty entry (expected e.g. 61,62,63)");
}

// Where EDPB's balanced split does not run (one stage; an RL run), the
// padding is the split, so balance_stages does not excuse a bad one.
TEST(Config, NoopLayersCheckedWhereTheBalancedSplitDoesNotRun) {
  const std::vector<std::string> one_stage = {"parallel.pp=1", "parallel.dp=16", "parallel.balance_stages=true"};
  auto with = [](std::vector<std::string> sets, const std::string& more) {
    sets.push_back(more);
    return sets;
  };
  EXPECT_FALSE(BalancedSplitRuns(BuildConfig({"tiny-moe", "", one_stage, 0})));
  EXPECT_EQ(ErrorOf(with(one_stage, "parallel.noop_layers=99")),
            "config: parallel.noop_layers: noop layer 99 is past the padded stack of 5 layers (0-based)");
  EXPECT_EQ(ErrorOf(with(one_stage, "parallel.noop_layers=4")), "");
  EXPECT_FALSE(BalancedSplitRuns(BuildConfig({"tiny-rl", "", {"parallel.balance_stages=true"}, 0})));
  EXPECT_EQ(ErrorOf({"parallel.balance_stages=true", "parallel.noop_layers=99"}, "tiny-rl"),
            "config: parallel.noop_layers: model.num_layers + the noop layers = 4 + 1 = 5 does not divide into 2 (virtual) "
            "stages");
  // PP 2, not RL: the balanced split runs and replaces the padding.
  EXPECT_TRUE(BalancedSplitRuns(BuildConfig({"tiny-moe", "", {"parallel.balance_stages=true"}, 0})));
  EXPECT_EQ(ErrorOf({"parallel.balance_stages=true", "parallel.noop_layers=99"}), "");
}

// A padding Validate lets through (the balanced split replaces it) does not
// cut this model: ModelShape starts from the even split, not from slices of
// zero layers.
TEST(Config, ModelShapeFallsBackToTheEvenSplit) {
  const ModelShape shape(BuildConfig({"tiny-moe", "", {"parallel.balance_stages=true", "parallel.noop_layers=99"}, 0}));
  EXPECT_EQ(shape.stage_layers, (std::vector<int>{2, 2}));
  EXPECT_EQ(shape.stage_first_layer, (std::vector<int>{0, 2}));
  // 61 layers over 32 slices: the 29 extra to the middle.
  const ModelShape big(BuildConfig({"pangu-ultra-moe-718b", "", {"parallel.balance_stages=true", "parallel.noop_layers=61,62"}, 0}));
  std::vector<int> want(32, 2);
  want[0] = want[30] = want[31] = 1;
  EXPECT_EQ(big.stage_layers, want);
}

// DualPipe cuts the model into pp slices (rank i holds slices i and
// pp-1-i): parallel.layers_per_stage lists pp entries, as ModelShape reads.
TEST(Config, DualPipeLayersPerStageListsPpSlices) {
  EXPECT_EQ(ErrorOf({"schedule.kind=dualpipe", "parallel.layers_per_stage=1,1,1,1"}),
            "config: parallel.layers_per_stage: 4 entries, expected one per (virtual) stage: 2");
  EXPECT_EQ(ErrorOf({"schedule.kind=dualpipe", "parallel.layers_per_stage=3,1"}), "");
  const ModelShape shape(BuildConfig({"tiny-moe", "", {"schedule.kind=dualpipe", "parallel.layers_per_stage=3,1"}, 0}));
  EXPECT_EQ(shape.stage_layers, (std::vector<int>{3, 1}));
  // The padding too: 4 + 2 noop layers in 2 slices of 3.
  const ModelShape padded(BuildConfig({"tiny-moe", "", {"schedule.kind=dualpipe", "parallel.noop_layers=4,5"}, 0}));
  EXPECT_EQ(padded.stage_layers, (std::vector<int>{3, 1}));
}

TEST(Config, KernelGainsNamesItsKey) {
  EXPECT_NE(ErrorOf({"compute.kernel_gains=shape"}).find("compute.kernel_gains: 'shape' is not one of measured, class"),
            std::string::npos);
}

TEST(Config, OverridesByDottedKey) {
  RunConfig c = BuildConfig({"tiny-moe", "", {"parallel.micro_batch_size=2", "comm.a2a=hierarchical",
                                              "host.numa_affinity=false", "routing.skew=0.25",
                                              "hardware.launch_ns=5", "seed=7"}, 3});
  EXPECT_EQ(c.parallel().micro_batch_size(), 2);
  EXPECT_EQ(c.comm().a2a(), "hierarchical");
  EXPECT_FALSE(c.host().numa_affinity());
  EXPECT_DOUBLE_EQ(c.routing().skew(), 0.25);
  EXPECT_DOUBLE_EQ(c.hardware().launch_ns(), 5);
  EXPECT_DOUBLE_EQ(c.hardware().peak_flops(), 353.9e12);  // rest from the calibration
  EXPECT_EQ(c.seed(), 7u);
  EXPECT_EQ(c.steps(), 3);
}

TEST(Config, ErrorsNameTheKey) {
  EXPECT_NE(ErrorOf({"parallel.nope=1"}).find("parallel.nope: unknown key"), std::string::npos);
  EXPECT_NE(ErrorOf({"nosection.x=1"}).find("nosection.x: unknown key"), std::string::npos);
  EXPECT_NE(ErrorOf({"parallel.micro_batch_size=two"}).find("parallel.micro_batch_size: expected an integer"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"host.task_queue=yes"}).find("host.task_queue: expected true or false"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"parallel=3"}).find("parallel: is a section"), std::string::npos);
  EXPECT_NE(ErrorOf({"parallel.dp=4"}).find("parallel.world_size"), std::string::npos);
  EXPECT_NE(ErrorOf({"parallel.ep=3"}).find("parallel.ep"), std::string::npos);
  EXPECT_NE(ErrorOf({"model.num_experts=12"}).find("model.num_experts"), std::string::npos);
  EXPECT_NE(ErrorOf({"parallel.pp=8", "parallel.dp=2", "parallel.ep=2"}).find("parallel.pp"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"schedule.kind=gpipe"}).find("schedule.kind"), std::string::npos);
  EXPECT_NE(ErrorOf({"comm.a2a=ring"}).find("comm.a2a"), std::string::npos);
  EXPECT_NE(ErrorOf({"memory.recompute=some"}).find("memory.recompute"), std::string::npos);
  EXPECT_NE(ErrorOf({"parallel.global_batch_size=20"}).find("parallel.global_batch_size"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"parallel.vpp=2"}).find("parallel.vpp"), std::string::npos);
  EXPECT_NE(ErrorOf({"parallel.layers_per_stage=1,2"}).find("parallel.layers_per_stage"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"hardware.preset=tpu"}).find("hardware.preset"), std::string::npos);
  EXPECT_NE(ErrorOf({}, "no-such-preset").find("unknown preset"), std::string::npos);
  // The top-level preset only labels the config: --set cannot switch it.
  EXPECT_NE(ErrorOf({"preset=deepseek-v3-671b"}).find("chosen with --preset"), std::string::npos);
  EXPECT_EQ(ErrorOf({"parallel.layers_per_stage=1,3"}), "");
  // EDPB's data and pipeline parts (documents.h, stage_split.h).
  EXPECT_NE(ErrorOf({"data.doc_distribution=zipf"})
                .find("data.doc_distribution: 'zipf' is not one of fixed, lognormal, mixture"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"data.doc_distribution=fixed"}).find("data.doc_mean: must be between 1 and model.seq_length (1024)"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"data.doc_sigma=-1"}).find("data.doc_sigma"), std::string::npos);
  EXPECT_EQ(ErrorOf({"data.doc_distribution=lognormal", "data.doc_mean=256", "data.doc_sigma=1"}), "");
  // A mixture needs its sources and nothing else (no doc_mean).
  EXPECT_EQ(ErrorOf({"data.doc_distribution=mixture", "data.doc_mix=3150:1432,83.8:9606"}), "");
  EXPECT_NE(ErrorOf({"data.doc_distribution=mixture"}).find("data.doc_mix: '' is not documents:mean_tokens"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"data.doc_distribution=mixture", "data.doc_mix=3150:1432,83.8"})
                .find("data.doc_mix: '83.8' is not documents:mean_tokens"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"data.doc_distribution=lognormal", "data.doc_mean=256", "data.doc_mix=1:100"})
                .find("data.doc_mix: only with data.doc_distribution=mixture"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"data.doc_distribution=mixture", "data.doc_mix=1:100", "data.doc_mean=-5"})
                .find("data.doc_mean: only with data.doc_distribution fixed or lognormal"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"data.doc_distribution=mixture", "data.doc_mix=1:100", "data.doc_sigma=1"})
                .find("data.doc_sigma: only with data.doc_distribution lognormal"),
            std::string::npos);
  // Sums that would overflow (review: 1e308 documents made the mean NaN and
  // skipped the bound below) are refused per source.
  EXPECT_NE(ErrorOf({"model.seq_length=100000000", "data.doc_distribution=mixture", "data.doc_mix=1e308:1,1e308:1"})
                .find("data.doc_mix: '1e308:1' is not documents:mean_tokens"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"model.seq_length=100000000", "data.doc_distribution=mixture", "data.doc_mix=1:1"})
                .find("data.doc_mix: at most 65,536 documents per sequence"),
            std::string::npos);
  // Bounds on the work: documents drawn one at a time, a cubic split search.
  EXPECT_NE(ErrorOf({"model.seq_length=100000000", "data.doc_distribution=lognormal", "data.doc_mean=1"})
                .find("data.doc_mean: at most 65,536 documents per sequence"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"model.num_layers=4096", "parallel.pp=64", "parallel.vpp=32", "parallel.world_size=64",
                     "parallel.dp=1", "parallel.ep=1", "parallel.global_batch_size=64",
                     "schedule.kind=adaptive_pipe", "parallel.balance_stages=true"})
                .find("parallel.balance_stages: at most 256 (virtual) stages"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"model.mtp_modelled=true"}).find("model.mtp_modelled: needs model.mtp_layers >= 1"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"parallel.balance_stages=true", "parallel.layers_per_stage=1,3"})
                .find("parallel.balance_stages"),
            std::string::npos);
  EXPECT_EQ(ErrorOf({"parallel.balance_stages=true", "model.mtp_layers=1", "model.mtp_modelled=true"}), "");
  // A figure off by its unit would overflow the int64 times (llround to
  // INT64_MIN): refused at validation, naming the key.
  EXPECT_NE(ErrorOf({"hardware.hbm_bandwidth=0.001"})
                .find("hardware.hbm_bandwidth: 0.001 is implausibly small (at least 1e+06)"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"hardware.peak_flops=5"}).find("hardware.peak_flops"), std::string::npos);
  EXPECT_NE(ErrorOf({"hardware.eff_vector=1e-9"}).find("hardware.eff_vector"), std::string::npos);
  EXPECT_NE(ErrorOf({"hardware.alpha_intra_ns=1e18"})
                .find("hardware.alpha_intra_ns: 1e+18 ns is implausibly large (at most 1e+12)"),
            std::string::npos);
}

TEST(Config, JsonConfigOverridesItsPreset) {
  RunConfig c = ParseConfigJson(R"({"preset": "tiny-moe", "parallel": {"micro_batch_size": 2},
                                    "host": {"task_queue": false}})",
                                "run.json");
  EXPECT_EQ(c.parallel().micro_batch_size(), 2);
  EXPECT_FALSE(c.host().task_queue());  // explicit false survives the merge
  EXPECT_EQ(c.parallel().dp(), 8);      // from the preset
  try {
    ParseConfigJson(R"({"parallel": {"micro_batch": 2}})", "run.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("run.json"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("micro_batch"), std::string::npos);
  }
}

}  // namespace
}  // namespace moetrace::tracegen
