// `mpirun -n P moetrace generate -o DIR`: each process generates a block of
// the ranks into its own shard; the directory reads back as the one-file
// trace, ranks and metadata (labels once, OOM attributes) alike.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "formats/native/native_shards.h"
#include "formats/native/native_writer.h"
#include "formats/open_trace.h"
#include "tracegen/config.h"
#include "tracegen/engine.h"
#include "tracegen/generate.h"

namespace moetrace::tracegen {
namespace {

namespace fs = std::filesystem;

TEST(GenerateShards, DirectoryOfShardsReadsAsTheOneFileTrace) {
  // 32 ranks, two PP stages; HBM small enough that ranks run out of memory
  // (per-rank `oom.rankN` attributes).
  const RunConfig c = BuildConfig({"tiny-moe", "",
                                   {"parallel.dp=16", "parallel.world_size=32",
                                    "parallel.global_batch_size=64", "hardware.hbm_bytes=200000000"},
                                   0});
  MemorySink one;
  Generate(c, {}, one, {}, 2);
  const Trace& whole = one.trace();
  ASSERT_EQ(whole.ranks.size(), 32u);
  ASSERT_FALSE(whole.metadata.ground_truth.empty());
  size_t oom = 0;
  for (const auto& [k, v] : whole.metadata.attributes) oom += k.rfind("oom.rank", 0) == 0;
  EXPECT_EQ(oom, 32u);

  const fs::path dir = fs::path(::testing::TempDir()) / "generate_shards";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // Three processes' blocks: 0-9, 10-20, 21-31 (uneven on purpose).
  const std::vector<std::pair<int, int>> blocks = {{0, 9}, {10, 20}, {21, 31}};
  for (size_t p = 0; p < blocks.size(); ++p) {
    std::vector<int32_t> ranks;
    for (int r = blocks[p].first; r <= blocks[p].second; ++r) ranks.push_back(r);
    auto sink = CreateNativeSink(ShardPath(dir.string(), int(p)));
    Generate(c, ranks, *sink, {}, 1);
  }
  // A file of another kind in the directory is not a shard.
  { std::ofstream(dir / "notes.txt") << "x"; }
  EXPECT_EQ(DetectFormat(dir.string()), TraceFormat::kNative);
  std::unique_ptr<TraceSource> src = OpenTrace(dir.string());
  const Trace read = ReadAll(*src);
  EXPECT_EQ(read.metadata.ground_truth.size(), whole.metadata.ground_truth.size());
  EXPECT_EQ(read.metadata.attributes, whole.metadata.attributes);
  EXPECT_TRUE(read.metadata == whole.metadata);
  ASSERT_EQ(read.ranks.size(), whole.ranks.size());
  for (size_t i = 0; i < read.ranks.size(); ++i) {
    EXPECT_TRUE(read.ranks[i] == whole.ranks[i]) << "rank " << i;
  }
}

TEST(GenerateShards, LabelsEveryShardCarriesCountOnce) {
  Metadata a, b;
  a.config_json = b.config_json = "{}";
  a.ground_truth = {{0, 1, "bubble", 5.0}, {0, 1, "bubble", 5.0}, {1, kNone, "peak", 7.0}};
  b.ground_truth = {{1, kNone, "peak", 7.0}, {2, 1, "bubble", 3.0}};
  a.attributes = {{"tracegen.schedule", "1f1b"}, {"oom.rank0", "x"}};
  b.attributes = {{"tracegen.schedule", "1f1b"}, {"oom.rank2", "y"}};
  const Metadata m = MergeShardMetadata({&a, &b});
  // A shard's own repeat is kept (the one-file trace has it too); the label
  // both carry, once.
  ASSERT_EQ(m.ground_truth.size(), 4u);
  EXPECT_EQ(m.ground_truth[3].rank, 2);
  EXPECT_EQ(m.attributes, (std::vector<std::pair<std::string, std::string>>{
                              {"tracegen.schedule", "1f1b"}, {"oom.rank0", "x"}, {"oom.rank2", "y"}}));
}


// Under mpirun process 0 alone runs pass 1 and the others load its results
// (SimulatePass1 / Generate's pass1): a block of ranks generated from loaded
// results is the same trace, metadata and labels included, as one simulated
// in place; bytes of another shape or cut short are refused.
TEST(GenerateShards, LoadedPassOneGivesTheSameRanks) {
  const RunConfig c = BuildConfig({"tiny-moe", "",
                                   {"parallel.dp=16", "parallel.world_size=32",
                                    "parallel.global_batch_size=64", "routing.redundant_experts=2"},
                                   0});
  const std::string pass1 = SimulatePass1(c, 2);
  ASSERT_GT(pass1.size(), 1000u);
  const std::vector<int32_t> block = {3, 4, 5, 17, 31};
  MemorySink simulated, loaded;
  Generate(c, block, simulated, {}, 2);
  Generate(c, block, loaded, {}, 1, pass1);
  EXPECT_EQ(loaded.trace(), simulated.trace());
  ASSERT_EQ(loaded.trace().ranks.size(), 5u);
  EXPECT_EQ(loaded.trace().ranks[4].rank, 31);

  Engine a(c), b(c);
  a.Simulate(1);
  b.LoadPass1(a.SavePass1());
  EXPECT_EQ(b.RankEndTimes(), a.RankEndTimes());
  EXPECT_EQ(b.SavePass1().size(), pass1.size());
  EXPECT_EQ(b.EmitRank(9), a.EmitRank(9));

  Engine cut(c);
  EXPECT_THROW(cut.LoadPass1(std::string_view(pass1).substr(0, pass1.size() - 1)), std::runtime_error);
  EXPECT_THROW(cut.LoadPass1(pass1 + "x"), std::runtime_error);
  const RunConfig other = BuildConfig({"tiny-moe", "", {}, 0});  // 16 ranks
  Engine wrong(other);
  EXPECT_THROW(wrong.LoadPass1(pass1), std::runtime_error);
  EXPECT_THROW(Engine(c).SavePass1(), std::logic_error);
}

}  // namespace
}  // namespace moetrace::tracegen
