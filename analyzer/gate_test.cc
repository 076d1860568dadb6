#include "analyzer/gate.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "analyzer/diff/diff_test_analyses.h"
#include "analyzer/diff/gate_operators.h"
#include "analyzer/stable_json.h"
#include "formats/errors.h"

namespace moetrace {
namespace {

analysis::Analysis Sample() {
  analysis::Analysis a;
  auto* c = a.mutable_cluster();
  c->mutable_ratios()->set_host_bound(0.05);
  c->mutable_ratios()->set_unmasked_comm(0.3);
  c->mutable_ratios()->set_bubble(0.04);
  c->mutable_ratios()->set_free(0.1);
  c->mutable_step_time_ns()->set_median(100'000'000);
  c->mutable_step_time_ns()->set_max(110'000'000);
  c->mutable_comm_by_class()->mutable_ep()->set_unmasked_fraction(0.4);
  c->mutable_memory()->set_peak_bytes(int64_t{40} << 30);
  c->mutable_expert_imbalance()->set_max_vio_mean(0.5);
  c->set_mfu(0.40);
  c->set_tokens_per_s(1e6);
  return a;
}

const GateRow& Row(const GateResult& r, std::string_view path) {
  for (const GateRow& row : r.rows) {
    if (row.threshold.path == path) return row;
  }
  static GateRow none;
  ADD_FAILURE() << "no row " << path;
  return none;
}

TEST(Gate, SameAnalysisPassesEveryDefaultMetric) {
  const GateResult r = RunGate(Sample(), Sample(), DefaultGateThresholds());
  ASSERT_EQ(r.rows.size(), 11u);
  for (const GateRow& row : r.rows) EXPECT_EQ(row.verdict, GateVerdict::kPass) << row.threshold.path;
  EXPECT_FALSE(r.regressed());
  EXPECT_EQ(GateJUnitXml(r).find("<failure"), std::string::npos);
}

TEST(Gate, HigherHostBoundRegressesAndNamesTheMetric) {
  analysis::Analysis cur = Sample();
  cur.mutable_cluster()->mutable_ratios()->set_host_bound(0.08);  // +3 pp > 2 pp
  const GateResult r = RunGate(Sample(), cur, DefaultGateThresholds());
  EXPECT_TRUE(r.regressed());
  const GateRow& row = Row(r, "cluster.ratios.host_bound");
  EXPECT_EQ(row.verdict, GateVerdict::kRegressed);
  EXPECT_NEAR(row.delta, 0.03, 1e-12);
  EXPECT_DOUBLE_EQ(row.tolerance, 0.02);
  const std::string xml = GateJUnitXml(r);
  EXPECT_NE(xml.find("tests=\"11\" failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testcase classname=\"moetrace.gate\" name=\"cluster.ratios.host_bound\">\n"
                     "      <failure message=\"cluster.ratios.host_bound regressed\""),
            std::string::npos)
      << xml;
  const std::string table = FormatGateTable(r);
  EXPECT_NE(table.find("gate: FAIL (1 of 11 metrics regressed)"), std::string::npos) << table;
  EXPECT_NE(table.find("+3.00 pp"), std::string::npos) << table;
  const std::string md = GateMarkdown(r);
  EXPECT_NE(md.find("| `cluster.ratios.host_bound` | 5.00% | 8.00% | +3.00 pp (+60.0%) |"), std::string::npos) << md;
  EXPECT_NE(md.find("**REGRESSED**"), std::string::npos);
}

TEST(Gate, WithinToleranceAndImprovement) {
  analysis::Analysis cur = Sample();
  cur.mutable_cluster()->mutable_ratios()->set_host_bound(0.069);  // +1.9 pp
  cur.mutable_cluster()->mutable_ratios()->set_free(0.05);         // -5 pp: better
  cur.mutable_cluster()->mutable_step_time_ns()->set_median(104'000'000);  // +4% of 5%
  const GateResult r = RunGate(Sample(), cur, DefaultGateThresholds());
  EXPECT_FALSE(r.regressed());
  EXPECT_EQ(Row(r, "cluster.ratios.host_bound").verdict, GateVerdict::kPass);
  EXPECT_EQ(Row(r, "cluster.ratios.free").verdict, GateVerdict::kImproved);
  EXPECT_EQ(Row(r, "cluster.step_time_ns.median").verdict, GateVerdict::kPass);
  cur.mutable_cluster()->mutable_step_time_ns()->set_median(106'000'000);
  EXPECT_EQ(Row(RunGate(Sample(), cur, DefaultGateThresholds()), "cluster.step_time_ns.median").verdict,
            GateVerdict::kRegressed);
}

TEST(Gate, HigherIsBetterForMfuAndThroughput) {
  analysis::Analysis cur = Sample();
  cur.mutable_cluster()->set_mfu(0.35);          // -5 pp, tolerance max(1 pp, 3% of 40% = 1.2 pp)
  cur.mutable_cluster()->set_tokens_per_s(1.2e6);  // +20%: better
  GateResult r = RunGate(Sample(), cur, DefaultGateThresholds());
  EXPECT_EQ(Row(r, "cluster.mfu").verdict, GateVerdict::kRegressed);
  EXPECT_NEAR(Row(r, "cluster.mfu").tolerance, 0.012, 1e-12);
  EXPECT_EQ(Row(r, "cluster.tokens_per_s").verdict, GateVerdict::kImproved);
  cur.mutable_cluster()->set_mfu(0.389);  // -1.1 pp: within 1.2 pp
  r = RunGate(Sample(), cur, DefaultGateThresholds());
  EXPECT_EQ(Row(r, "cluster.mfu").verdict, GateVerdict::kPass);
}

TEST(Gate, MissingAndSkipped) {
  analysis::Analysis base = Sample();
  analysis::Analysis cur = Sample();
  cur.mutable_cluster()->clear_mfu();  // the baseline knew the MFU
  base.mutable_cluster()->clear_tokens_per_s();
  cur.mutable_cluster()->clear_tokens_per_s();
  const GateResult r = RunGate(base, cur, DefaultGateThresholds());
  EXPECT_EQ(Row(r, "cluster.mfu").verdict, GateVerdict::kMissing);
  EXPECT_EQ(Row(r, "cluster.tokens_per_s").verdict, GateVerdict::kSkipped);
  EXPECT_TRUE(r.regressed());
  const std::string xml = GateJUnitXml(r);
  EXPECT_NE(xml.find("<failure message=\"cluster.mfu is missing from the current analysis\""), std::string::npos);
  EXPECT_NE(xml.find("skipped=\"1\""), std::string::npos) << xml;
}

TEST(Gate, ThresholdsFileOverridesAndExtends) {
  const std::string text =
      "# tighter host-bound, and one extra metric\n"
      "[\"cluster.ratios.host_bound\"]\n"
      "abs = 0.005\n"
      "\n"
      "[\"cluster.breakdown.comm_exposed_ns\"]\n"
      "rel = 0.1\n"
      "\n"
      "[\"cluster.steps\"]\n"
      "better = \"higher\"\n"
      "abs = 0\n";
  const std::vector<GateThreshold> t = ParseGateThresholds(text, "gate.toml");
  ASSERT_EQ(t.size(), 13u);
  EXPECT_EQ(t[0].path, "cluster.ratios.host_bound");
  EXPECT_DOUBLE_EQ(*t[0].abs, 0.005);
  EXPECT_FALSE(t[0].rel.has_value());
  EXPECT_FALSE(t[0].higher_is_better);  // inherited from the default set
  EXPECT_EQ(t[11].path, "cluster.breakdown.comm_exposed_ns");
  EXPECT_DOUBLE_EQ(*t[11].rel, 0.1);
  EXPECT_EQ(t[12].path, "cluster.steps");
  EXPECT_TRUE(t[12].higher_is_better);

  const std::vector<GateThreshold> only =
      ParseGateThresholds("defaults = false\n[\"cluster.mfu\"]\nrel = 0.1\n", "g.toml");
  ASSERT_EQ(only.size(), 1u);
  EXPECT_TRUE(only[0].higher_is_better);
}

std::string ErrorOf(const std::string& text) {
  try {
    ParseGateThresholds(text, "gate.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Gate, MalformedThresholdsNameTheLine) {
  // Not TOML: an unquoted string.
  EXPECT_EQ(ErrorOf("[\"cluster.ratios.host_bound\"]\nabs = 0.02\nbetter = lower\n").rfind("gate.toml: line 3: ", 0), 0u)
      << ErrorOf("[\"cluster.ratios.host_bound\"]\nabs = 0.02\nbetter = lower\n");
  EXPECT_EQ(ErrorOf("\n[\"cluster.ratios.host_bound\"]\nabs = \"2%\"\n"),
            "gate.toml: line 3: `abs` must be a number");
  EXPECT_EQ(ErrorOf("[\"cluster.ratios.host_bound\"]\nabs = 0.02\nmax = 3\n"),
            "gate.toml: line 3: unknown key `max` in [\"cluster.ratios.host_bound\"] (expected better, abs, rel)");
  EXPECT_EQ(ErrorOf("[\"cluster.ratios.nope\"]\nabs = 1\n"),
            "gate.toml: line 1: `cluster.ratios.nope` is not a numeric metric path of the analysis (METRICS.md; quote it: [\"cluster.ratios.host_bound\"])");
  EXPECT_EQ(ErrorOf("[\"cluster.ratios\"]\nabs = 1\n").rfind("gate.toml: line 1: ", 0), 0u);
  EXPECT_EQ(ErrorOf("[\"cluster.mfu\"]\nbetter = \"up\"\nabs = 1\n"),
            "gate.toml: line 2: `better` must be \"lower\" or \"higher\"");
  EXPECT_EQ(ErrorOf("[\"cluster.mfu\"]\nabs = -1\n"), "gate.toml: line 2: `abs` must be >= 0");
  EXPECT_EQ(ErrorOf("[\"cluster.mfu\"]\nbetter = \"higher\"\n"), "gate.toml: line 1: [\"cluster.mfu\"] needs abs or rel");
  EXPECT_EQ(ErrorOf("defaults = 1\n"), "gate.toml: line 1: `defaults` must be true or false");
}

TEST(Gate, JsonRoundTripGivesTheSameVerdicts) {
  analysis::Analysis a = Sample();
  a.add_warnings("w");
  const analysis::Analysis b = ParseAnalysisJson(ToStableJson(a), "base.json");
  const GateResult r = RunGate(b, a, DefaultGateThresholds());
  EXPECT_FALSE(r.regressed());
  for (const GateRow& row : r.rows) EXPECT_EQ(row.delta, 0) << row.threshold.path;
  try {
    ParseAnalysisJson("{\"cluster\": [1, 2]}", "base.json");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("base.json: not an `analyze --json` document: ", 0), 0u) << e.what();
  }
}

// LoadAnalysisJson reads a file in one piece (its size known), and a pipe
// (`--baseline /dev/stdin`, size unknown) through the stream: the same analysis.
TEST(Gate, LoadAnalysisJsonReadsFilesAndPipes) {
  analysis::Analysis a = Sample();
  a.add_warnings("w");
  const std::string json = ToStableJson(a);
  const std::string file = ::testing::TempDir() + "gate_load_" + std::to_string(getpid()) + ".json";
  std::ofstream(file, std::ios::binary) << json;
  EXPECT_EQ(ToStableJson(LoadAnalysisJson(file)), json);
  const std::string fifo = file + ".fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << json; });
  const analysis::Analysis from_pipe = LoadAnalysisJson(fifo);
  writer.join();
  EXPECT_EQ(ToStableJson(from_pipe), json);
  std::remove(file.c_str());
  std::remove(fifo.c_str());
  try {
    LoadAnalysisJson(file);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), file + ": cannot open the analysis document");
  }
  // A directory: its "size" is LLONG_MAX on ext4, which once threw bad_alloc.
  try {
    LoadAnalysisJson(::testing::TempDir());
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), ::testing::TempDir() + ": is a directory, not an analysis document");
  }
}

// Any JSON object parses (unknown fields are ignored): a document without
// the cluster section, such as `advise --json`'s, is refused, not gated as
// all zeros (a false regression).
TEST(Gate, LoadAnalysisJsonRefusesOtherDocuments) {
  const std::string file = ::testing::TempDir() + "gate_other_" + std::to_string(getpid()) + ".json";
  for (const char* text : {"{}", "{\"proposals\": [], \"source\": \"tracegen\"}"}) {
    std::ofstream(file, std::ios::binary) << text;
    for (int threads : {1, 2}) {
      try {
        LoadAnalysisJson(file, threads);
        ADD_FAILURE() << "no error for " << text;
      } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), file + ": not an `analyze --json` document: it has no \"cluster\" section");
      }
    }
  }
  std::remove(file.c_str());
}

TEST(Gate, XmlEscapeCoversMarkupAndControlCharacters) {
  EXPECT_EQ(XmlEscape("<a href=\"x\">&'\x01"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;?");
}

TEST(Gate, RegressedStepTimeListsTheTopOperatorDeltas) {
  // Hand-built (analyzer/diff/diff_test_analyses.h): the step goes 10 -> 12 ms
  // per rank and step, Permute's device time 2 -> 4 ms, NewOp appears with
  // 0.5 ms, OldOp (1 ms) goes, Permute's host-bound dispatch 0.25 -> 1.75 ms.
  const GateResult r = RunGate(testing::DiffSample(false), testing::DiffSample(true),
                               DefaultGateThresholds());
  EXPECT_EQ(Row(r, "cluster.step_time_ns.median").verdict, GateVerdict::kRegressed);
  EXPECT_TRUE(r.time_regressed());
  const std::string md = GateMarkdown(r);
  const size_t at = md.find("\n#### What got slower");
  ASSERT_NE(at, std::string::npos) << md;
  EXPECT_EQ(md.substr(at),
            "\n#### What got slower: top operator deltas (baseline → current)\n\n"
            "Device time per rank and step from `cluster.operators`; share = delta / the step-time "
            "change (+2.000 ms per rank and step).\n\n"
            "| operator | class | baseline | current | delta | share of step change |\n"
            "|---|---|---:|---:|---:|---:|\n"
            "| `Permute` | vector | 2.000 ms | 4.000 ms | +2.000 ms | 100.0% |\n"
            "| `NewOp` | other | - | 0.500 ms | +0.500 ms | 25.0% |\n"
            "\n"
            "| dispatched operator | launches | host-bound baseline | host-bound current | delta | share of step change |\n"
            "|---|---:|---:|---:|---:|---:|\n"
            "| `Permute` | 40 → 80 | 0.250 ms | 1.750 ms | +1.500 ms | 75.0% |\n");
  // The JUnit failure of a time metric says the same in one line.
  const std::string xml = GateJUnitXml(r);
  EXPECT_NE(xml.find("cluster.step_time_ns.median: baseline 10.000 ms, current 12.000 ms, delta +2.000 ms "
                     "(+20.0%), threshold lower better, rise &lt;= 5%\n"
                     "slower operators (device time per rank and step): Permute +2.000 ms (100.0% of the "
                     "step change); NewOp +0.500 ms (25.0% of the step change). Host-bound dispatch grew "
                     "for: Permute +1.500 ms</failure>"),
            std::string::npos)
      << xml;
}

TEST(Gate, MemoryOnlyRegressionHasNoOperatorDeltas) {
  analysis::Analysis cur = testing::DiffSample(false);
  cur.mutable_cluster()->mutable_memory()->set_peak_bytes(int64_t{50} << 30);
  analysis::Analysis base = testing::DiffSample(false);
  base.mutable_cluster()->mutable_memory()->set_peak_bytes(int64_t{40} << 30);
  const GateResult r = RunGate(base, cur, DefaultGateThresholds());
  EXPECT_TRUE(r.regressed());
  EXPECT_FALSE(r.time_regressed());
  EXPECT_EQ(GateMarkdown(r).find("What got slower"), std::string::npos);
  EXPECT_EQ(GateJUnitXml(r).find("slower operators"), std::string::npos);
}

TEST(Gate, TimeMetrics) {
  EXPECT_TRUE(IsTimeMetric("cluster.step_time_ns.median"));
  EXPECT_TRUE(IsTimeMetric("cluster.ratios.host_bound"));
  EXPECT_TRUE(IsTimeMetric("cluster.comm_by_class.EP.unmasked_fraction"));
  EXPECT_TRUE(IsTimeMetric("cluster.mfu"));
  EXPECT_TRUE(IsTimeMetric("cluster.tokens_per_s"));
  EXPECT_FALSE(IsTimeMetric("cluster.memory.peak_bytes"));
  EXPECT_FALSE(IsTimeMetric("cluster.expert_imbalance.max_vio_mean"));
}

}  // namespace
}  // namespace moetrace
