#include "tracegen/generate.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "formats/errors.h"
#include "tracegen/config.h"
#include "tracegen/labels.h"

namespace moetrace::tracegen {
namespace {

double Label(const Trace& t, int rank, int step, const std::string& key) {
  for (const auto& l : t.metadata.ground_truth)
    if (l.rank == rank && l.step == step && l.key == key) return l.value;
  ADD_FAILURE() << "no label " << key << " rank " << rank << " step " << step;
  return -1;
}

TEST(Generate, TinyMoeSmoke) {
  RunConfig c = BuildConfig({"tiny-moe", "", {}, 0});
  MemorySink sink;
  GenerateSummary s = Generate(c, {}, sink);
  const Trace& t = sink.trace();
  ASSERT_EQ(t.ranks.size(), 16u);
  EXPECT_GT(s.events, 1000);
  for (int r : {0, 15}) {
    for (int step : {0, 1}) {
      std::printf("rank %d step %d span %.3f ms compute %.3f comm %.3f exposed %.3f free %.3f hb %.3f bubble %.3f EP %.3f/%.3f peak %.2f GiB vio %.3f\n",
                  r, step, Label(t, r, step, "breakdown.span_ns") / 1e6,
                  Label(t, r, step, "breakdown.compute_ns") / 1e6,
                  Label(t, r, step, "breakdown.comm_ns") / 1e6,
                  Label(t, r, step, "breakdown.comm_exposed_ns") / 1e6,
                  Label(t, r, step, "breakdown.free_ns") / 1e6,
                  Label(t, r, step, "breakdown.host_bound_ns") / 1e6,
                  Label(t, r, step, "breakdown.bubble_ns") / 1e6,
                  Label(t, r, step, "comm_by_class.EP.exposed_ns") / 1e6,
                  Label(t, r, step, "comm_by_class.EP.total_ns") / 1e6,
                  Label(t, r, step, "memory.peak_allocated_bytes") / (1 << 30),
                  Label(t, r, step, "expert_imbalance.max_vio"));
    }
  }
}

}  // namespace
}  // namespace moetrace::tracegen
