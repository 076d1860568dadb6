// The host dispatch model on small configs, exact values: the MoE layer's
// small routing operators (each a full launch on the host, a few us on the
// device), the host falling behind on them, and one synchronous stall
// (token counts read on the host, split lists built in Python, the next op
// launched) with and without NUMA binding.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace::tracegen {
namespace {

struct HostRun {
  RunConfig config;
  Trace trace;
};

// tiny-moe with the MoE layer's small ops issued one by one (the 718B
// preset's host.unfused_routing_ops).
// The issuing threads' own time per op as in the Pangu presets (config.h),
// unless a test sets it.
HostRun Simulate(std::vector<std::string> sets, bool unfused = true) {
  if (unfused) sets.push_back("host.unfused_routing_ops=true");
  sets.insert(sets.begin(), {fmt::format("host.python_op_ns={}", kPythonOpNs),
                             fmt::format("host.autograd_op_ns={}", kAutogradOpNs)});
  HostRun r;
  r.config = BuildConfig({"tiny-moe", "", sets, 0});
  MemorySink sink;
  Generate(r.config, {0}, sink);
  r.trace = std::move(sink.trace());
  return r;
}

// Device events of rank 0 named `name`, forward phase, step 0, by start.
struct Dev {
  TimeNs ts, end;
  int32_t mb;
};
std::vector<Dev> Device(const Trace& t, const std::string& name, Phase phase = Phase::kForward) {
  std::vector<Dev> out;
  const Rank& r = t.ranks[0];
  for (const Track& tr : r.tracks) {
    if (tr.kind != TrackKind::kDeviceStream) continue;
    for (size_t i = 0; i < tr.events.size(); ++i)
      if (tr.events.step[i] == 0 && tr.events.phase[i] == phase && r.strings.Get(tr.events.name[i]) == name)
        out.push_back({tr.events.ts[i], tr.events.End(i), tr.events.micro_batch[i]});
  }
  return out;
}

TEST(EngineHost, MoeLayerHasItsSmallRoutingOps) {
  // tiny-moe: stage 0 holds layers 0 (dense) and 1 (MoE); 32 sequences over
  // DP 8 at MBS 1 = 4 micro-batches.
  HostRun run = Simulate({"steps=1"});
  for (const char* name : {"Cast_router_logits", "ReduceSum_topk_probs", "RealDiv_topk_probs",
                           "ReduceMean_aux_probs", "Histc_tokens_per_expert", "Mul_aux_loss",
                           "ReduceSum_aux_loss", "Cumsum_group_list", "Add_shared_expert", "ArgSort_topk_indices",
                           "FloorDiv_token_indices", "RepeatInterleave_expert_ids"}) {
    EXPECT_EQ(Device(run.trace, name).size(), 4u) << name;
    EXPECT_EQ(Device(run.trace, std::string(name) + "Grad", Phase::kBackward).size(), 4u) << name;
  }
  // Without the key only the fused kernels are issued.
  HostRun fused = Simulate({"steps=1"}, false);
  EXPECT_EQ(Device(fused.trace, "Histc_tokens_per_expert").size(), 0u);
  EXPECT_EQ(Device(fused.trace, "MoeInitRouting").size(), 4u);
  // Histc reads 1,024 tokens x top-4 int32 indices and writes 16 counts:
  // 16,448 bytes at 1.6 TB/s x 0.6 (optimized vector kernels) = 17.1 ns,
  // + the 2 us fixed cost of any op.
  for (const Dev& d : Device(run.trace, "Histc_tokens_per_expert")) EXPECT_EQ(d.end - d.ts, 2018);
}

TEST(EngineHost, DeviceWaitsForEachSmallOpLaunch) {
  // A host slower than the device (1 ms of framework work per op): in the
  // step's first micro-batch (the host has no lead yet; later ones find the
  // device waiting for the pipeline, the host ahead) the router's small ops
  // (~2 us on the device) each start when the host has issued them, one host
  // issue cost apart. Without the task queue and
  // off-NUMA the Python thread spends (framework + launch) x cross-NUMA
  // factor per op.
  HostRun run = Simulate({"steps=1", "hardware.framework_op_ns=1000000", "host.task_queue=false",
                          "host.numa_affinity=false"});
  const HardwareConfig& hw = run.config.hardware();
  const TimeNs issue = std::llround((hw.framework_op_ns() + hw.launch_ns()) * hw.cross_numa_factor()) +
                       std::llround(run.config.host().python_op_ns() * hw.cross_numa_factor());
  EXPECT_EQ(issue, 3717379 + 60590);  // (1,000 + 18.46 us) x 3.65 with atlas-800t-a2, + 16.6 us of Python x 3.65
  auto sum = Device(run.trace, "ReduceSum_topk_probs");
  auto div = Device(run.trace, "RealDiv_topk_probs");
  ASSERT_EQ(sum.size(), 4u);
  ASSERT_EQ(sum.size(), div.size());
  EXPECT_EQ(sum[0].mb, 0);
  EXPECT_EQ(div[0].ts - sum[0].ts, issue);
  // With the task queue the Python thread only enqueues (framework +
  // enqueue) and the dequeue thread launches: the slower of the two paces.
  HostRun tq = Simulate({"steps=1", "hardware.framework_op_ns=1000000"});
  const HardwareConfig& h2 = tq.config.hardware();
  const TimeNs paced =
      std::llround(std::max(tq.config.host().python_op_ns() + h2.framework_op_ns() + h2.enqueue_ns(), h2.launch_ns()));
  EXPECT_EQ(paced, 1019100);  // 16.6 us of Python + 1,000 us + 2.5 us enqueue
  sum = Device(tq.trace, "ReduceSum_topk_probs");
  div = Device(tq.trace, "RealDiv_topk_probs");
  ASSERT_EQ(sum.size(), 4u);
  EXPECT_EQ(sum[0].mb, 0);
  EXPECT_EQ(div[0].ts - sum[0].ts, paced);
}

TEST(EngineHost, OneSynchronousStallIsReadPlusSplitListsPlusLaunches) {
  // With the token-count read the host blocks until the count all-gather
  // ends + d2h, builds the split lists (token_count_host_ns per element of
  // the EP x experts matrix), then issues the permutation's index ops and
  // the permutation one by one: the first starts d2h + lists + one issue
  // after the gather (the synchronous stall), the permutation three issues
  // later (the device waits for each small op's launch). Without NUMA
  // binding the host parts are slower by the cross-NUMA factor.
  for (bool bound : {true, false}) {
    HostRun run = Simulate({"steps=1", "host.sync_before_a2a=true", "host.task_queue=false",
                            std::string("host.numa_affinity=") + (bound ? "true" : "false")});
    const HardwareConfig& hw = run.config.hardware();
    const double f = bound ? 1.0 : hw.cross_numa_factor();
    const TimeNs lists = std::llround(hw.token_count_host_ns() * 16 * 8 * f);
    const TimeNs issue = std::llround((hw.framework_op_ns() + hw.launch_ns()) * f) +
                         std::llround(run.config.host().python_op_ns() * f);
    const TimeNs stall = TimeNs(hw.d2h_sync_ns()) + lists + issue;
    // atlas-800t-a2: 30 us read, 63.53 ns x 128 elements = 8,131.84 ns, (12 + 18.46 us) per
    // issue + 16.6 us of Python before it, x 3.65 off-NUMA (29,681.2; 111,179; 60,590 ns).
    EXPECT_EQ(stall, bound ? 30000 + 8132 + 47060 : 30000 + 29681 + 111179 + 60590);
    auto gather = Device(run.trace, "HcomAllGather_token_counts");
    auto first = Device(run.trace, "ArgSort_topk_indices");
    auto perm = Device(run.trace, "MoeInitRouting");
    ASSERT_EQ(gather.size(), 4u);
    ASSERT_EQ(first.size(), 4u);
    ASSERT_EQ(perm.size(), 4u);
    for (size_t i = 0; i < perm.size(); ++i) {
      EXPECT_EQ(first[i].ts - gather[i].end, stall) << "bound " << bound;
      EXPECT_EQ(perm[i].ts - first[i].ts, 3 * issue) << "bound " << bound;
    }
  }
}

TEST(EngineHost, TwoBlockingReadsPerMoeForward) {
  // MindSpeed's alltoall preprocess reads the counts twice: input_splits
  // from the local counts (the host waits for the router's last op, here
  // ReduceSum_aux_loss, + d2h, converts one count per EP rank, then issues
  // the counts' all-gather), and output_splits from the gathered counts (the
  // stall of OneSynchronousStallIsReadPlusSplitListsPlusLaunches). The
  // first stall, on the device: from the router's last op to the gather.
  for (bool bound : {true, false}) {
    HostRun run = Simulate({"steps=1", "host.sync_before_a2a=true", "host.task_queue=false",
                            std::string("host.numa_affinity=") + (bound ? "true" : "false")});
    const HardwareConfig& hw = run.config.hardware();
    const double f = bound ? 1.0 : hw.cross_numa_factor();
    const TimeNs splits = std::llround(hw.token_count_host_ns() * 8 * f);  // EP group of 8
    const TimeNs issue = std::llround((hw.framework_op_ns() + hw.launch_ns()) * f) +
                         std::llround(run.config.host().python_op_ns() * f);
    const TimeNs stall = TimeNs(hw.d2h_sync_ns()) + splits + issue;
    // atlas-800t-a2: 30 us read, 63.53 ns x 8 counts = 508.24 ns, (12 + 18.46 us) per issue +
    // 16.6 us of Python, x 3.65 off-NUMA (1,855.1; 111,179; 60,590 ns).
    EXPECT_EQ(stall, bound ? 30000 + 508 + 47060 : 30000 + 1855 + 111179 + 60590);
    auto router_last = Device(run.trace, "ReduceSum_aux_loss");
    auto gather = Device(run.trace, "HcomAllGather_token_counts");
    ASSERT_EQ(router_last.size(), 4u);
    ASSERT_EQ(gather.size(), 4u);
    for (size_t i = 0; i < gather.size(); ++i) EXPECT_EQ(gather[i].ts - router_last[i].end, stall) << "bound " << bound;
    // Two blocking token-count reads per MoE layer forward (4 micro-batches,
    // one MoE layer on stage 0), none in the backward.
    int reads = 0;
    const Rank& r0 = run.trace.ranks[0];
    for (const Track& tr : r0.tracks) {
      if (tr.kind != TrackKind::kHostThread) continue;
      for (size_t i = 0; i < tr.events.size(); ++i)
        if (tr.events.category[i] == Category::kSync && r0.strings.Get(tr.events.name[i]) ==
                                                            "aclrtSynchronizeStream (token counts)")
          ++reads;
    }
    EXPECT_EQ(reads, 8);
  }
}

// Host-thread sync events of rank 0, step 0, named `name`.
int Syncs(const Trace& t, const std::string& name) {
  int n = 0;
  const Rank& r0 = t.ranks[0];
  for (const Track& tr : r0.tracks) {
    if (tr.kind != TrackKind::kHostThread) continue;
    for (size_t i = 0; i < tr.events.size(); ++i)
      if (tr.events.step[i] == 0 && tr.events.category[i] == Category::kSync &&
          (tr.events.flags[i] & kFlagBlocking) && r0.strings.Get(tr.events.name[i]) == name)
        ++n;
  }
  return n;
}

TEST(EngineHost, CountCopySyncsFourMorePerMoeForward) {
  // With the counts on the host MindSpeed's path makes four more blocking
  // copies per MoE layer forward, each a stream sync in torch_npu: the
  // expert ids' H2D copy and repeat_interleave's output size
  // (repeats.sum().item()) in the dispatcher's preprocess, and the group
  // list's H2D copy before each grouped GEMM. At each the device drains and
  // then waits d2h + one issue for the next op: ReduceSum_repeats after the
  // per-local-expert sum, the repeat_interleave after ReduceSum_repeats,
  // the gate/up GEMM after the dispatch, the down GEMM after the SwiGLU.
  // (The shared expert before the dispatch: with comm.shared_expert_overlap
  // its three issues follow the dispatch's, and on tiny-moe they outlast it.)
  for (bool bound : {true, false}) {
    const std::string numa = std::string("host.numa_affinity=") + (bound ? "true" : "false");
    HostRun run = Simulate({"steps=1", "host.sync_before_a2a=true", "host.task_queue=false", numa,
                            "host.count_copy_syncs=true", "comm.shared_expert_overlap=false"});
    const HardwareConfig& hw = run.config.hardware();
    const double f = bound ? 1.0 : hw.cross_numa_factor();
    const TimeNs issue = std::llround((hw.framework_op_ns() + hw.launch_ns()) * f) +
                         std::llround(run.config.host().python_op_ns() * f);
    const TimeNs gap = TimeNs(hw.d2h_sync_ns()) + issue;
    // atlas-800t-a2: 30 us + (12 + 18.46 + 16.6 us), x 3.65 off-NUMA for the issue.
    EXPECT_EQ(gap, bound ? 30000 + 47060 : 30000 + 111179 + 60590);
    auto local = Device(run.trace, "ReduceSum_tokens_per_local_expert");
    auto sum = Device(run.trace, "ReduceSum_repeats");
    auto ri = Device(run.trace, "RepeatInterleave_expert_ids");
    auto disp = Device(run.trace, "HcomAllToAllV_dispatch");
    auto gg1 = Device(run.trace, "GroupedMatmul_gate_up");
    auto sw = Device(run.trace, "SwiGlu_experts");
    auto gg2 = Device(run.trace, "GroupedMatmul_down");
    for (auto* v : {&local, &sum, &ri, &disp, &gg1, &sw, &gg2}) ASSERT_EQ(v->size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(sum[i].ts - local[i].end, gap) << "bound " << bound;
      EXPECT_EQ(ri[i].ts - sum[i].end, gap) << "bound " << bound;
      EXPECT_EQ(gg1[i].ts - disp[i].end, gap) << "bound " << bound;
      EXPECT_EQ(gg2[i].ts - sw[i].end, gap) << "bound " << bound;
    }
    // 4 micro-batches x one MoE layer: 8 count reads as before, 12 H2D
    // copies, 4 output sizes; the group list's cumsum runs on the CPU.
    EXPECT_EQ(Syncs(run.trace, "aclrtSynchronizeStream (token counts)"), 8);
    EXPECT_EQ(Syncs(run.trace, "aclrtSynchronizeStream (H2D copy of counts)"), 12);
    EXPECT_EQ(Syncs(run.trace, "aclrtSynchronizeStream (repeat_interleave size)"), 4);
    EXPECT_EQ(Device(run.trace, "Cumsum_group_list").size(), 0u);
    // The backward reuses the device copies: no sync, its ops as before.
    EXPECT_EQ(Device(run.trace, "Cumsum_group_listGrad", Phase::kBackward).size(), 4u);
    EXPECT_EQ(Device(run.trace, "ReduceSum_repeatsGrad", Phase::kBackward).size(), 0u);
    // Without the key (or without the reads) none of them.
    HostRun off = Simulate({"steps=1", "host.sync_before_a2a=true", "host.task_queue=false", numa});
    EXPECT_EQ(Syncs(off.trace, "aclrtSynchronizeStream (H2D copy of counts)"), 0);
    EXPECT_EQ(Device(off.trace, "Cumsum_group_list").size(), 4u);
    HostRun noreads = Simulate({"steps=1", "host.task_queue=false", numa, "host.count_copy_syncs=true"});
    EXPECT_EQ(Syncs(noreads.trace, "aclrtSynchronizeStream (H2D copy of counts)"), 0);
    EXPECT_EQ(Device(noreads.trace, "ReduceSum_repeats").size(), 0u);
  }
}

TEST(EngineHost, CountCopySyncWaitsForTheSharedExpertBesideTheDispatch) {
  // With comm.shared_expert_overlap the shared expert runs on the compute
  // stream while the dispatch is in flight; the group list's blocking copy
  // syncs that stream, so the gate/up GEMM's host wait ends d2h after the
  // later of the two (on tiny-moe the shared expert: its three issues follow
  // the dispatch's), then one issue.
  HostRun run = Simulate({"steps=1", "host.sync_before_a2a=true", "host.task_queue=false", "host.numa_affinity=true",
                          "host.count_copy_syncs=true", "comm.shared_expert_overlap=true"});
  const HardwareConfig& hw = run.config.hardware();
  const TimeNs gap = TimeNs(hw.d2h_sync_ns()) + 47060;  // 30 us + (12 + 18.46 + 16.6 us)
  auto disp = Device(run.trace, "HcomAllToAllV_dispatch");
  auto shared = Device(run.trace, "MatMul_shared_down");
  auto gg1 = Device(run.trace, "GroupedMatmul_gate_up");
  ASSERT_EQ(disp.size(), 4u);
  ASSERT_EQ(shared.size(), 4u);
  ASSERT_EQ(gg1.size(), 4u);
  int later_shared = 0;
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(gg1[i].ts - std::max(disp[i].end, shared[i].end), gap) << i;
    later_shared += shared[i].end > disp[i].end;
  }
  EXPECT_EQ(later_shared, 4);
}

TEST(EngineHost, IssuingThreadsOwnTimeBeforeEachOp) {
  // Beyond the framework cost, the Python thread spends host.python_op_ns
  // of its own (model code) before each forward op and the autograd thread
  // host.autograd_op_ns (engine bookkeeping) before each backward op: 31.1
  // and 62.3 us mean between two aclnn enqueues on the real torch_npu
  // trace, less the 14.5 us of framework + enqueue modelled per op. Where the host
  // paces the device (1 ms of framework work per op), consecutive small ops
  // start one issue + that gap apart, both x the cross-NUMA factor off-NUMA.
  HostRun run = Simulate({"steps=1", "hardware.framework_op_ns=1000000", "host.task_queue=false",
                          "host.numa_affinity=false"});
  EXPECT_EQ(run.config.host().python_op_ns(), 16600);
  EXPECT_EQ(run.config.host().autograd_op_ns(), 47800);
  const TimeNs issue = 3717379;  // (1,000 + 18.46 us) x 3.65
  auto sum = Device(run.trace, "ReduceSum_topk_probs");
  auto div = Device(run.trace, "RealDiv_topk_probs");
  ASSERT_EQ(sum.size(), 4u);
  ASSERT_EQ(div.size(), 4u);
  EXPECT_EQ(div[0].ts - sum[0].ts, issue + 60590);  // 16.6 us x 3.65
  // On the issuing thread each launch starts that gap after the previous
  // one ends (no sync between): forward ReduceSum -> RealDiv, and in the
  // backward (the router's small ops in reverse) RealDiv's gradient ->
  // ReduceSum's, where the device does not wait (the host runs ahead).
  std::vector<std::pair<TimeNs, TimeNs>> fwd, bwd;  // (end of the first, start of the second)
  const Rank& r0 = run.trace.ranks[0];
  const Track& py = r0.tracks[0];
  for (size_t i = 0; i + 1 < py.events.size(); ++i) {
    const std::string_view a = r0.strings.Get(py.events.name[i]), b = r0.strings.Get(py.events.name[i + 1]);
    if (a == "aclnnReduceSum_topk_probs" && b == "aclnnRealDiv_topk_probs")
      fwd.emplace_back(py.events.End(i), py.events.ts[i + 1]);
    if (a == "aclnnRealDiv_topk_probsGrad" && b == "aclnnReduceSum_topk_probsGrad")
      bwd.emplace_back(py.events.End(i), py.events.ts[i + 1]);
  }
  ASSERT_EQ(fwd.size(), 4u);
  ASSERT_EQ(bwd.size(), 4u);
  for (auto [end, next] : fwd) EXPECT_EQ(next - end, 60590);
  for (auto [end, next] : bwd) EXPECT_EQ(next - end, 174470);  // 47.8 us x 3.65
  // Unset (0, every preset but the Pangu ones) the threads issue back to back.
  HostRun bare = Simulate({"steps=1", "hardware.framework_op_ns=1000000", "host.task_queue=false",
                           "host.numa_affinity=false", "host.python_op_ns=0", "host.autograd_op_ns=0"});
  sum = Device(bare.trace, "ReduceSum_topk_probs");
  div = Device(bare.trace, "RealDiv_topk_probs");
  EXPECT_EQ(div[0].ts - sum[0].ts, issue);
  // A negative time per op is refused, naming the key.
  EXPECT_THROW(BuildConfig({"tiny-moe", "", {"host.autograd_op_ns=-1"}, 0}), std::exception);
}

}  // namespace
}  // namespace moetrace::tracegen
