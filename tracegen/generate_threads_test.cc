// Generate on several threads: the bytes, the --ranks subsets, the order the
// sink and the progress callback see, and errors, are those of one thread.
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#include <gtest/gtest.h>

#include "formats/native/native_writer.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"
#include "formats/formats_test_util.h"

namespace moetrace::tracegen {
namespace {

// The native bytes of `c` generated on `threads` threads. The file is named
// by test and process: ctest -j runs these tests at once in one TempDir, and
// a shared name let one test read another's file (a flaky mismatch).
std::string NativeBytes(const RunConfig& c, const std::vector<int32_t>& ranks, int threads) {
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string path = ::testing::TempDir() + "threads_" + t->name() + "_" + std::to_string(::getpid()) + "_" +
                     std::to_string(threads) + ".mtrace";
  auto sink = CreateNativeSink(path);
  Generate(c, ranks, *sink, {}, threads);
  return testing_formats::FileBytes(path);
}

// 64 ranks: PP 2 x DP 32 with EP 8 (eight EP groups), one step; the ranks
// of a group are emitted by different threads.
RunConfig MidConfig() {
  return BuildConfig({"tiny-moe", "",
                      {"parallel.dp=32", "parallel.world_size=64", "parallel.global_batch_size=128",
                       "memory.swap=true", "memory.recompute=selective", "routing.edpb=true",
                       "steps=2"},
                      0});
}

TEST(GenerateThreads, TinyMoeSameBytesForAnyThreadCount) {
  RunConfig c = BuildConfig({"tiny-moe", "", {}, 0});
  std::string one = NativeBytes(c, {}, 1);
  EXPECT_GT(one.size(), 10000u);
  for (int threads : {2, 3, 16}) EXPECT_TRUE(NativeBytes(c, {}, threads) == one) << threads;
}

TEST(GenerateThreads, SeveralEpGroupsSameBytesForAnyThreadCount) {
  RunConfig c = MidConfig();
  std::string one = NativeBytes(c, {}, 1);
  for (int threads : {2, 3}) EXPECT_TRUE(NativeBytes(c, {}, threads) == one) << threads;
  // A subset starting inside a group and crossing into the next.
  std::vector<int32_t> subset = {5, 6, 7, 8, 9, 30, 63};
  std::string sub1 = NativeBytes(c, subset, 1);
  for (int threads : {2, 3}) EXPECT_TRUE(NativeBytes(c, subset, threads) == sub1) << threads;
}

// Pass 1 over four pipeline stages on 1-3 threads (DualPipe's cross-stage
// traffic, the host reading token counts): the same trace.
TEST(GenerateThreads, DualPipeFourStagesSameBytesForAnyThreadCount) {
  RunConfig c = BuildConfig({"tiny-moe", "",
                             {"parallel.pp=4", "parallel.dp=16", "parallel.world_size=64",
                              "model.num_layers=8", "parallel.global_batch_size=128",
                              "schedule.kind=dualpipe", "host.sync_before_a2a=true", "steps=1"},
                             0});
  std::string one = NativeBytes(c, {}, 1);
  for (int threads : {2, 3}) EXPECT_TRUE(NativeBytes(c, {}, threads) == one) << threads;
}

TEST(GenerateThreads, RankSubsetEqualsTheSameRanksOfAFullRun) {
  RunConfig c = MidConfig();
  MemorySink full;
  Generate(c, {}, full, {}, 1);
  std::vector<int32_t> subset = {3, 9, 10, 11, 40, 63};
  for (int threads : {1, 2, 3}) {
    MemorySink part;
    GenerateSummary s = Generate(c, subset, part, {}, threads);
    ASSERT_EQ(part.trace().ranks.size(), subset.size());
    EXPECT_EQ(s.ranks, int(subset.size()));
    for (size_t i = 0; i < subset.size(); ++i) {
      EXPECT_TRUE(part.trace().ranks[i] == full.trace().ranks[size_t(subset[i])])
          << "rank " << subset[i] << ", " << threads << " threads";
    }
    for (const LabeledValue& l : part.trace().metadata.ground_truth) {
      bool found = false;
      for (const LabeledValue& f : full.trace().metadata.ground_truth) found |= f == l;
      EXPECT_TRUE(found) << l.key << " rank " << l.rank;
    }
  }
}

TEST(GenerateThreads, ProgressCountsUpOnTheCallingThread) {
  RunConfig c = MidConfig();
  for (int threads : {1, 3}) {
    std::vector<int> seen;
    const auto caller = std::this_thread::get_id();
    MemorySink sink;
    Generate(c, {}, sink, [&](int done, int total) {
      EXPECT_EQ(total, 64);
      EXPECT_EQ(std::this_thread::get_id(), caller);
      seen.push_back(done);
    }, threads);
    ASSERT_EQ(seen.size(), 64u);
    for (int i = 0; i < 64; ++i) EXPECT_EQ(seen[i], i + 1);
    for (int i = 0; i < 64; ++i) EXPECT_EQ(sink.trace().ranks[i].rank, i);  // sink sees rank order
  }
}

// Fails in AddRank (the writer's thread) or, through its encoder, in Encode
// (a worker thread) when it meets rank `bad`.
class FailingSink : public TraceSink {
 public:
  FailingSink(int bad, bool in_encoder) : bad_(bad), in_encoder_(in_encoder) {}
  void AddRank(const Rank& rank) override {
    if (rank.rank == bad_) throw std::runtime_error("sink failed at rank " + std::to_string(bad_));
    ++added;
  }
  struct Encoded : EncodedRank {
    Rank rank;
  };
  class Encoder : public RankEncoder {
   public:
    explicit Encoder(int bad) : bad_(bad) {}
    std::unique_ptr<EncodedRank> Encode(const Rank& rank, size_t) override {
      if (rank.rank == bad_) throw std::runtime_error("encoder failed at rank " + std::to_string(bad_));
      auto e = std::make_unique<Encoded>();
      e->rank.rank = rank.rank;
      return e;
    }

   private:
    int bad_;
  };
  std::unique_ptr<RankEncoder> CreateEncoder() override {
    return in_encoder_ ? std::make_unique<Encoder>(bad_) : nullptr;
  }
  void AddEncoded(std::unique_ptr<EncodedRank> rank) override {
    EXPECT_EQ(static_cast<Encoded&>(*rank).rank.rank, added);
    ++added;
  }
  void Finish(const Metadata&) override { finished = true; }
  int added = 0;
  bool finished = false;

 private:
  int bad_;
  bool in_encoder_;
};

TEST(GenerateThreads, AnErrorPropagatesWithoutHanging) {
  RunConfig c = MidConfig();
  for (bool in_encoder : {false, true}) {
    for (int threads : {1, 2, 3}) {
      FailingSink sink(37, in_encoder);
      try {
        Generate(c, {}, sink, {}, threads);
        ADD_FAILURE() << "no error, " << threads << " threads";
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), in_encoder ? "encoder failed at rank 37" : "sink failed at rank 37");
      }
      EXPECT_EQ(sink.added, 37) << threads << " threads";  // the ranks before, in order
      EXPECT_FALSE(sink.finished);
    }
  }
}

}  // namespace
}  // namespace moetrace::tracegen
