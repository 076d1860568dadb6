#include "analyzer/diff/diff.h"

#include <gtest/gtest.h>

#include "analyzer/diff/diff_test_analyses.h"
#include "analyzer/diff/diff_text.h"
#include "analyzer/stable_json.h"

namespace moetrace {
namespace {

using testing::DiffSample;

const analysis::DiffValue& Named(const google::protobuf::RepeatedPtrField<analysis::DiffValue>& v,
                                 const std::string& name) {
  for (const auto& x : v) {
    if (x.name() == name) return x;
  }
  static analysis::DiffValue none;
  ADD_FAILURE() << "no " << name;
  return none;
}

TEST(Diff, AnalysisWithItselfHasNoChange) {
  const analysis::Diff d = BuildDiff(DiffSample(false), DiffSample(false), "a.json", "a.json");
  EXPECT_TRUE(d.no_change());
  EXPECT_EQ(d.step_ns_a(), 10e6);
  EXPECT_EQ(d.step_change_ns(), 0);
  ASSERT_EQ(d.breakdown_size(), 6);
  for (const auto& v : d.breakdown()) {
    EXPECT_EQ(v.delta(), 0) << v.name();
    EXPECT_FALSE(v.has_share_of_step_change()) << v.name();  // no step change to share
  }
  for (const auto& v : d.summary()) EXPECT_EQ(v.delta(), 0) << v.name();
  ASSERT_EQ(d.steps_size(), 2);
  for (const auto& s : d.steps()) {
    for (const auto& v : s.components()) EXPECT_EQ(v.delta(), 0);
  }
  ASSERT_EQ(d.top_size(), 3);
  for (const auto& o : d.top()) {
    EXPECT_EQ(o.side(), "both");
    EXPECT_EQ(o.delta_ns(), 0);
  }
  EXPECT_EQ(d.ranks_size(), 2);
  EXPECT_EQ(d.ranks_only_a_size() + d.ranks_only_b_size(), 0);
  EXPECT_EQ(d.notes_size(), 0);
  const std::string table = FormatDiffTable(d);
  EXPECT_NE(table.find("\ndiff: no change\n"), std::string::npos) << table;
  EXPECT_NE(table.find("step time per rank and step: A 10.000 ms, B 10.000 ms, delta +0.000 ms (+0.00%)\n"),
            std::string::npos) << table;
}

TEST(Diff, HostBoundDispatchExplainsTheStepChange) {
  const analysis::Diff d = BuildDiff(DiffSample(false), DiffSample(true), "a.mtrace", "b.mtrace");
  EXPECT_FALSE(d.no_change());
  EXPECT_EQ(d.step_ns_a(), 10e6);
  EXPECT_EQ(d.step_ns_b(), 12e6);
  EXPECT_EQ(d.step_change_ns(), 2e6);
  // The partition: dispatch first with the whole change, the rest unchanged
  // in their fixed order; shares sum to 1.
  ASSERT_EQ(d.breakdown_size(), 6);
  const char* order[] = {"host_bound_dispatch_ns", "compute_ns", "comm_exposed_ns", "copy_exposed_ns",
                         "host_bound_sync_ns", "free_not_host_bound_ns"};
  double shares = 0;
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(d.breakdown(i).name(), order[i]);
    shares += d.breakdown(i).share_of_step_change();
  }
  EXPECT_DOUBLE_EQ(shares, 1.0);
  EXPECT_EQ(d.breakdown(0).a(), 0.5e6);
  EXPECT_EQ(d.breakdown(0).b(), 2.5e6);
  EXPECT_EQ(d.breakdown(0).delta(), 2e6);
  EXPECT_EQ(d.breakdown(0).relative(), 4.0);
  EXPECT_EQ(d.breakdown(0).share_of_step_change(), 1.0);
  // Summary: ratios and step times, MFU only in A (no delta).
  EXPECT_EQ(Named(d.summary(), "cluster.step_time_ns.median").delta(), 2e6);
  EXPECT_DOUBLE_EQ(Named(d.summary(), "cluster.ratios.host_bound").delta(), 0.25 - 0.1);
  const auto& mfu = Named(d.summary(), "cluster.mfu");
  EXPECT_EQ(mfu.a(), 0.4);
  EXPECT_FALSE(mfu.has_b());
  EXPECT_FALSE(mfu.has_delta());
  // Ranks by id: 1 on both sides, 0 only in A, 2 only in B.
  ASSERT_EQ(d.ranks_size(), 1);
  EXPECT_EQ(d.ranks(0).rank(), 1);
  EXPECT_EQ(d.ranks(0).delta_ns(), 2e6);
  ASSERT_EQ(d.ranks_only_a_size(), 1);
  EXPECT_EQ(d.ranks_only_a(0), 0);
  ASSERT_EQ(d.ranks_only_b_size(), 1);
  EXPECT_EQ(d.ranks_only_b(0), 2);
  // Steps: rank 1's two steps, each +2 ms, all of it dispatch.
  ASSERT_EQ(d.steps_size(), 2);
  EXPECT_EQ(d.steps(1).step(), 1);
  EXPECT_EQ(d.steps(1).ranks(), 1);
  EXPECT_EQ(d.steps(1).components(0).name(), "span_ns");
  EXPECT_EQ(d.steps(1).components(0).delta(), 2e6);
  EXPECT_EQ(d.steps(1).components(1).name(), "host_bound_dispatch_ns");
  EXPECT_EQ(d.steps(1).components(1).share_of_step_change(), 1.0);
  // Classes: vector +2 ms (100 %), other -0.5 ms, flash attention 0.
  ASSERT_EQ(d.classes_size(), 3);
  EXPECT_EQ(d.classes(0).name(), "vector");
  EXPECT_EQ(d.classes(0).delta_ns(), 2e6);
  EXPECT_EQ(d.classes(0).share_of_step_change(), 1.0);
  EXPECT_EQ(d.classes(1).name(), "other");
  EXPECT_EQ(d.classes(1).delta_ns(), -0.5e6);
  // Top operators by |delta|: Permute +2, OldOp -1 (only A), NewOp +0.5 (only B), FA 0.
  ASSERT_EQ(d.top_size(), 4);
  EXPECT_EQ(d.top(0).name(), "Permute");
  EXPECT_EQ(d.top(0).count_a(), 40);
  EXPECT_EQ(d.top(0).count_b(), 80);
  EXPECT_EQ(d.top(0).ns_a(), 2e6);
  EXPECT_EQ(d.top(0).ns_b(), 4e6);
  EXPECT_EQ(d.top(1).name(), "OldOp");
  EXPECT_EQ(d.top(1).side(), "only_a");
  EXPECT_EQ(d.top(1).delta_ns(), -1e6);
  EXPECT_EQ(d.top(1).share_of_step_change(), -0.5);
  EXPECT_EQ(d.top(2).name(), "NewOp");
  EXPECT_EQ(d.top(2).side(), "only_b");
  EXPECT_EQ(d.top(2).share_of_step_change(), 0.25);
  EXPECT_EQ(d.top(3).name(), "FlashAttentionScore");
  EXPECT_EQ(d.top(3).shape(), "[8,4096,128]");
  EXPECT_EQ(d.top(3).delta_ns(), 0);
  // Dispatch: Permute's host-bound wait +1.5 ms (75 % of the change), MatMul 0.
  ASSERT_EQ(d.dispatch_size(), 2);
  EXPECT_EQ(d.dispatch(0).name(), "Permute");
  EXPECT_EQ(d.dispatch(0).host_bound_ns_a(), 0.25e6);
  EXPECT_EQ(d.dispatch(0).host_bound_ns_b(), 1.75e6);
  EXPECT_EQ(d.dispatch(0).delta_host_ns(), 2e6);
  EXPECT_EQ(d.dispatch(0).share_of_step_change(), 0.75);
  EXPECT_EQ(d.dispatch(1).name(), "MatMul");
  EXPECT_EQ(d.dispatch(1).delta_host_bound_ns(), 0);
}

TEST(Diff, TableAndMarkdownRows) {
  const analysis::Diff d = BuildDiff(DiffSample(false), DiffSample(true), "a.mtrace", "b.mtrace");
  const std::string t = FormatDiffTable(d);
  for (const char* line : {
           "moetrace diff: A = a.mtrace (tracegen, 2 ranks), B = b.mtrace (tracegen, 2 ranks)\n",
           "step time per rank and step: A 10.000 ms, B 12.000 ms, delta +2.000 ms (+20.00%)\n",
           "  host_bound_dispatch_ns  0.500 ms  2.500 ms  +2.000 ms (+400.0%)  100.0%\n",
           "  copy_exposed_ns         0.000 ms  0.000 ms  +0.000 ms            0.0%\n",
           "  Permute                           vector           40       80       2.000 ms  4.000 ms  +2.000 ms  100.0%  both\n",
           "  OldOp                             other            4        -        1.000 ms  -         -1.000 ms  -50.0%  only_a\n",
           "  FlashAttentionScore [8,4096,128]  flash_attention  8        8        4.000 ms  4.000 ms  +0.000 ms  0.0%    both\n",
           "  ranks on both sides: 1; only in A: 0; only in B: 2\n",
           "\ndiff: B's step is +2.000 ms against A's; largest share: host_bound_dispatch_ns (100.0%); "
           "dispatch grew most for Permute\n"}) {
    EXPECT_NE(t.find(line), std::string::npos) << line << "\nin\n" << t;
  }
  const std::string md = DiffMarkdown(d);
  EXPECT_EQ(md.substr(0, md.find('\n')),
            "### moetrace diff: B's step is +2.000 ms against A's; largest share: host_bound_dispatch_ns "
            "(100.0%); dispatch grew most for Permute");
  EXPECT_NE(md.find("| component | A | B | delta | share |\n|---|---:|---:|---:|---:|\n"
                    "| host_bound_dispatch_ns | 0.500 ms | 2.500 ms | +2.000 ms (+400.0%) | 100.0% |\n"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| Permute | 40 | 80 | 1.000 ms | 3.000 ms | 0.250 ms | 1.750 ms | +1.500 ms | 75.0% | both |\n"),
            std::string::npos)
      << md;
}

TEST(Diff, ShareTexts) {
  EXPECT_EQ(DiffShare(true, -0.0), "0.0%");
  EXPECT_EQ(DiffShare(true, -0.0004), "0.0%");
  EXPECT_EQ(DiffShare(true, -0.0006), "-0.1%");
  EXPECT_EQ(DiffShare(true, 0.419), "41.9%");
  EXPECT_EQ(DiffShare(false, 1), "-");
  EXPECT_EQ(DiffSignedMs(-400), "+0.000 ms");
  EXPECT_EQ(DiffSignedMs(-600), "-0.001 ms");
}

TEST(Diff, NamesFromTheTraceAreEscaped) {
  analysis::Analysis a = DiffSample(false), b = DiffSample(true);
  b.mutable_cluster()->mutable_operators()->mutable_top(1)->set_name("Perm|ute<script>&");
  const analysis::Diff d = BuildDiff(a, b, "a<b>.json", "b.json");
  const std::string md = DiffMarkdown(d);
  EXPECT_NE(md.find("| Perm\\|ute&lt;script>&amp; | vector | - | 80 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("<script>"), std::string::npos);
}

TEST(Diff, NoOperatorViewIsANote) {
  analysis::Analysis a = DiffSample(false), b = DiffSample(true);
  a.mutable_cluster()->clear_operators();
  const analysis::Diff d = BuildDiff(a, b, "a", "b");
  // The sample's rank 0 is only in A: that note comes first.
  ASSERT_EQ(d.notes_size(), 2);
  EXPECT_EQ(d.notes(0),
            "the rank sets differ (ranks only in A: 1, only in B: 1): the cluster figures are means over "
            "each side's own ranks, so their deltas mix the change with the rank sets; compare the "
            "matched ranks below");
  EXPECT_EQ(d.notes(1),
            "no operator view in A (cluster.operators is empty: an analysis saved before the operator "
            "view, or a trace without device ops)");
  // B's operators are then all "only in B".
  for (const auto& o : d.top()) EXPECT_EQ(o.side(), "only_b");
}

TEST(Diff, JsonIsStable) {
  const analysis::Diff d = BuildDiff(DiffSample(false), DiffSample(true), "a", "b");
  const std::string json = ToStableJson(d);
  EXPECT_NE(json.find("\"step_change_ns\": 2000000"), std::string::npos) << json.substr(0, 2000);
  EXPECT_NE(json.find("\"ranks_only_a\": [\n    0\n  ]"), std::string::npos) << json.substr(0, 2000);
}

}  // namespace
}  // namespace moetrace
