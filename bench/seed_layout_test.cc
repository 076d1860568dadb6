#include "bench/seed_layout.h"

#include <gtest/gtest.h>

namespace moetrace::bench {
namespace {

int64_t MicroBatches(const std::string& preset, const std::vector<std::string>& sets) {
  const tracegen::RunConfig c = tracegen::BuildConfig({preset, "", WithSeedGlobalBatch(preset, sets), 0});
  return c.parallel().global_batch_size() / (int64_t{c.parallel().micro_batch_size()} * c.parallel().dp());
}

// The 718B preset: 6,144 sequences over DP 48 = 128 per DP rank, 64
// micro-batches of 2. At DP 4 the same 128 per rank; MBS 1 doubles the
// micro-batches (the host rows' run without the knobs), MBS 4 halves them.
TEST(SeedLayout, KeepsThePresetsSequencesPerDpRank) {
  const std::string p = "pangu-ultra-moe-718b";
  const std::vector<std::string> dp4 = {"parallel.dp=4", "parallel.world_size=512"};
  EXPECT_EQ(MicroBatches(p, dp4), 64);
  auto mbs1 = dp4;
  mbs1.push_back("parallel.micro_batch_size=1");
  EXPECT_EQ(MicroBatches(p, mbs1), 128);
  EXPECT_EQ(MicroBatches(p, {"parallel.micro_batch_size=4"}), 32);  // full DP 48
  const tracegen::RunConfig c = tracegen::BuildConfig({p, "", mbs1, 0});
  EXPECT_EQ(SeedGlobalBatch(p, c), 512);
}

// The 41% preset: 20,480 sequences over DP 80 = 256 per DP rank at MBS 4.
TEST(SeedLayout, The41PercentRunKeepsItsOwnBatch) {
  EXPECT_EQ(MicroBatches("pangu-ultra-moe-718b-41", {"parallel.dp=4", "parallel.world_size=512"}), 64);
}

}  // namespace
}  // namespace moetrace::bench
