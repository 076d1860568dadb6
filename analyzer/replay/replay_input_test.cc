// LoadReplayInput over processes (advise and replay under mpirun): the
// analysis shared by three processes, the roles and the trace read on
// process 0, equal to one process's; a failure on process 0 only reaches the
// others.
#include "analyzer/replay/replay_input.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "analyzer/distributed.h"
#include "analyzer/mpi/thread_world.h"
#include "analyzer/stable_json.h"
#include "formats/errors.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace::replay {
namespace {

Trace InputTinyMoe() {
  // 32 ranks; EP 1: the DP replicas of a stage share a role (2 roles).
  tracegen::RunConfig c = tracegen::BuildConfig(
      {"tiny-moe", "", {"parallel.ep=1", "parallel.dp=16", "parallel.world_size=32",
                        "parallel.global_batch_size=64"}, 0});
  MemorySink sink;
  tracegen::Generate(c, {}, sink);
  return std::move(sink.trace());
}

std::vector<int32_t> Ids(const Trace& t) {
  std::vector<int32_t> out;
  for (const Rank& r : t.ranks) out.push_back(r.rank);
  return out;
}

TEST(ReplayInputShared, ThreeProcessesGiveProcessZeroTheOneProcessInput) {
  MemorySource src(InputTinyMoe());
  for (Reduce reduce : {Reduce::kRoles, Reduce::kWhole}) {
    const ReplayInput one = LoadReplayInput(src, reduce);
    std::vector<ReplayInput> in(3);
    ThreadWorld(3).Run([&](Communicator& comm) {
      in[size_t(comm.rank())] = LoadReplayInput(src, reduce, comm);
    });
    EXPECT_EQ(ToStableJson(in[0].before), ToStableJson(one.before));
    EXPECT_EQ(Ids(in[0].trace), Ids(one.trace));
    ASSERT_EQ(bool(in[0].roles), bool(one.roles));
    if (one.roles) {
      EXPECT_EQ(one.roles->representative.size(), 2u);
      EXPECT_EQ(in[0].roles->representative, one.roles->representative);
      EXPECT_EQ(in[0].roles->role_of, one.roles->role_of);
    } else {
      EXPECT_EQ(in[0].trace.ranks.size(), 32u);
    }
    // The others hold nothing.
    EXPECT_EQ(in[1].trace.ranks.size(), 0u);
    EXPECT_EQ(in[2].before.ranks_size(), 0);
  }
}

TEST(ReplayInputShared, FailureOnProcessZeroEndsEveryProcess) {
  std::vector<std::string> got(3);
  ThreadWorld(3).Run([&](Communicator& comm) {
    try {
      OnFirstProcess(comm, [] { ThrowInputError("out.json", "", "disk full"); });
      got[size_t(comm.rank())] = "went on";
    } catch (const InputError& e) {
      got[size_t(comm.rank())] = e.what();
    } catch (const PeerFailed&) {
      got[size_t(comm.rank())] = "peer failed";
    }
  });
  EXPECT_EQ(got[0], "out.json: disk full");
  EXPECT_EQ(got[1], "peer failed");
  EXPECT_EQ(got[2], "peer failed");
}

// Records the threads that read ranks. Each read takes a few ms, so that
// where several threads read, each gets ranks (a read of memory is so quick
// that the first thread could take them all before another starts).
class ThreadsSeen : public TraceSource {
 public:
  explicit ThreadsSeen(const TraceSource& s) : s_(s) {}
  const Metadata& metadata() const override { return s_.metadata(); }
  size_t rank_count() const override { return s_.rank_count(); }
  Rank ReadRank(size_t i) const override {
    Saw();
    return s_.ReadRank(i);
  }
  void ReadRankInto(size_t i, Rank* out) const override {
    Saw();
    s_.ReadRankInto(i, out);
  }
  int32_t RankId(size_t i) const override { return s_.RankId(i); }
  std::set<std::thread::id> seen() const {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

 private:
  void Saw() const {
    {
      std::lock_guard<std::mutex> lock(mu_);
      seen_.insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const TraceSource& s_;
  mutable std::mutex mu_;
  mutable std::set<std::thread::id> seen_;
};

// advise / report --threads 1 reach every pass of the input (the analysis,
// the signing of roles, the reads): each process reads on its own thread
// only. (cli's ReadReplayInputs dropped the option: every core whatever it said.)
TEST(ReplayInputShared, ThreadsOptionIsEveryPassesThreadCount) {
  MemorySource src(InputTinyMoe());
  AnalyzeOptions one_thread;
  one_thread.threads = 1;
  for (Reduce reduce : {Reduce::kRoles, Reduce::kWhole}) {
    ThreadsSeen alone(src);
    LoadReplayInput(alone, reduce, one_thread);
    EXPECT_EQ(alone.seen(), std::set<std::thread::id>{std::this_thread::get_id()});

    ThreadsSeen shared(src);
    std::set<std::thread::id> processes;
    std::mutex mu;
    ThreadWorld(2).Run([&](Communicator& comm) {
      {
        std::lock_guard<std::mutex> lock(mu);
        processes.insert(std::this_thread::get_id());
      }
      LoadReplayInput(shared, reduce, comm, one_thread);
    });
    EXPECT_EQ(shared.seen(), processes);
    EXPECT_EQ(processes.size(), 2u);
  }
  // The default (every core) reads on more threads when there are cores:
  // the test above can tell the option from its absence.
  if (std::thread::hardware_concurrency() > 1) {
    ThreadsSeen all(src);
    LoadReplayInput(all, Reduce::kRoles);
    EXPECT_GT(all.seen().size(), 1u);
  }
}

}  // namespace
}  // namespace moetrace::replay
