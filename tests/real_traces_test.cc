// Every real trace in ../shared/traces converts to .mtrace and .pftrace, and
// the .mtrace reads back with the same counts as the original input.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "formats/open_trace.h"
#include "formats/trace_summary.h"
#include "tests/run_command.h"

namespace moetrace::testing {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> RealInputs() {
  std::string root = RealTracesDir();
  std::vector<std::string> inputs;
  if (root.empty()) return inputs;
  for (const auto& e : fs::directory_iterator(root + "/kineto")) {
    if (e.is_directory()) inputs.push_back(e.path().string());
  }
  inputs.push_back(root + "/ascend/advisor-timeline");
  inputs.push_back(root + "/ascend/kernel_details-with-hccl.csv");
  inputs.push_back(root + "/ascend/kernel_details-aic-metrics.csv");
  std::sort(inputs.begin(), inputs.end());
  return inputs;
}

TEST(RealTraces, ConvertToNativeAndPerfettoKeepsEveryEvent) {
  std::vector<std::string> inputs = RealInputs();
  if (inputs.empty()) GTEST_SKIP() << "real traces not found (set MOETRACE_REAL_TRACES)";
  std::string dir = TempDir("real");
  for (const std::string& in : inputs) {
    SCOPED_TRACE(in);
    std::string name = fs::path(in).filename().string();
    std::string mtrace = dir + "/" + name + ".mtrace";
    CommandResult r = RunMoetrace("convert '" + in + "' -o '" + mtrace + "'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    r = RunMoetrace("convert '" + in + "' -o '" + dir + "/" + name + ".pftrace'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_GT(fs::file_size(dir + "/" + name + ".pftrace"), 100u);

    TraceSummary original = Summarize(*OpenTrace(in));
    TraceSummary native = Summarize(*OpenTrace(mtrace));
    EXPECT_GT(original.events(), 0);
    EXPECT_EQ(native.events_by_category, original.events_by_category);
    EXPECT_EQ(native.tracks_by_kind, original.tracks_by_kind);
    EXPECT_EQ(native.counter_samples, original.counter_samples);
    EXPECT_EQ(native.rank_ids, original.rank_ids);
    EXPECT_EQ(native.import_stats, original.import_stats);
    EXPECT_EQ(native.metadata, original.metadata);
    EXPECT_EQ(native.start_ns, original.start_ns);
    EXPECT_EQ(native.end_ns, original.end_ns);
  }
}

// Every event's shape as text, in track and row order, over all ranks.
std::vector<std::string> ShapeTexts(const std::string& path) {
  std::vector<std::string> out;
  auto src = OpenTrace(path);
  for (size_t k = 0; k < src->rank_count(); ++k) {
    const Rank r = src->ReadRank(k);
    for (const Track& t : r.tracks) {
      for (size_t i = 0; i < t.events.size(); ++i) {
        if (t.events.ShapeAt(i) != 0) out.emplace_back(r.strings.Get(t.events.ShapeAt(i)));
      }
    }
  }
  return out;
}

TEST(RealTraces, ConvertKeepsInputShapesThroughTwoNativeFiles) {
  const std::string root = RealTracesDir();
  if (root.empty()) GTEST_SKIP() << "real traces not found (set MOETRACE_REAL_TRACES)";
  // Events with shapes (formats/*/README.md): b200-eager 4,805 cpu_ops and
  // 927 device ops; the DB's 10 of 11 compute tasks; all 29 CSV rows.
  const std::pair<std::string, size_t> inputs[] = {
      {root + "/kineto/b200-eager", 4805 + 927},
      {root + "/ascend/msprof-db", 10},
      {root + "/ascend/kernel_details-aic-metrics.csv", 29}};
  const std::string dir = TempDir("shapes");
  for (const auto& [in, shaped] : inputs) {
    SCOPED_TRACE(in);
    const std::string b = dir + "/b.mtrace", c = dir + "/c.mtrace";
    CommandResult r = RunMoetrace("convert '" + in + "' -o '" + b + "'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    r = RunMoetrace("convert '" + b + "' -o '" + c + "'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(ReadFile(b), ReadFile(c));
    const std::vector<std::string> want = ShapeTexts(in);
    EXPECT_EQ(want.size(), shaped);
    EXPECT_EQ(ShapeTexts(b), want);
  }
}

}  // namespace
}  // namespace moetrace::testing
