#include "analyzer/hta/hta.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "analyzer/hta/numpy_sort.h"
#include "formats/errors.h"
#include "formats/real_traces_dir.h"

namespace moetrace::hta {
namespace {

void ExpectOptNear(const simdjson::dom::object& o, const char* key, std::optional<double> got,
                   double tol, const std::string& where) {
  simdjson::dom::element e;
  if (o.at_key(key).get(e)) {
    EXPECT_FALSE(got.has_value()) << where << " " << key << " should be absent";
    return;
  }
  ASSERT_TRUE(got.has_value()) << where << " " << key << " missing";
  if (e.is_null()) {
    EXPECT_TRUE(std::isnan(*got)) << where << " " << key;
    return;
  }
  EXPECT_NEAR(double(e), *got, tol) << where << " " << key;
}

class HtaReference : public ::testing::TestWithParam<std::string> {};

TEST_P(HtaReference, MatchesHta) {
  namespace fs = std::filesystem;
  const std::string dir = RealTracesRoot() + "/kineto";
  if (!fs::exists(dir + "/hta-reference.json")) GTEST_SKIP() << "no real traces at " << dir;
  simdjson::dom::parser parser;
  simdjson::dom::element ref = parser.load(dir + "/hta-reference.json");
  const std::string set = GetParam();
  HtaResult res = ComputeHta({dir + "/" + set});
  EXPECT_TRUE(res.errors.empty());
  simdjson::dom::object ranks = ref[set]["ranks"];
  ASSERT_EQ(res.ranks.size(), ranks.size());
  for (const HtaRank& r : res.ranks) {
    std::string where = set + " rank " + std::to_string(r.rank);
    simdjson::dom::object want = ranks[std::to_string(r.rank)];
    simdjson::dom::object t = want["temporal"];
    ASSERT_TRUE(r.temporal.has_value()) << where;
    ExpectOptNear(t, "kernel_span_us", r.temporal->kernel_span_us, 1, where);
    ExpectOptNear(t, "idle_us", r.temporal->idle_us, 1, where);
    ExpectOptNear(t, "compute_us", r.temporal->compute_us, 1, where);
    ExpectOptNear(t, "non_compute_us", r.temporal->non_compute_us, 1, where);
    ExpectOptNear(t, "idle_pct", r.temporal->idle_pct, 0.01, where);
    ExpectOptNear(t, "compute_pct", r.temporal->compute_pct, 0.01, where);
    ExpectOptNear(t, "non_compute_pct", r.temporal->non_compute_pct, 0.01, where);
    ExpectOptNear(want, "comm_comp_overlap_pct", r.comm_comp_overlap_pct, 0.01, where);
    simdjson::dom::object idle = want["idle_by_stream"];
    ASSERT_TRUE(r.idle_by_stream.has_value());
    EXPECT_EQ(idle.size(), r.idle_by_stream->size()) << where;
    for (const auto& [stream, s] : *r.idle_by_stream) {
      std::string w = where + " stream " + std::to_string(stream);
      simdjson::dom::object o;
      ASSERT_FALSE(idle.at_key(std::to_string(stream)).get(o)) << w;
      ExpectOptNear(o, "host_wait_us", s.host_wait_us, 1, w);
      ExpectOptNear(o, "kernel_wait_us", s.kernel_wait_us, 1, w);
      ExpectOptNear(o, "other_us", s.other_us, 1, w);
    }
    simdjson::dom::object l = want["launch"];
    EXPECT_EQ(int64_t(l["count"]), r.launch.count) << where;
    ExpectOptNear(l, "launch_delay_mean_us", r.launch.launch_delay_mean_us, 1, where);
    ExpectOptNear(l, "launch_delay_p50_us", r.launch.launch_delay_p50_us, 1, where);
  }
}

// Same figures whether a file's rows wait in memory for the set's plan or are
// read again afterwards (held_rows_bytes = 0: none held), on every real set.
TEST_P(HtaReference, FiguresDoNotDependOnHeldRows) {
  const std::string dir = RealTracesRoot() + "/kineto";
  if (!std::filesystem::exists(dir + "/" + GetParam())) GTEST_SKIP() << "no real traces at " << dir;
  HtaResult held = ComputeHta({dir + "/" + GetParam()}, nullptr);
  HtaResult reread = ComputeHta({dir + "/" + GetParam()}, nullptr, /*held_rows_bytes=*/0);
  ASSERT_EQ(held.ranks.size(), reread.ranks.size());
  ASSERT_FALSE(held.ranks.empty());
  EXPECT_EQ(held.errors, reread.errors);
  EXPECT_EQ(held.warnings, reread.warnings);
  auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
  for (size_t i = 0; i < held.ranks.size(); ++i) {
    const HtaRank &a = held.ranks[i], &b = reread.ranks[i];
    EXPECT_EQ(a.rank, b.rank);
    EXPECT_EQ(a.file, b.file);
    ASSERT_EQ(a.temporal.has_value(), b.temporal.has_value());
    if (a.temporal) {
      EXPECT_TRUE(same(a.temporal->kernel_span_us, b.temporal->kernel_span_us));
      EXPECT_TRUE(same(a.temporal->idle_us, b.temporal->idle_us));
      EXPECT_TRUE(same(a.temporal->compute_us, b.temporal->compute_us));
      EXPECT_TRUE(same(a.temporal->non_compute_pct, b.temporal->non_compute_pct));
    }
    EXPECT_TRUE(same(a.comm_comp_overlap_pct, b.comm_comp_overlap_pct));
    ASSERT_EQ(a.idle_by_stream.has_value(), b.idle_by_stream.has_value());
    if (a.idle_by_stream) {
      ASSERT_EQ(a.idle_by_stream->size(), b.idle_by_stream->size());
      for (const auto& [stream, s] : *a.idle_by_stream) {
        const IdleStream& t = b.idle_by_stream->at(stream);
        EXPECT_EQ(s.host_wait_us, t.host_wait_us);
        EXPECT_EQ(s.kernel_wait_us, t.kernel_wait_us);
        EXPECT_EQ(s.other_us, t.other_us);
      }
    }
    EXPECT_EQ(a.launch.count, b.launch.count);
    EXPECT_EQ(a.launch.launch_delay_mean_us, b.launch.launch_delay_mean_us);
    EXPECT_EQ(a.launch.launch_delay_p50_us, b.launch.launch_delay_p50_us);
  }
}

INSTANTIATE_TEST_SUITE_P(Sets, HtaReference,
                         ::testing::Values("a2a-2rank", "allreduce-v100", "b200-eager",
                                           "cuda-sync-alexnet", "legacy-resnet50",
                                           "ns-resolution"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

TEST(NumpySort, SmallRangesAreInsertionSortedStably) {
  // n <= 16 never partitions: numpy's insertion sort keeps equal keys in
  // input order.
  std::vector<int64_t> k = {3, 1, 2, 1, 3, 0, 2, 1, 1, 0, 3, 2};
  std::vector<uint32_t> p;
  NumpyArgsort(k.data(), k.size(), &p);
  EXPECT_EQ(p, (std::vector<uint32_t>{5, 9, 1, 3, 7, 8, 2, 6, 11, 0, 4, 10}));
}

TEST(NumpySort, PartitionsAndHeapsortSortLargeInputs) {
  // Many ties and an adversarial pattern (organ pipe) that exhausts the
  // depth budget, so the heapsort path runs too.
  for (size_t n : {size_t{17}, size_t{1000}, size_t{100000}}) {
    std::vector<int64_t> k(n);
    for (size_t i = 0; i < n; ++i) k[i] = static_cast<int64_t>(i < n / 2 ? i : n - i) % 97;
    std::vector<uint32_t> p;
    NumpyArgsort(k.data(), k.size(), &p);
    std::vector<bool> seen(n, false);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_LT(p[i], n);
      EXPECT_FALSE(seen[p[i]]);
      seen[p[i]] = true;
      if (i > 0) {
        EXPECT_LE(k[p[i - 1]], k[p[i]]);
      }
    }
  }
}

TEST(PairwiseSum, SmallAndLarge) {
  std::vector<double> a(1000);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i);
  EXPECT_EQ(PairwiseSum(a.data(), a.size()), 499500.0);
  EXPECT_EQ(PairwiseSum(a.data(), 5), 10.0);
  EXPECT_EQ(Round2(0.125), 0.12);  // ties to even
  EXPECT_EQ(Round2(0.135), 0.14);
}

TEST(KineToRows, RankAndClassification) {
  EXPECT_EQ(FindRank("{\"rank\":3}\n\"rank\": 7"), 7);
  EXPECT_EQ(FindRank("{\"rank\":3}"), 0);
  EXPECT_EQ(FindRank("\"ranks\": 4, \"rank\":\t12"), 12);
  EXPECT_EQ(ClassifyKernelName("ncclDevKernel_AllReduce"), KernelClass::kComm);
  EXPECT_EQ(ClassifyKernelName("Memcpy HtoD (Pageable -> Device)"), KernelClass::kMemory);
  EXPECT_EQ(ClassifyKernelName("Stream Sync"), KernelClass::kOther);
  EXPECT_EQ(ClassifyKernelName("my_dma_kernel"), KernelClass::kOther);
  EXPECT_EQ(ClassifyKernelName("triton_poi_fused_add"), KernelClass::kCompute);
  EXPECT_EQ(ClassifyKernelName("cudaLaunchKernel"), KernelClass::kOther);
  EXPECT_EQ(ClassifyKernelName("foo\nSync"), KernelClass::kCompute);
}

// A truncated file is found when simdjson indexes it, before its iterator
// moves: the error names the end of the text, where more was expected.
TEST(KinetoRows, TruncatedFileNamesItsEnd) {
  const std::string text = R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": 2, "name": "k")";
  try {
    ParseKinetoRows("t.json", text);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "t.json: byte " + std::to_string(text.size()) +
                                         ": malformed JSON: JSON document ended early in the middle of an "
                                         "object or array.");
  }
}

TEST(KinetoRows, FractionalModeRounding) {
  // ts 10.3 dur 0.5 -> ts 11, dur -1 (hta-compat.md §2.2 quirk).
  RankRows r = ParseKinetoRows(
      "t.json",
      R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":10.3,"dur":0.5,)"
      R"("args":{"stream":"7","correlation":5}},{"ph":"M","name":"x"},)"
      R"({"cat":"Trace","ts":1,"dur":3},{"cat":"cpu_op","name":"a","ts":12,"dur":2.5}]})");
  EXPECT_TRUE(r.fractional);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r.ts[0], 11);
  EXPECT_EQ(r.dur[0], -1.0);
  EXPECT_EQ(r.stream[0], 7);
  EXPECT_EQ(r.correlation[0], 5);
  EXPECT_EQ(r.idx[1], 3);
  EXPECT_EQ(r.ts[1], 12);
  EXPECT_EQ(r.dur[1], 2.0);  // floor(14.5) - 12
}

}  // namespace
}  // namespace moetrace::hta
