#include "analyzer/rl/rl_summary.h"

#include <gtest/gtest.h>

#include "analyzer/analyze.h"
#include "analyzer/human_number.h"
#include "analyzer/rl/rl_test_trace.h"
#include "analyzer/summary.h"
#include "formats/trace_io.h"

namespace moetrace::rl {
namespace {

TEST(RlSummary, ColocatedLines) {
  MemorySource src(traces::Colocated());
  const analysis::Analysis a = Analyze(src);
  const std::string s = FormatRlSummary(a.rl());
  // 1070 / 1560 busy; 30 / 1560 idle; 40 / 390 switching; 2000 tokens in 390 ns.
  EXPECT_EQ(s,
            "RL: 2 iterations on 4 cards, colocated, staleness 0\n"
            "  iteration time    0.000 ms   (steady state)\n"
            "  utilisation       68.6 %   (long-tail idle 1.9 %, switch 10.3 % of the time)\n"
            "  generated         " + HumanCount(2000.0 * 1e9 / 390.0) + " tokens/s\n"
            "  trained           " + HumanCount(10000.0 * 1e9 / 390.0) + " tokens/s\n"
            "  iteration 1 phases: generate_sequences 50.0 %, reshard_to_train 5.0 %,"
            " compute_log_prob 7.5 %, compute_ref_log_prob 10.0 %, update_actor 25.0 %,"
            " reshard_to_infer 5.0 %\n");
  EXPECT_NE(FormatSummary(a).find(s), std::string::npos);
  EXPECT_EQ(FormatRlSummary(analysis::Rl()), "");
}

}  // namespace
}  // namespace moetrace::rl
