// Cross-rank metrics and the JSON document, on hand-built traces.
#include "analyzer/analyze.h"

#include <gtest/gtest.h>

#include <cmath>

#include "analyzer/stable_json.h"
#include "analyzer/summary.h"
#include "formats/sample_trace.h"

namespace moetrace {
namespace {

AnalyzeOptions Threads(int n) {
  AnalyzeOptions o;
  o.threads = n;
  return o;
}

// Rank r of a 4-rank EP group: compute [0, compute) and the dispatch
// all-to-all of layer 12 from its own arrival to the common end 4 ms
// (true time); rank 3's clock runs 1 ms ahead of the others.
Rank GroupRank(int32_t r, TimeNs compute, TimeNs arrival, TimeNs clock_offset) {
  Rank rank;
  rank.rank = r;
  rank.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "compute");
  rank.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "comm");
  Event c;
  c.ts = clock_offset;
  c.dur = compute;
  c.category = Category::kCompute;
  c.name = rank.strings.Intern("GroupedMatmul");
  rank.tracks[0].events.Append(c);
  CommRecord rec;
  rec.kind = CollectiveKind::kAllToAllV;
  rec.group = rank.strings.Intern("ep_group_0");
  rec.sequence = 7;
  rec.group_size = 4;
  rank.tracks[1].comms.push_back(rec);
  Event a;
  a.ts = arrival + clock_offset;
  a.dur = 4'000'000 - arrival;
  a.category = Category::kCollective;
  a.name = rank.strings.Intern("dispatch");
  a.layer = 12;
  a.comm = 0;
  rank.tracks[1].events.Append(a);
  return rank;
}

Trace GroupTrace() {
  Trace t;
  t.metadata.source = "test";
  const TimeNs compute[4] = {1'000'000, 1'000'000, 1'000'000, 1'200'000};
  const TimeNs arrival[4] = {100'000, 200'000, 300'000, 3'200'000};
  for (int r = 0; r < 4; ++r) {
    t.ranks.push_back(GroupRank(r, compute[r], arrival[r], r == 3 ? 1'000'000 : 0));
  }
  return t;
}

TEST(Cluster, CollectiveWaitNamesTheLastRankDespiteClockOffset) {
  MemorySource src(GroupTrace());
  analysis::Analysis a = Analyze(src, Threads(2));
  const auto& c = a.cluster();
  ASSERT_EQ(c.collective_waits_size(), 1);
  const auto& w = c.collective_waits(0);
  // Durations 3.9, 3.8, 3.7 and 0.8 ms: rank 3 arrived last; the others
  // waited 3.1 + 3.0 + 2.9 = 9.0 ms, 3.0 ms each on average.
  EXPECT_EQ(w.last_rank(), 3);
  EXPECT_EQ(w.members(), 4);
  EXPECT_EQ(w.total_wait_ns(), 9'000'000);
  EXPECT_EQ(w.mean_wait_ns(), 3'000'000);
  EXPECT_EQ(w.layer(), 12);
  EXPECT_EQ(w.group(), "ep_group_0");
  EXPECT_EQ(w.description(),
            "every rank of group ep_group_0 waited 3.000 ms for rank 3 in dispatch of layer 12");
  ASSERT_EQ(c.waited_for_size(), 1);
  EXPECT_EQ(c.waited_for(0).rank(), 3);
  EXPECT_EQ(a.ranks(3).collective_wait_caused_ns(), 9'000'000);
  EXPECT_EQ(a.ranks(0).collective_wait_caused_ns(), 0);
}

TEST(Cluster, SlowRankFivePercentRule) {
  MemorySource src(GroupTrace());
  analysis::Analysis a = Analyze(src, Threads(1));
  // Compute per rank 1.0, 1.0, 1.0, 1.2 ms: mean 1.05 ms; rank 3 is +14.3%,
  // the others -4.8% (inside the 5% band).
  int compute_flags = 0;
  for (const auto& s : a.cluster().slow_ranks()) {
    if (s.metric() != "compute_ns") continue;
    ++compute_flags;
    EXPECT_EQ(s.rank(), 3);
    EXPECT_DOUBLE_EQ(s.mean(), 1'050'000.0);
    EXPECT_NEAR(s.deviation(), 0.15 / 1.05, 1e-12);
  }
  EXPECT_EQ(compute_flags, 1);
  // Spans: ranks 0-2 [0, 4 ms), rank 3 [1 ms, 5 ms) on its own clock.
  EXPECT_EQ(a.cluster().step_time_ns().min(), 4'000'000);
  EXPECT_EQ(a.cluster().step_time_ns().max(), 4'000'000);
  // EP class derived from the all-to-all kind; comm of rank 0 = [0.1, 4) ms.
  EXPECT_EQ(a.ranks(0).comm_by_class().ep().total_ns(), 3'900'000);
  EXPECT_EQ(a.ranks(0).comm_by_class().ep().exposed_ns(), 3'000'000);
}

TEST(Cluster, ExpertImbalanceFromRouting) {
  Trace t = GroupTrace();
  RoutingRecord r;
  r.step = 0;
  r.layer = 0;
  r.ep_size = 2;
  r.tokens_per_expert = {10, 30, 20, 40};
  t.ranks[0].routing.push_back(r);
  MemorySource src(std::move(t));
  analysis::Analysis a = Analyze(src, Threads(1));
  const auto& ei = a.cluster().expert_imbalance();
  EXPECT_EQ(ei.source(), "routing");
  // mean 25, max 40: MaxVio 0.6. EP ranks {10+30, 20+40}: 60/50 - 1 = 0.2.
  // CV: deviations -15, 5, -5, 15 -> variance 125 -> sqrt(125)/25.
  EXPECT_DOUBLE_EQ(ei.max_vio_mean(), 0.6);
  EXPECT_DOUBLE_EQ(ei.max_vio_max(), 0.6);
  EXPECT_DOUBLE_EQ(ei.ep_max_vio_mean(), 0.2);
  ASSERT_EQ(ei.layers_size(), 1);
  EXPECT_DOUBLE_EQ(ei.layers(0).cv(), std::sqrt(125.0) / 25.0);
  ASSERT_EQ(ei.layers(0).hot_experts_size(), 3);
  EXPECT_EQ(ei.layers(0).hot_experts(0).expert(), 3);
  EXPECT_EQ(ei.layers(0).hot_experts(1).expert(), 1);
  EXPECT_EQ(ei.layers(0).hot_experts(2).expert(), 2);
}

// Ascend GroupedMatmul token counts: each rank's own experts (ep_size 0).
TEST(Cluster, ExpertImbalanceFromGroupedMatmulLoads) {
  Trace t = GroupTrace();
  const std::vector<int64_t> groups[4] = {{10, 30}, {20, 20}, {0, 40}, {10, 30}};
  for (int r = 0; r < 4; ++r) {
    RoutingRecord rec;
    rec.step = 0;
    rec.layer = 0;
    rec.ep_size = 0;
    rec.tokens_per_expert = groups[r];
    t.ranks[r].routing.push_back(rec);
  }
  Trace totals = t;
  MemorySource src(std::move(t));
  analysis::Analysis a = Analyze(src, Threads(1));
  const auto& ei = a.cluster().expert_imbalance();
  EXPECT_EQ(ei.source(), "grouped_matmul");
  // EP ranks 40 each: 0. Experts 10,30,20,20,0,40,10,30: mean 20, max 40: 1.
  EXPECT_DOUBLE_EQ(ei.ep_max_vio_mean(), 0.0);
  EXPECT_DOUBLE_EQ(ei.max_vio_mean(), 1.0);
  ASSERT_EQ(ei.layers_size(), 1);
  EXPECT_DOUBLE_EQ(ei.layers(0).max_vio(), 1.0);
  // They are not this rank's routing: no per-rank figure.
  EXPECT_FALSE(a.ranks(0).has_expert_imbalance());

  // One total per rank (x given whole) on layer 1: EP loads 100, 300 -> 0.5;
  // the expert-level fields are then unknown.
  for (int r = 0; r < 2; ++r) {
    RoutingRecord rec;
    rec.step = 0;
    rec.layer = 1;
    rec.tokens_per_expert = {r == 0 ? 100 : 300};
    totals.ranks[r].routing.push_back(rec);
  }
  MemorySource src2(std::move(totals));
  analysis::Analysis b = Analyze(src2, Threads(1));
  const auto& e2 = b.cluster().expert_imbalance();
  EXPECT_DOUBLE_EQ(e2.ep_max_vio_mean(), 0.25);
  EXPECT_FALSE(e2.has_max_vio_mean());
  ASSERT_EQ(e2.layers_size(), 2);
  EXPECT_FALSE(e2.layers(1).has_max_vio());
  EXPECT_DOUBLE_EQ(e2.layers(1).ep_max_vio(), 0.5);
}

TEST(Cluster, ExpertImbalanceFromAllToAllSizesHasNoExpertFields) {
  Trace t = GroupTrace();
  const uint64_t loads[4] = {100, 100, 100, 300};  // mean 150, max 300
  for (int r = 0; r < 4; ++r) {
    Track& tr = t.ranks[r].tracks[1];
    tr.comms[0].recv_splits = tr.AddSplits(std::vector<uint64_t>{loads[r], 0, 0, 0});
  }
  MemorySource src(std::move(t));
  analysis::Analysis a = Analyze(src, Threads(1));
  const auto& ei = a.cluster().expert_imbalance();
  EXPECT_EQ(ei.source(), "all_to_all_splits");
  EXPECT_DOUBLE_EQ(ei.ep_max_vio_mean(), 1.0);
  EXPECT_FALSE(ei.has_max_vio_mean());
  ASSERT_EQ(ei.layers_size(), 1);
  EXPECT_FALSE(ei.layers(0).has_max_vio());
  const std::string json = ToStableJson(a);
  EXPECT_EQ(json.find("\"max_vio\""), std::string::npos);
}

// The received load is the sum of every split, however many (the sum runs
// four at a time, then the rest one by one): 7 and 9 splits give the same
// loads, and so the same imbalance, as one split each above.
TEST(Cluster, AllToAllLoadSumsEverySplit) {
  Trace t = GroupTrace();
  const uint64_t loads[4] = {100, 100, 100, 300};
  for (int r = 0; r < 4; ++r) {
    Track& tr = t.ranks[r].tracks[1];
    std::vector<uint64_t> v = r % 2 == 0 ? std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 0}
                                         : std::vector<uint64_t>{1, 1, 1, 1, 1, 1, 1, 1, 0};
    uint64_t rest = loads[r];
    for (uint64_t x : v) rest -= x;
    v.back() = rest;  // the last split (a tail element) completes the load
    tr.comms[0].recv_splits = tr.AddSplits(v);
  }
  MemorySource src(std::move(t));
  analysis::Analysis a = Analyze(src, Threads(1));
  const auto& ei = a.cluster().expert_imbalance();
  EXPECT_EQ(ei.source(), "all_to_all_splits");
  EXPECT_DOUBLE_EQ(ei.ep_max_vio_mean(), 1.0);  // max 300 / mean 150 - 1
  ASSERT_EQ(ei.layers_size(), 1);
  EXPECT_DOUBLE_EQ(ei.layers(0).ep_max_vio(), 1.0);
}

TEST(Analysis, MfuTokensAndMemory) {
  Trace t = GroupTrace();
  t.metadata.model_flops_per_step = 4e12;
  t.metadata.device_peak_flops = 1e15;
  t.metadata.layout.world_size = 4;
  t.metadata.tokens_per_step = 8000;
  t.metadata.device_memory_bytes = 1000;
  Track& mem = t.ranks[2].AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "alloc");
  mem.counter = CounterKind::kMemAllocated;
  mem.sample_ts = {0, 5};
  mem.sample_value = {300, 700};
  MemorySource src(std::move(t));
  analysis::Analysis a = Analyze(src, Threads(2));
  // Step 4 ms: 4e12 / (0.004 s * 1e15 * 4) = 0.25; 8000 / 0.004 = 2e6.
  EXPECT_DOUBLE_EQ(a.cluster().mfu(), 0.25);
  EXPECT_DOUBLE_EQ(a.cluster().tokens_per_s(), 2e6);
  EXPECT_EQ(a.cluster().memory().peak_bytes(), 700);
  EXPECT_EQ(a.cluster().memory().rank(), 2);
  EXPECT_EQ(a.ranks(2).memory().headroom_bytes(), 300);
  EXPECT_FALSE(a.ranks(2).memory().has_peak_reserved_bytes());
  EXPECT_NE(FormatSummary(a).find("MFU"), std::string::npos);
}

TEST(Analysis, HfuFromTheHardwareFlopsAttribute) {
  Trace t = GroupTrace();
  t.metadata.model_flops_per_step = 4e12;
  t.metadata.device_peak_flops = 1e15;
  t.metadata.layout.world_size = 4;
  t.metadata.attributes.emplace_back("tracegen.hardware_flops_per_step", "5.2e12");
  MemorySource src(std::move(t));
  analysis::Analysis a = Analyze(src, Threads(2));
  // Step 4 ms: 5.2e12 / (0.004 s * 1e15 * 4) = 0.325 next to MFU 0.25.
  EXPECT_DOUBLE_EQ(a.cluster().mfu(), 0.25);
  EXPECT_DOUBLE_EQ(a.cluster().hfu(), 0.325);
  EXPECT_NE(FormatSummary(a).find("MFU                25.0 % (HFU  32.5 %, recompute included)"), std::string::npos)
      << FormatSummary(a);
  // Without the attribute (recorded traces) HFU is absent, not 0.
  Trace u = GroupTrace();
  u.metadata.model_flops_per_step = 4e12;
  u.metadata.device_peak_flops = 1e15;
  u.metadata.layout.world_size = 4;
  u.metadata.attributes.emplace_back("tracegen.hardware_flops_per_step", "x1");  // odd: ignored
  MemorySource src2(std::move(u));
  analysis::Analysis b = Analyze(src2, Threads(1));
  EXPECT_FALSE(b.cluster().has_hfu());
  EXPECT_DOUBLE_EQ(b.cluster().mfu(), 0.25);
}

TEST(Analysis, ClusterSumsAndJsonIsStable) {
  MemorySource src(MakeSampleTrace(6, 40, 3));
  analysis::Analysis a1 = Analyze(src, Threads(2));
  analysis::Analysis a2 = Analyze(src, Threads(1));
  const std::string j1 = ToStableJson(a1);
  EXPECT_EQ(j1, ToStableJson(a2));  // thread count and order do not matter
  int64_t span = 0, free = 0;
  for (const auto& r : a1.ranks()) span += r.breakdown().span_ns(), free += r.breakdown().free_ns();
  EXPECT_EQ(a1.cluster().breakdown().span_ns(), span);
  EXPECT_EQ(a1.cluster().breakdown().free_ns(), free);
  EXPECT_DOUBLE_EQ(a1.cluster().ratios().free(), static_cast<double>(free) / span);
  ASSERT_EQ(a1.ranks_size(), 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(a1.ranks(i).rank(), i);
  // Keys sorted: "cluster" before "hta_errors" before "ranks".
  EXPECT_LT(j1.find("\"cluster\""), j1.find("\"hta_errors\""));
  EXPECT_LT(j1.find("\"hta_errors\""), j1.find("\"ranks\""));
  EXPECT_NE(j1.find("\"EP\": {"), std::string::npos);
}

TEST(Analysis, LabelChecksCompareGroundTruthByPath) {
  Trace t = GroupTrace();
  // Rank 0: span 4 ms, EP comm [0.1, 4) ms exposed from 1 ms on: 3 ms.
  t.metadata.ground_truth = {{0, -1, "comm_by_class.EP.exposed_ns", 3'004'000},
                             {0, 0, "breakdown.span_ns", 4'000'000},
                             {1, -1, "memory.peak_allocated_bytes", 5},
                             {9, -1, "breakdown.free_ns", 1}};
  // Per-step class figures and a profiler's own (µs) figure.
  t.metadata.reference = {{0, 0, "comm_by_class.EP.exposed_ns", 3'000'000},
                          {0, -1, "overlap_analysis.computing_us", 1001}};
  MemorySource src(std::move(t));
  analysis::Analysis a = Analyze(src, Threads(1));
  EXPECT_EQ(a.label_checks(0).actual(), 3'000'000);
  EXPECT_DOUBLE_EQ(a.label_checks(0).error(), 4'000.0 / 4'000'000);  // 0.1% of the step
  EXPECT_EQ(a.label_checks(1).actual(), 4'000'000);
  EXPECT_EQ(a.label_checks(1).error(), 0);
  EXPECT_FALSE(a.label_checks(2).has_actual());  // no memory recorded
  EXPECT_FALSE(a.label_checks(3).has_actual());  // no rank 9
  ASSERT_EQ(a.label_checks_size(), 6);
  EXPECT_EQ(a.label_checks(4).source(), "reference");
  EXPECT_EQ(a.label_checks(4).actual(), 3'000'000);
  EXPECT_EQ(a.label_checks(4).error(), 0);
  EXPECT_EQ(a.label_checks(5).actual(), 1000);               // compute 1 ms in µs
  EXPECT_DOUBLE_EQ(a.label_checks(5).error(), 1.0 / 4000);  // 1 µs of a 4 ms step
}

TEST(Analysis, AscendOverlapOnlyOnAscendSources) {
  Trace t = GroupTrace();
  MemorySource plain(t);
  analysis::Analysis a = Analyze(plain, Threads(1));
  EXPECT_FALSE(a.ranks(0).has_ascend());
  t.metadata.source = "ascend";
  t.metadata.reference = {{0, -1, "overlap_analysis.free_segments", 7}};
  MemorySource ascend(std::move(t));
  analysis::Analysis b = Analyze(ascend, Threads(1));
  ASSERT_TRUE(b.ranks(0).has_ascend());
  const analysis::AscendOverlap& ov = b.ranks(0).ascend().overlap_analysis();
  const analysis::Breakdown& bd = b.ranks(0).breakdown();
  // No copies here: the profiler's figures equal METRICS.md's.
  EXPECT_EQ(ov.computing_ns(), bd.compute_ns());
  EXPECT_EQ(ov.communication_not_overlapped_ns(), bd.comm_exposed_ns());
  EXPECT_EQ(ov.free_ns(), bd.free_ns());
  ASSERT_EQ(b.label_checks_size(), 1);
  EXPECT_EQ(b.label_checks(0).actual(), ov.free_segments());
}

TEST(StableJson, NumbersAndNulls) {
  EXPECT_EQ(FormatJsonDouble(NAN), "null");
  EXPECT_EQ(FormatJsonDouble(3.0), "3.0");
  EXPECT_EQ(FormatJsonDouble(-0.0), "0.0");
  EXPECT_EQ(FormatJsonDouble(0.1), "0.1");
  EXPECT_EQ(FormatJsonDouble(16412.162790697676), "16412.162790697676");
  analysis::Hta h;
  h.set_comm_comp_overlap_pct(NAN);
  (*h.mutable_idle_by_stream())["7"].set_other_us(0);
  (*h.mutable_idle_by_stream())["23"].set_host_wait_us(5);
  EXPECT_EQ(ToStableJson(h),
            "{\n"
            "  \"comm_comp_overlap_pct\": null,\n"
            "  \"idle_by_stream\": {\n"
            "    \"23\": {\n"
            "      \"host_wait_us\": 5.0\n"
            "    },\n"
            "    \"7\": {\n"
            "      \"other_us\": 0.0\n"
            "    }\n"
            "  }\n"
            "}\n");
}

// `analyze --json` writes the document in chunks: their concatenation is
// ToStableJson's string, and every chunk but the last holds at least 1 MiB.
TEST(StableJson, ChunksConcatenateToTheDocument) {
  analysis::Analysis a;
  for (int i = 0; i < 25000; ++i) a.add_ranks()->set_rank(i);  // ~110 B each
  const std::string whole = ToStableJson(a);
  ASSERT_GT(whole.size(), size_t{2} << 20);  // at least two full chunks
  std::vector<size_t> sizes;
  std::string joined;
  WriteStableJson(a, [&](std::string_view c) {
    sizes.push_back(c.size());
    joined.append(c);
  });
  EXPECT_EQ(joined, whole);
  ASSERT_GE(sizes.size(), 3u);
  for (size_t i = 0; i + 1 < sizes.size(); ++i) EXPECT_GE(sizes[i], size_t{1} << 20) << i;
  EXPECT_EQ(sizes.size(), whole.size() / (size_t{1} << 20) + 1);  // a chunk overshoots by < 1 rank
}

}  // namespace
}  // namespace moetrace
