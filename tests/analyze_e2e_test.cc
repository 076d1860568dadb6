// End to end: `moetrace analyze --json` on the real traces of shared/traces.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "formats/real_traces_dir.h"

namespace {

using moetrace::RealTracesRoot;

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `moetrace analyze INPUT --json OUT`; returns the JSON text.
std::string Analyze(const std::string& input, const std::string& tag) {
  const std::string out = (fs::temp_directory_path() / ("moetrace_e2e_" + tag + ".json")).string();
  const std::string cmd =
      std::string(MOETRACE_BIN) + " analyze '" + input + "' --json '" + out + "' > /dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::string text = Slurp(out);
  fs::remove(out);
  return text;
}

void ExpectPartition(simdjson::dom::element b, const std::string& where) {
  int64_t span = b["span_ns"], compute = b["compute_ns"], exposed = b["comm_exposed_ns"],
          copy = b["copy_exposed_ns"], free = b["free_ns"], hb = b["host_bound_ns"],
          sync = b["host_bound_sync_ns"], disp = b["host_bound_dispatch_ns"];
  EXPECT_EQ(span, compute + exposed + copy + free) << where;
  EXPECT_EQ(hb, sync + disp) << where;
  EXPECT_LE(hb, free) << where;
}

class KinetoSets : public ::testing::TestWithParam<std::string> {};

TEST_P(KinetoSets, HtaSectionMatchesReferenceAndJsonIsStable) {
  const std::string dir = RealTracesRoot() + "/kineto";
  if (!fs::exists(dir + "/hta-reference.json")) GTEST_SKIP() << "no real traces at " << dir;
  const std::string set = GetParam();
  const std::string text = Analyze(dir + "/" + set, set);
  EXPECT_EQ(text, Analyze(dir + "/" + set, set + "_again"));  // byte-identical
  simdjson::dom::parser p1, p2;
  simdjson::dom::element got = p1.parse(text);
  simdjson::dom::element ref = p2.load(dir + "/hta-reference.json");
  simdjson::dom::object want_ranks;
  if (ref[set]["ranks"].get(want_ranks)) {
    ADD_FAILURE() << set << " has no figures in hta-reference.json";
    return;
  }
  size_t seen = 0;
  for (simdjson::dom::element r : got["ranks"].get_array()) {
    const std::string where = set + " rank " + std::to_string(int64_t(r["rank"]));
    ExpectPartition(r["breakdown"], where);
    for (simdjson::dom::element st : r["steps"].get_array()) ExpectPartition(st, where);
    simdjson::dom::element want;
    if (want_ranks.at_key(std::to_string(int64_t(r["rank"]))).get(want)) continue;
    ++seen;
    simdjson::dom::element h = r["hta"];
    for (const char* k : {"kernel_span_us", "idle_us", "compute_us", "non_compute_us"}) {
      EXPECT_NEAR(double(h["temporal"][k]), double(want["temporal"][k]), 1.0) << where << k;
    }
    for (const char* k : {"idle_pct", "compute_pct", "non_compute_pct"}) {
      EXPECT_NEAR(double(h["temporal"][k]), double(want["temporal"][k]), 0.01) << where << k;
    }
    if (want["comm_comp_overlap_pct"].is_null()) {
      EXPECT_TRUE(h["comm_comp_overlap_pct"].is_null()) << where;
    } else {
      EXPECT_NEAR(double(h["comm_comp_overlap_pct"]), double(want["comm_comp_overlap_pct"]), 0.01)
          << where;
    }
    simdjson::dom::object want_idle = want["idle_by_stream"];
    simdjson::dom::object got_idle = h["idle_by_stream"];
    EXPECT_EQ(want_idle.size(), got_idle.size()) << where;
    for (auto [stream, cats] : want_idle) {
      simdjson::dom::object g;
      ASSERT_FALSE(got_idle.at_key(stream).get(g)) << where << " stream " << stream;
      simdjson::dom::object w = cats;
      EXPECT_EQ(w.size(), g.size()) << where << " stream " << stream;
      for (auto [cat, v] : w) EXPECT_NEAR(double(g[cat]), double(v), 1.0) << where << cat;
    }
    EXPECT_EQ(int64_t(h["launch"]["count"]), int64_t(want["launch"]["count"])) << where;
    for (const char* k : {"launch_delay_mean_us", "launch_delay_p50_us"}) {
      if (want["launch"][k].is_null()) {  // no launches
        EXPECT_TRUE(h["launch"][k].is_null()) << where << k;
      } else {
        EXPECT_NEAR(double(h["launch"][k]), double(want["launch"][k]), 1.0) << where << k;
      }
    }
  }
  EXPECT_EQ(seen, want_ranks.size());
}

// Every set in the folder, so that sets added later are walked too.
std::vector<std::string> KinetoSetNames() {
  std::vector<std::string> sets;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(RealTracesRoot() + "/kineto", ec)) {
    if (e.is_directory()) sets.push_back(e.path().filename().string());
  }
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) sets.push_back("absent");  // reported skipped
  return sets;
}

INSTANTIATE_TEST_SUITE_P(Real, KinetoSets, ::testing::ValuesIn(KinetoSetNames()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

TEST(AscendAdvisorTimeline, ComputeAndFreeMatchOverlapAnalysis) {
  const std::string dir = RealTracesRoot() + "/ascend/advisor-timeline";
  if (!fs::exists(dir)) GTEST_SKIP() << "no real traces at " << dir;
  simdjson::dom::parser p;
  simdjson::dom::element doc = p.parse(Analyze(dir, "ascend"));
  simdjson::dom::element b = doc["ranks"].at(0)["breakdown"];
  ExpectPartition(b, "advisor-timeline");
  // The profiler's Overlap Analysis: Computing 1788.25 us, Free 9481.67 us.
  EXPECT_NEAR(int64_t(b["compute_ns"]), 1'788'250, 10);
  // Its Free also counts the two MEMCPY_ASYNC tasks (1.11 + 1.08 us), which
  // METRICS.md counts as copy, not idle: free + exposed copy = its Free.
  EXPECT_NEAR(int64_t(b["free_ns"]) + int64_t(b["copy_exposed_ns"]), 9'481'670, 10);
  EXPECT_EQ(int64_t(b["copy_exposed_ns"]), 2'190);

  // The same figures computed the profiler's way (copies are Free there):
  // Computing 1788.25 us in 274 segments, Free 9481.67 us in 273.
  simdjson::dom::element ov = doc["ranks"].at(0)["ascend"]["overlap_analysis"];
  EXPECT_NEAR(int64_t(ov["computing_ns"]) / 1e3, 1788.25, 0.01);
  EXPECT_NEAR(int64_t(ov["free_ns"]) / 1e3, 9481.67, 0.01);
  EXPECT_EQ(int64_t(ov["communication_not_overlapped_ns"]), 0);
  EXPECT_EQ(int64_t(ov["computing_segments"]), 274);
  EXPECT_EQ(int64_t(ov["free_segments"]), 273);
  // And the label checks against the profiler's own records use them.
  int checked = 0;
  for (simdjson::dom::element c : doc["label_checks"].get_array()) {
    std::string_view key = c["key"];
    if (key.substr(0, 17) != "overlap_analysis.") continue;
    EXPECT_NEAR(double(c["actual"]), double(c["expected"]), 0.01) << key;
    ++checked;
  }
  EXPECT_EQ(checked, 5);  // computing/free in us and in segments, span
}

TEST(AnalyzeE2e, AscendSectionOnlyOnAscendTraces) {
  const std::string dir = RealTracesRoot() + "/kineto/a2a-2rank";
  if (!fs::exists(dir)) GTEST_SKIP() << "no real traces at " << dir;
  EXPECT_EQ(Analyze(dir, "no_ascend").find("\"ascend\""), std::string::npos);
}

}  // namespace

namespace {

// Runs `cmd`, returning its standard output and exit status.
std::string Capture(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  while (p && (n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = p ? pclose(p) : -1;
  return out;
}

// A trace with a value of the wrong type in every field the reader uses:
// `analyze` reads it and `info` shows what was skipped (issue #13).
TEST(AnalyzeE2e, TypeSwappedFieldsAreCountedNotFatal) {
  const std::string path = (fs::temp_directory_path() / "moetrace_e2e_swapped.json").string();
  std::ofstream(path) << R"J({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"correlation": "5", "External id": [1]}},
  {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 20, "dur": "30", "args": {"correlation": 5, "stream": "7", "device": true, "bytes": {}}},
  {"ph": "X", "cat": "kernel", "name": 12, "pid": 0, "tid": 7, "ts": 60, "dur": [1], "args": {"stream": 7, "correlation": "x"}},
  {"ph": "X", "cat": "kernel", "name": "late", "pid": 0, "tid": 7, "ts": 1e30, "dur": 1, "args": {"stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "nowhere", "pid": 1e20, "tid": 7, "ts": 70, "dur": 1, "args": {"stream": 7}},
  {"ph": "X", "cat": 3, "name": "nocat", "pid": 0, "tid": 7, "ts": 80, "dur": 1, "args": 5}
]})J";
  int status = 0;
  Capture(std::string(MOETRACE_BIN) + " analyze '" + path + "' 2>&1", &status);
  EXPECT_EQ(status, 0);
  const std::string info = Capture(std::string(MOETRACE_BIN) + " info '" + path + "' 2>&1", &status);
  EXPECT_EQ(status, 0) << info;
  // "    <key> <spaces> <count>" lines.
  auto count = [&](const std::string& key) -> int64_t {
    const size_t at = info.find("    " + key + " ");
    if (at == std::string::npos) return 0;
    const size_t eol = info.find('\n', at);
    const size_t num = info.find_last_of(' ', eol) + 1;
    return std::stoll(info.substr(num, eol - num));
  };
  for (const char* key :
       {"coerced.arg.correlation", "coerced.arg.stream", "skipped.arg.External id",
        "skipped.arg.device", "skipped.arg.bytes", "skipped.arg.correlation", "skipped.field.name",
        "skipped.field.dur", "skipped.field.cat", "skipped.field.args", "skipped.event.ts",
        "skipped.event.pid"}) {
    EXPECT_EQ(count(key), 1) << key << "\n" << info;
  }
  fs::remove(path);
}

}  // namespace
