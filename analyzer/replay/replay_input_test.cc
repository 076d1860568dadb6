// LoadReplayInput over processes (advise and replay under mpirun): the
// analysis shared by three processes, the roles and the trace read on
// process 0, equal to one process's; a failure on process 0 only reaches the
// others.
#include "analyzer/replay/replay_input.h"

#include <gtest/gtest.h>

#include "analyzer/distributed.h"
#include "analyzer/mpi/thread_world.h"
#include "analyzer/stable_json.h"
#include "formats/errors.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace::replay {
namespace {

Trace TinyMoe() {
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
  MemorySource src(TinyMoe());
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

}  // namespace
}  // namespace moetrace::replay
