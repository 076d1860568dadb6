// The operator view on a real Kineto trace against a direct sum over its
// raw JSON, computed here independently of the importer and the analysis.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "formats/open_trace.h"
#include "formats/real_traces_dir.h"

namespace moetrace::ops {
namespace {

namespace fs = std::filesystem;

std::string Gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  if (!f) return out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

struct Sum {
  int64_t count = 0, total = 0;
  std::vector<int64_t> durs;
};

TEST(OpsRealTrace, AllreduceV100TopKernelsEqualTheRawJsonSums) {
  const fs::path dir = fs::path(RealTracesRoot()) / "kineto" / "allreduce-v100";
  if (!fs::exists(dir)) GTEST_SKIP() << "real trace absent (set MOETRACE_REAL_TRACES): " << dir;
  std::string file;
  for (const auto& e : fs::directory_iterator(dir)) file = e.path().string();
  // Every `cat: kernel` event's `dur` (whole µs in this trace) by name.
  const std::string text = Gunzip(file);
  ASSERT_FALSE(text.empty());
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(text);
  std::map<std::string, Sum> by_name;
  int64_t kernels = 0, kernel_ns = 0;
  for (simdjson::dom::element e : doc["traceEvents"].get_array()) {
    std::string_view cat;
    if (e["cat"].get(cat) || cat != "kernel") continue;
    const int64_t dur = int64_t(e["dur"]) * 1000;
    Sum& s = by_name[std::string(std::string_view(e["name"]))];
    s.count += 1;
    s.total += dur;
    s.durs.push_back(dur);
    ++kernels;
    kernel_ns += dur;
  }
  ASSERT_EQ(kernels, 19370);
  std::vector<std::pair<int64_t, std::string>> order;
  for (const auto& [name, s] : by_name) order.emplace_back(-s.total, name);
  std::sort(order.begin(), order.end());

  AnalyzeOptions opt;
  opt.threads = 1;
  const analysis::Analysis a = Analyze(*OpenTrace(dir.string()), opt);
  ASSERT_EQ(a.ranks_size(), 1);
  const analysis::Operators& o = a.ranks(0).operators();
  // Kernels are the compute and communication classes; memcpy / memset the
  // copy class.
  int64_t kernel_classes = 0, kernel_ops = 0;
  for (const auto& c : o.classes()) {
    if (c.op_class() == "copy") continue;
    kernel_classes += c.total_ns();
    kernel_ops += c.count();
  }
  EXPECT_EQ(kernel_ops, kernels);
  EXPECT_EQ(kernel_classes, kernel_ns);
  EXPECT_EQ(o.distinct_names(), static_cast<int64_t>(by_name.size()) + 2);  // + Memcpy, Memset names
  ASSERT_EQ(o.top_size(), 5);
  for (int i = 0; i < o.top_size(); ++i) {
    const Sum& s = by_name.at(order[static_cast<size_t>(i)].second);
    EXPECT_EQ(o.top(i).name(), order[static_cast<size_t>(i)].second) << i;
    EXPECT_EQ(o.top(i).count(), s.count) << i;
    EXPECT_EQ(o.top(i).total_ns(), s.total) << i;
    std::vector<int64_t> d = s.durs;
    std::sort(d.begin(), d.end());
    EXPECT_EQ(o.top(i).p50_ns(), d[(d.size() + 1) / 2 - 1]) << i;          // nearest rank
    EXPECT_EQ(o.top(i).p99_ns(), d[(d.size() * 99 + 99) / 100 - 1]) << i;
  }
  EXPECT_EQ(o.top(0).name(), "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)");
  EXPECT_EQ(o.top(0).total_ns(), 357'343'000);
  EXPECT_EQ(o.top(0).count(), 2020);
  // One rank: the cluster's rows are the rank's, with histogram percentiles.
  const analysis::Operators& c = a.cluster().operators();
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(c.top(i).name(), o.top(i).name());
    EXPECT_EQ(c.top(i).total_ns(), o.top(i).total_ns());
  }
}

}  // namespace
}  // namespace moetrace::ops
