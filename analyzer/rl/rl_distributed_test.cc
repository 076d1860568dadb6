// Under mpirun only each card's phases cross to process 0: any split of an
// RL trace gives the one-process document, byte for byte.
#include <gtest/gtest.h>

#include "analyzer/analyze.h"
#include "analyzer/analyze_files.h"
#include "analyzer/distributed.h"
#include "analyzer/mpi/thread_world.h"
#include "analyzer/partial_io.h"
#include "analyzer/rl/rl_test_trace.h"
#include "analyzer/stable_json.h"
#include "formats/native/native_test_util.h"
#include "formats/trace_io.h"

namespace moetrace::rl {
namespace {

std::string Split(const TraceSource& src, int parts) {
  PartialAnalysis all;
  for (int p = 0; p < parts; ++p) {
    std::vector<size_t> mine;
    for (size_t i = 0; i < src.rank_count(); ++i) {
      if (static_cast<int>(i % parts) == p) mine.push_back(i);
    }
    PartialAnalysis part = AnalyzeRanks(src, mine, {});
    MergePartial(SerializePartial(&part), &all);
  }
  return ToStableJson(FinishAnalysis(src.metadata(), std::move(all)));
}

TEST(RlDistributed, AnySplitGivesTheOneProcessDocument) {
  for (Trace t : {traces::Colocated(), traces::Separate()}) {
    t.metadata.ground_truth = {{kNone, 1, "phases.generate_sequences.card_ns", 190}};
    MemorySource src(std::move(t));
    const std::string one = ToStableJson(Analyze(src));
    ASSERT_NE(one.find("\"long_tail_idle_card_ns\""), std::string::npos);
    for (int parts : {2, 3, 4}) EXPECT_EQ(one, Split(src, parts)) << parts;
  }
}

// The mpirun path itself (threads standing in for processes) on a native
// file: process 0's document is AnalyzeFiles'.
TEST(RlDistributed, ThreadWorldEqualsOneProcess) {
  const std::string path = testing_native::TempPath("rl_colocated.mtrace");
  Trace t = traces::Colocated();
  t.metadata.ground_truth = {{kNone, 0, "long_tail_idle_card_ns", 20}};
  testing_native::WriteTrace(t, path);
  AnalyzeOptions opt;
  opt.threads = 1;
  const std::string one = ToStableJson(AnalyzeFiles({path}, opt).analysis);
  ASSERT_NE(one.find("\"placement\": \"colocated\""), std::string::npos);
  for (int n : {2, 3}) {
    std::string doc;
    ThreadWorld(n).Run([&](Communicator& comm) {
      analysis::Analysis a = AnalyzeDistributed({path}, opt, comm).analysis;
      if (comm.rank() == 0) doc = ToStableJson(a);
    });
    EXPECT_EQ(one, doc) << n;
  }
  std::remove(path.c_str());
}

TEST(RlDistributed, UnknownTaskInAPartIsRefused) {
  MemorySource src(traces::Colocated());
  PartialAnalysis part = AnalyzeRanks(src, {0}, {});
  part.rl[0].ranges[0].task = static_cast<Task>(kTaskCount);
  PartialAnalysis into;
  EXPECT_THROW(MergePartial(SerializePartial(&part), &into), std::runtime_error);
}

// Separate pools recorded without steps: the iterations are assigned after
// the merge (a training card alone cannot know them), so any split agrees.
TEST(RlDistributed, IterationsWithoutStepsAreDecidedAfterTheMerge) {
  Trace t;
  t.metadata.source = "kineto";
  t.ranks.resize(4);
  for (int r = 0; r < 4; ++r) {
    t.ranks[size_t(r)].rank = r;
    for (int i = 0; i < 3; ++i) {
      if (r < 2) {
        traces::Range(&t.ranks[size_t(r)], "generate_sequences", 1000 + 1000 * i + 10 * r,
                      1400 + 1000 * i, kNone, Category::kHostOp);
      } else {
        traces::Range(&t.ranks[size_t(r)], "update_actor", 1500 + 1000 * i, 1900 + 1000 * i,
                      kNone, Category::kHostOp);
      }
    }
  }
  MemorySource src(std::move(t));
  const analysis::Analysis a = Analyze(src);
  ASSERT_EQ(a.rl().iterations_size(), 3);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(a.rl().iterations(i).phases_size(), 2);
    EXPECT_EQ(a.rl().iterations(i).phases(1).task(), "update_actor");
    EXPECT_EQ(a.rl().iterations(i).phases(1).start_ns(), 1500 + 1000 * i);
  }
  const std::string one = ToStableJson(a);
  for (int parts : {2, 3, 4}) EXPECT_EQ(one, Split(src, parts)) << parts;
}

}  // namespace
}  // namespace moetrace::rl
