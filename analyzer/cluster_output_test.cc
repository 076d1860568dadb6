// analysis.cluster_output from msprof-analyze's folder: the real sample's
// figures computed by hand from its CSV and JSON, a synthetic matrix, and a
// rank that also has a trace.
#include "analyzer/cluster_output.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

#include "analyzer/cluster_output_summary.h"
#include "analyzer/link_nominal.h"
#include "formats/real_traces_dir.h"

namespace moetrace {
namespace {

namespace fs = std::filesystem;

TEST(LinkNominal, FromTheAtlas800TA2Calibration) {
  EXPECT_DOUBLE_EQ(*NominalLinkGbps("hccs"), 56.0);  // 392 GB/s over 7 links
  EXPECT_DOUBLE_EQ(*NominalLinkGbps("sdma"), 56.0);
  EXPECT_DOUBLE_EQ(*NominalLinkGbps("rdma"), 25.0);
  EXPECT_DOUBLE_EQ(*NominalLinkGbps("pcie"), 25.0);
  EXPECT_FALSE(NominalLinkGbps("sio").has_value());
}

// A cell that cannot be read (text where Computing is) leaves that rank's
// figure out of the slow-rank rule: before, it was taken as 0 and rank 0 led
// slow_ranks with compute_ns deviation -1.
TEST(ClusterOutputReal, AnUnreadableCellIsLeftOutNotTakenAsZero) {
  const std::string dir = RealTracesRoot() + "/ascend/cluster-output";
  if (!fs::exists(dir)) GTEST_SKIP() << "real trace absent (set MOETRACE_REAL_TRACES): " << dir;
  const fs::path copy = fs::temp_directory_path() / ("moetrace_co_" + std::to_string(::getpid()));
  fs::remove_all(copy);
  fs::create_directories(copy);
  fs::copy_file(fs::path(dir) / "cluster_communication.json", copy / "cluster_communication.json");
  std::ifstream in(fs::path(dir) / "cluster_step_trace_time.csv");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cell = ",rank,0,80309.68717187493,";
  ASSERT_NE(text.find(cell), std::string::npos);
  text.replace(text.find(cell), cell.size(), ",rank,0,abc,");
  std::ofstream(copy / "cluster_step_trace_time.csv") << text;
  analysis::Analysis a;
  AddClusterOutput(ReadClusterOutput(copy.string()), &a);
  fs::remove_all(copy);
  EXPECT_FALSE(a.ranks(0).ascend().step_trace().has_compute_ns());
  for (const analysis::SlowRank& s : a.cluster_output().slow_ranks()) {
    EXPECT_FALSE(s.rank() == 0 && s.metric() == "compute_ns") << s.DebugString();
    // The mean is over the 7 ranks that have the figure (each ~80 ms), without a 0.
    if (s.metric() == "compute_ns") EXPECT_GT(s.mean(), 79e6);
  }
}

TEST(ClusterOutputReal, PerRankFiguresSpreadSlowRanksAndLinks) {
  const std::string dir = RealTracesRoot() + "/ascend/cluster-output";
  if (!fs::exists(dir)) GTEST_SKIP() << "real trace absent (set MOETRACE_REAL_TRACES): " << dir;
  analysis::Analysis a;
  AddClusterOutput(ReadClusterOutput(dir), &a);
  const analysis::ClusterOutput& co = a.cluster_output();
  EXPECT_EQ(co.rank_count(), 8);
  ASSERT_EQ(a.ranks_size(), 8);
  // Rank 0's row, µs as written -> ns.
  const analysis::StepTraceFigures& r0 = a.ranks(0).ascend().step_trace();
  EXPECT_EQ(r0.compute_ns(), 80309687);            // 80309.68717187493
  EXPECT_EQ(r0.comm_exposed_ns(), 683731290);      // 683731.2897031249
  EXPECT_EQ(r0.comm_overlapped_ns(), 5524545);     // 5524.544625000097
  EXPECT_EQ(r0.comm_ns(), 689255834);              // 689255.834328125
  EXPECT_EQ(r0.free_ns(), 990605104);              // 990605.1042031233
  EXPECT_EQ(r0.span_ns(), 1754645750);             // Stage 1754645.75
  EXPECT_EQ(r0.bubble_ns(), 0);
  EXPECT_TRUE(r0.has_bubble_ns());
  EXPECT_EQ(r0.comm_exposed_excluding_receive_ns(), 683731290);
  // Slowest: rank 0, the longest Stage; median of the 8 Stages =
  // (1712204.5 + 1716115.75) / 2 µs.
  EXPECT_EQ(co.slowest().rank(), 0);
  EXPECT_EQ(co.slowest().span_ns(), 1754645750);
  EXPECT_DOUBLE_EQ(co.slowest().over_median(), 1754645750.0 / 1714160125.0 - 1);
  const analysis::Spread& span = co.spread().at("span_ns");
  EXPECT_EQ(span.min(), 1682031250);  // rank 7
  EXPECT_EQ(span.median(), 1714160125);
  EXPECT_EQ(span.max(), 1754645750);
  EXPECT_EQ(span.p90(), 1754645750);  // nearest rank: ceil(0.9 * 8) = 8th
  EXPECT_EQ(co.spread().at("compute_ns").max(), 81662200);  // rank 4
  // The stage row.
  ASSERT_EQ(co.stages_size(), 1);
  EXPECT_EQ(co.stages(0).index(), "(0, 1, 2, 3, 4, 5, 6, 7)");
  EXPECT_EQ(co.stages(0).free_ns(), 1488610059);
  // Slow ranks, cluster.slow_ranks' rule: Communication mean over the 8 rows
  // = 3653815.8 µs / 8 = 456726.98 µs; rank 1 (133462.46) is 70.8% under.
  ASSERT_GT(co.slow_ranks_size(), 0);
  const analysis::SlowRank& first = co.slow_ranks(0);
  EXPECT_EQ(first.rank(), 1);
  EXPECT_EQ(first.metric(), "comm_ns");
  const double comm_mean_ns =
      (689255834.0 + 133462457.0 + 532336072.0 + 267350040.0 + 480702390.0 + 763600770.0 +
       245691950.0 + 541416290.0) / 8;
  EXPECT_NEAR(first.mean(), comm_mean_ns, 1);
  EXPECT_NEAR(first.deviation(), 133462457.0 / comm_mean_ns - 1, 1e-8);
  for (const auto& s : co.slow_ranks()) EXPECT_NE(s.metric(), "compute_ns");  // Computing within 2%
  // Slowest link: rank 0's SDMA in group (0, 1), two broadcasts.
  ASSERT_EQ(co.slowest_links_size(), 5);
  const analysis::LinkBandwidth& l = co.slowest_links(0);
  EXPECT_EQ(l.group(), "(0, 1)");
  EXPECT_EQ(l.rank(), 0);
  EXPECT_EQ(l.transport(), "sdma");
  const double gbps = (0.08531199999999997 + 5.6e-05) / (0.035169671875 + 0.001129984375);
  EXPECT_DOUBLE_EQ(l.bandwidth_gb_s(), gbps);  // 2.3518 GB/s
  EXPECT_DOUBLE_EQ(l.nominal_gb_s(), 56);
  EXPECT_DOUBLE_EQ(l.utilization(), gbps / 56);
  EXPECT_EQ(l.transit_bytes(), 85368);
  EXPECT_EQ(l.ops(), 2);
  EXPECT_EQ(co.links_size(), 6);
  ASSERT_EQ(co.groups_size(), 1);
  EXPECT_EQ(co.groups(0).transports_size(), 3);  // hccs, pcie, sdma
  EXPECT_TRUE(co.trace_comparison().empty());     // no rank has events
  const std::string text = FormatClusterOutput(a);
  EXPECT_NE(text.find("slowest rank (moetrace: longest Stage): rank 0, 1754.646 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("sdma  rank 0       group (0, 1): 2.352 GB/s of 56 GB/s"), std::string::npos) << text;
}

TEST(ClusterOutput, MatrixLinksGroupSumsAndTraceComparison) {
  ClusterOutputFiles f;
  f.dir = "x";
  f.step_trace.push_back({"rank", "3", 3, kNone, {{"computing", 100}, {"free", 50}, {"stage", 200}}});
  f.step_trace.push_back({"rank", "3", 3, kNone, {{"computing", 300}, {"free", 70}, {"stage", 400}}});
  f.matrix_links.push_back({"(2, 3)", 2, 3, "hccs", 28.0, 1.0, 2});  // 28 GB/s: half of 56
  f.matrix_links.push_back({"(2, 3)", 3, 2, "rdma", 5.0, 1.0, 1});   // 5 of 25: a fifth
  f.matrix_links.push_back({"(2, 3)", 3, 2, "sio", 1.0, 1.0, 1});    // no nominal figure
  f.groups.push_back({"(2, 3)", "p2p", {2, 3}});
  f.stats["cluster_communication_matrix.coerced_fields"] = 4;
  analysis::Analysis a;
  analysis::RankAnalysis* r = a.add_ranks();  // rank 3 has a trace: 2 steps
  r->set_rank(3);
  r->set_event_count(10);
  r->add_steps();
  r->add_steps();
  r->mutable_breakdown()->set_compute_ns(500000);
  r->mutable_breakdown()->set_free_ns(100000);
  r->mutable_breakdown()->set_copy_exposed_ns(20000);
  r->mutable_breakdown()->set_span_ns(640000);
  AddClusterOutput(f, &a);
  const analysis::ClusterOutput& co = a.cluster_output();
  // Mean of the rank's two rows.
  const analysis::StepTraceFigures& st = a.ranks(0).ascend().step_trace();
  EXPECT_EQ(st.steps(), 2);
  EXPECT_EQ(st.compute_ns(), 200000);
  EXPECT_EQ(st.free_ns(), 60000);
  EXPECT_EQ(st.span_ns(), 300000);
  EXPECT_FALSE(st.has_bubble_ns());
  ASSERT_EQ(co.matrix_links_size(), 3);
  EXPECT_EQ(co.matrix_links(0).dst_rank(), 3);
  EXPECT_DOUBLE_EQ(co.matrix_links(0).utilization(), 0.5);
  EXPECT_FALSE(co.matrix_links(2).has_nominal_gb_s());
  ASSERT_EQ(co.slowest_links_size(), 2);  // sio has no nominal figure
  EXPECT_EQ(co.slowest_links(0).transport(), "rdma");
  EXPECT_DOUBLE_EQ(co.slowest_links(0).utilization(), 0.2);
  ASSERT_EQ(co.groups_size(), 1);
  ASSERT_EQ(co.groups(0).transports_size(), 3);
  EXPECT_EQ(co.groups(0).transports(0).from(), "cluster_communication_matrix");
  EXPECT_EQ(co.import_stats().at("cluster_communication_matrix.coerced_fields"), 4);
  // Trace (per step) next to the profiler: compute 250000 vs 200000, free
  // (free + exposed copy) 60000 vs 60000, span 320000 vs 300000.
  ASSERT_EQ(co.trace_comparison_size(), 3);
  EXPECT_EQ(co.trace_comparison(0).metric(), "span_ns");
  EXPECT_EQ(co.trace_comparison(0).difference_ns(), 20000);
  EXPECT_EQ(co.trace_comparison(1).metric(), "compute_ns");
  EXPECT_EQ(co.trace_comparison(1).trace_ns(), 250000);
  EXPECT_EQ(co.trace_comparison(1).profiler_ns(), 200000);
  EXPECT_EQ(co.trace_comparison(2).metric(), "free_ns");
  EXPECT_EQ(co.trace_comparison(2).difference_ns(), 0);
}

}  // namespace
}  // namespace moetrace
