// Multi-process analyze without mpirun: a process's part, serialized and
// merged, gives the document one process makes, byte for byte, however the
// ranks are split; and AnalyzeDistributed over threads standing in for
// processes (HTA's rounds included) equals AnalyzeFiles.
#include "analyzer/distributed.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <filesystem>
#include <fstream>
#include <thread>

#include "analyzer/analyze_files.h"
#include "analyzer/mpi/thread_world.h"
#include "analyzer/partial_io.h"
#include "analyzer/stable_json.h"
#include "formats/errors.h"
#include "formats/trace_io.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"
#include "formats/real_traces_dir.h"

namespace moetrace {
namespace {

namespace fs = std::filesystem;

Trace TinyMoe(std::vector<std::string> extra = {}) {
  std::vector<std::string> sets = {"steps=2", "parallel.dp=16", "parallel.world_size=32",
                                   "parallel.global_batch_size=64"};
  sets.insert(sets.end(), extra.begin(), extra.end());
  tracegen::RunConfig config = tracegen::BuildConfig({"tiny-moe", "", sets, 0});
  MemorySink sink;
  tracegen::Generate(config, {}, sink);
  return std::move(sink.trace());
}

// The document from `parts` processes: rank i to process owner(i).
std::string Merged(const TraceSource& src, int parts, const std::function<int(size_t)>& owner) {
  AnalyzeOptions opt;
  opt.threads = 2;
  PartialAnalysis all;
  for (int p = 0; p < parts; ++p) {
    std::vector<size_t> mine;
    for (size_t i = 0; i < src.rank_count(); ++i) {
      if (owner(i) == p) mine.push_back(i);
    }
    PartialAnalysis part = AnalyzeRanks(src, mine, opt);
    MergePartial(SerializePartial(&part), &all);
  }
  return ToStableJson(FinishAnalysis(src.metadata(), std::move(all)));
}

TEST(SerializeMerge, AnySplitOfTinyMoeGivesTheSameDocument) {
  MemorySource src(TinyMoe());
  const std::string one = ToStableJson(Analyze(src));
  ASSERT_NE(one.find("\"collective_waits\": ["), std::string::npos);
  const size_t n = src.rank_count();
  for (int parts : {2, 3}) {
    EXPECT_EQ(one, Merged(src, parts, [&](size_t i) { return int(i % parts); })) << parts;
    EXPECT_EQ(one, Merged(src, parts, [&](size_t i) { return int(i * parts / n); })) << parts;
    // Process 0 gets nothing.
    EXPECT_EQ(one, Merged(src, parts, [&](size_t i) { return 1 + int(i % (parts - 1)); }));
  }
  // Merged in the other order.
  EXPECT_EQ(one, Merged(src, 3, [&](size_t i) { return 2 - int(i * 3 / n); }));
}

// Redundant expert copies travel with the routing loads: a split gives the
// one-process EP MaxVio, which the copies lower (stripped, it is the copies-less figure).
TEST(SerializeMerge, RedundantExpertCopiesMergeLikeOneProcess) {
  Trace with = TinyMoe({"routing.skew=2", "routing.redundant_experts=7"});
  Trace stripped = with;
  for (Rank& r : stripped.ranks) {
    for (RoutingRecord& rec : r.routing) {
      rec.copy_expert.clear();
      rec.copy_ep_rank.clear();
      rec.copy_tokens.clear();
    }
  }
  MemorySource src(std::move(with));
  const analysis::Analysis a = Analyze(src);
  const std::string one = ToStableJson(a);
  EXPECT_EQ(one, Merged(src, 3, [&](size_t i) { return int(i % 3); }));
  MemorySource bare(std::move(stripped));
  const double vio = a.cluster().expert_imbalance().ep_max_vio_mean();
  const double bare_vio = Analyze(bare).cluster().expert_imbalance().ep_max_vio_mean();
  EXPECT_NEAR(vio, 0.25307, 1e-5);
  EXPECT_NEAR(bare_vio, 1.45799, 1e-5);
}

// Workers add ranks to the sharded collective tables without a common lock:
// the document must not depend on how many do.
TEST(SerializeMerge, OneOrFourThreadsGiveTheSameDocument) {
  MemorySource src(TinyMoe());
  AnalyzeOptions one, four;
  one.threads = 1;
  four.threads = 4;
  const std::string doc = ToStableJson(Analyze(src, one));
  ASSERT_NE(doc.find("\"collective_waits\": ["), std::string::npos);
  EXPECT_EQ(doc, ToStableJson(Analyze(src, four)));
}

TEST(SerializeMerge, AssignRanksBalancesBytes) {
  const std::vector<int> owner = AssignRanks({10, 1, 1, 1, 9, 0}, 2);
  uint64_t load[2] = {0, 0};
  const uint64_t bytes[] = {10, 1, 1, 1, 9, 0};
  for (size_t i = 0; i < owner.size(); ++i) load[owner[i]] += bytes[i];
  EXPECT_EQ(load[0] + load[1], 22u);
  EXPECT_LE(std::max(load[0], load[1]), 12u);
  EXPECT_EQ(AssignRanks({5, 5, 5}, 3), (std::vector<int>{0, 1, 2}));
}

// Process 0's document, or its error ("" for the others' PeerFailed), from
// `n` threads standing in for processes.
std::string RunThreads(int n, const std::vector<std::string>& inputs, bool skip = false) {
  std::vector<std::string> out(static_cast<size_t>(n));
  ThreadWorld(n).Run([&](Communicator& comm) {
    const int r = comm.rank();
    AnalyzeOptions opt;
    opt.threads = 1;
    opt.skip_bad_ranks = skip;
    try {
      analysis::Analysis a = AnalyzeDistributed(inputs, opt, comm).analysis;
      if (r == 0) out[r] = ToStableJson(a);
    } catch (const InputError& e) {
      out[r] = std::string("error: ") + e.what();
    } catch (const PeerFailed&) {
      out[r] = "peer failed";
    }
  });
  for (int r = 1; r < n; ++r) {
    if (out[0].rfind("error: ", 0) == 0) {
      EXPECT_EQ(out[r], "peer failed");
    }
  }
  return out[0];
}

std::string OneProcess(const std::vector<std::string>& inputs, bool skip = false) {
  AnalyzeOptions opt;
  opt.threads = 1;
  opt.skip_bad_ranks = skip;
  return ToStableJson(AnalyzeFiles(inputs, opt).analysis);
}

std::string Traces() {
  std::string dir = RealTracesRoot();
  return fs::exists(dir) ? dir : "";
}

TEST(Distributed, RealKinetoSetsEqualOneProcess) {
  const std::string dir = Traces();
  if (dir.empty()) GTEST_SKIP() << "no real traces";
  int sets = 0;
  for (const auto& e : fs::directory_iterator(dir + "/kineto")) {
    if (!e.is_directory()) continue;
    const std::string set = e.path().string();
    const std::string one = OneProcess({set});
    for (int p : {2, 3}) {
      EXPECT_EQ(one, RunThreads(p, {set})) << set << " over " << p;
    }
    ++sets;
  }
  EXPECT_GT(sets, 0);
}

TEST(Distributed, CorruptRankFailsEveryProcessWithItsName) {
  const std::string dir = Traces();
  if (dir.empty()) GTEST_SKIP() << "no real traces";
  const fs::path tmp = fs::path(::testing::TempDir()) / "distributed_corrupt";
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  for (const auto& e : fs::directory_iterator(dir + "/kineto/a2a-2rank")) {
    fs::copy(e.path(), tmp / e.path().filename());
  }
  const fs::path bad = tmp / "rank9.json";
  { std::ofstream(bad) << "{\"traceEvents\": [ {\"ph\": \"X\", oops"; }
  const std::string err = RunThreads(3, {tmp.string()});
  EXPECT_EQ(err.rfind("error: ", 0), 0u) << err;
  EXPECT_NE(err.find("rank9.json"), std::string::npos) << err;
  // Skipped: named, and the same document as one process.
  const std::string one = OneProcess({tmp.string()}, true);
  EXPECT_NE(one.find("\"skipped_ranks\": [\n    {"), std::string::npos) << one;
  EXPECT_EQ(one, RunThreads(3, {tmp.string()}, true));
}

}  // namespace
}  // namespace moetrace
