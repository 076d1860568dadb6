// HTA figures on small hand-written Kineto traces, worked out by hand from
// hta-compat.md.
#include <gtest/gtest.h>

#include <simdjson.h>

#include <cmath>
#include <random>
#include <string>
#include <utility>

#include "analyzer/hta/hta.h"
#include "formats/errors.h"

namespace moetrace::hta {
namespace {

// Row 0 is a CPU op at 250: kernels without a launch call get partner 0
// and so "launch time" 250 (hta-compat.md §3 quirk).
constexpr const char* kOneRank = R"({"distributedInfo": {"rank": 3}, "traceEvents": [
 {"ph":"X","cat":"cpu_op","name":"aten::mm","ts":250,"dur":5},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":110,"dur":10,"args":{"correlation":1}},
 {"ph":"X","cat":"kernel","name":"gemm","ts":130,"dur":20,"args":{"stream":7,"correlation":1}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":160,"dur":10,"args":{"correlation":2}},
 {"ph":"X","cat":"kernel","name":"gemm2","ts":175,"dur":25,"args":{"stream":7,"correlation":2}},
 {"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce","ts":140,"dur":100,"args":{"stream":20,"correlation":3}},
 {"ph":"M","name":"process_name","pid":1,"args":{"name":"x"}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":300,"dur":5,"args":{"correlation":5}},
 {"ph":"X","cat":"kernel","name":"triton_x","ts":310,"dur":10,"args":{"stream":7,"correlation":5}},
 {"ph":"X","cat":"kernel","name":"k3","ts":260,"dur":5,"args":{"stream":20,"correlation":6}},
 {"ph":"X","cat":"Trace","name":"PyTorch Profiler","ts":0,"dur":1000}
]})";

TEST(HtaSynthetic, AllFourFiguresByHand) {
  HtaResult res = ComputeHtaOnRows({ParseKinetoRows("r3.json", kOneRank)});
  ASSERT_EQ(res.ranks.size(), 1u);
  EXPECT_TRUE(res.errors.empty());
  const HtaRank& r = res.ranks[0];
  EXPECT_EQ(r.rank, 3);
  // Device rows merge to [130,240) [260,265) [310,320): span 190, busy 125.
  ASSERT_TRUE(r.temporal);
  EXPECT_EQ(r.temporal->kernel_span_us, 190);
  EXPECT_EQ(r.temporal->idle_us, 65);
  EXPECT_EQ(r.temporal->compute_us, 60);       // gemm 20 + gemm2 25 + k3 5 + triton 10
  EXPECT_EQ(r.temporal->non_compute_us, 65);   // nccl alone: [150,175) + [200,240)
  EXPECT_EQ(r.temporal->idle_pct, 34.21);
  EXPECT_EQ(r.temporal->compute_pct, 31.58);
  EXPECT_EQ(r.temporal->non_compute_pct, 34.21);
  // Comm [140,240) overlaps compute on [140,150) and [175,200): 35 of 100.
  EXPECT_EQ(r.comm_comp_overlap_pct, 35.0);
  ASSERT_TRUE(r.idle_by_stream);
  ASSERT_EQ(r.idle_by_stream->size(), 2u);
  // Stream 7: gaps 25 (launch at 160 > 150) and 110 (launch 300 > 200).
  const IdleStream& s7 = r.idle_by_stream->at(7);
  EXPECT_EQ(s7.host_wait_us, 135.0);
  EXPECT_FALSE(s7.kernel_wait_us.has_value());
  EXPECT_EQ(s7.other_us, 0.0);
  // Stream 20: k3 has no launch, partner 0 = the CPU op at 250 > 240: host wait.
  const IdleStream& s20 = r.idle_by_stream->at(20);
  EXPECT_EQ(s20.host_wait_us, 20.0);
  EXPECT_FALSE(s20.kernel_wait_us.has_value());
  EXPECT_EQ(s20.other_us, 0.0);
  // Launch delays 130-110-10 = 10, 175-160-10 = 5, 310-300-5 = 5.
  EXPECT_EQ(r.launch.count, 3);
  EXPECT_DOUBLE_EQ(*r.launch.launch_delay_mean_us, 20.0 / 3);
  EXPECT_EQ(*r.launch.launch_delay_p50_us, 5.0);
}

TEST(HtaSynthetic, RankWithoutStepsFailsTheTemporalBreakdownOfTheSet) {
  const char* r0 = R"({"distributedInfo": {"rank": 0}, "traceEvents": [
   {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","ts":0,"dur":100},
   {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":10,"dur":5,"args":{"correlation":1}},
   {"ph":"X","cat":"kernel","name":"a","ts":20,"dur":10,"args":{"stream":7,"correlation":1}},
   {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","ts":100,"dur":100},
   {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":110,"dur":5,"args":{"correlation":2}},
   {"ph":"X","cat":"kernel","name":"b","ts":120,"dur":10,"args":{"stream":7,"correlation":2}}]})";
  const char* r1 = R"({"distributedInfo": {"rank": 1}, "traceEvents": [
   {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":10,"dur":5,"args":{"correlation":1}},
   {"ph":"X","cat":"kernel","name":"a","ts":20,"dur":10,"args":{"stream":7,"correlation":1}}]})";
  HtaResult res = ComputeHtaOnRows({ParseKinetoRows("r0.json", r0), ParseKinetoRows("r1.json", r1)});
  ASSERT_EQ(res.ranks.size(), 2u);
  EXPECT_FALSE(res.errors.empty());
  EXPECT_FALSE(res.ranks[0].temporal.has_value());  // HTA fails for every rank
  EXPECT_FALSE(res.ranks[1].temporal.has_value());
  // Rank 0 keeps step 1 only (before the last step's start at 100).
  EXPECT_EQ(res.ranks[0].launch.count, 1);
  EXPECT_EQ(res.ranks[1].launch.count, 0);
  EXPECT_FALSE(res.ranks[1].launch.launch_delay_mean_us.has_value());
}

TEST(HtaSynthetic, DuplicateRankLaterFileWinsAndMinifiedIsRankZero) {
  const char* a = R"({"distributedInfo": {"rank": 2}, "traceEvents": [
   {"ph":"X","cat":"kernel","name":"a","ts":0,"dur":10,"args":{"stream":7,"correlation":1}}]})";
  const char* b = R"({"distributedInfo": {"rank": 2}, "traceEvents": [
   {"ph":"X","cat":"kernel","name":"a","ts":0,"dur":30,"args":{"stream":7,"correlation":1}}]})";
  const char* minified = R"({"distributedInfo":{"rank":5},"traceEvents":[
   {"ph":"X","cat":"kernel","name":"a","ts":0,"dur":20,"args":{"stream":7,"correlation":1}}]})";
  HtaResult res = ComputeHtaOnRows(
      {ParseKinetoRows("a.json", a), ParseKinetoRows("b.json", b), ParseKinetoRows("m.json", minified)});
  ASSERT_EQ(res.ranks.size(), 2u);
  EXPECT_EQ(res.ranks[0].rank, 0);  // "rank":5 without a space is not matched
  EXPECT_EQ(res.ranks[0].temporal->kernel_span_us, 20);
  EXPECT_EQ(res.ranks[1].rank, 2);
  EXPECT_EQ(res.ranks[1].temporal->kernel_span_us, 30);  // b.json replaced a.json
  EXPECT_EQ(res.warnings.size(), 1u);
  EXPECT_TRUE(std::isnan(res.ranks[1].comm_comp_overlap_pct));  // no COMM row
}

TEST(HtaSynthetic, BadStepNameFailsLoading) {
  const char* r = R"({"traceEvents": [
   {"ph":"X","cat":"user_annotation","name":"ProfilerStep","ts":0,"dur":10},
   {"ph":"X","cat":"kernel","name":"a","ts":0,"dur":10,"args":{"stream":7,"correlation":1}}]})";
  EXPECT_THROW(ComputeHtaOnRows({ParseKinetoRows("bad.json", r)}), std::exception);
}

TEST(HtaSynthetic, MalformedJsonNamesTheFile) {
  // Binary (a gzip stream under a .json name) and an unclosed string fail
  // inside iterate(), before the document has an iterator: no crash.
  for (const char* text : {"\x1f\x8b\x08\x08\xc2O\x02k\x00\x03\xff\xfe", "{\"traceEvents\": [\"abc",
                           R"({"traceEvents": [{"ts": 1, "dur": )", "not json",
                           R"({"traceEvents": [{"ts": 1}, ]})", R"({"traceEvents": 5})"}) {
    try {
      ParseKinetoRows("broken.json", text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("broken.json: ", 0), 0u) << e.what();
    }
  }
}

// Keys are compared without being copied unless they hold an escape: an
// escaped spelling of the same key must still count, and a near miss not.
TEST(HtaSynthetic, EscapedKeysReadLikePlainOnes) {
  std::string escaped = kOneRank;
  for (auto [from, to] : {std::pair<std::string, std::string>{"\"ts\"", "\"t\\u0073\""},
                          {"\"correlation\"", "\"correlati\\u006fn\""},
                          {"\"stream\"", "\"\\u0073tream\""}}) {
    for (size_t at = escaped.find(from); at != std::string::npos; at = escaped.find(from, at)) {
      escaped.replace(at, from.size(), to);
      at += to.size();
    }
  }
  ASSERT_NE(escaped.find("correlati\\u006fn"), std::string::npos);
  RankRows plain = ParseKinetoRows("r3.json", kOneRank);
  RankRows esc = ParseKinetoRows("r3.json", escaped);
  EXPECT_EQ(esc.idx, plain.idx);
  EXPECT_EQ(esc.ts, plain.ts);
  EXPECT_EQ(esc.dur, plain.dur);
  EXPECT_EQ(esc.stream, plain.stream);
  EXPECT_EQ(esc.correlation, plain.correlation);
  EXPECT_EQ(esc.fractional, plain.fractional);
  // "tsx" is not "ts": no integer ts anywhere, so the file is fractional.
  std::string near = R"({"traceEvents": [{"ph":"X","cat":"kernel","name":"k","tsx":5,"dur":1}]})";
  EXPECT_TRUE(ParseKinetoRows("n.json", near).fractional);
  EXPECT_EQ(ParseKinetoRows("n.json", near).size(), 0u);
}

// The padded-view overload reads the text in place, with the same rows.
TEST(HtaSynthetic, PaddedViewParsesLikeAString) {
  std::string text = kOneRank;
  std::string padded = text + std::string(simdjson::SIMDJSON_PADDING, '\0');
  RankRows a = ParseKinetoRows("r3.json", text);
  RankRows b = ParseKinetoRows("r3.json", std::string_view(padded.data(), text.size()),
                               padded.size());
  EXPECT_EQ(a.rank, 3);
  EXPECT_EQ(b.rank, 3);
  EXPECT_EQ(a.idx, b.idx);
  EXPECT_EQ(a.ts, b.ts);
  EXPECT_EQ(a.dur, b.dur);
  EXPECT_EQ(a.kclass, b.kclass);
  EXPECT_EQ(a.bits, b.bits);
  EXPECT_EQ(a.size(), 9u);
}

// FindRank scans 16 bytes at a time for the key: it must find the first
// `"rank":\s+\d` exactly where a plain search does, at any alignment.
int64_t ReferenceFindRank(std::string_view text) {
  size_t pos = 0;
  while ((pos = text.find("\"rank\":", pos)) != std::string_view::npos) {
    size_t i = pos + 7, spaces = 0;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i, ++spaces;
    size_t d = i;
    int64_t r = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') r = r * 10 + (text[i++] - '0');
    if (spaces > 0 && i > d) return r;
    pos += 7;
  }
  return 0;
}

TEST(HtaSynthetic, FindRankAtAnyAlignment) {
  std::mt19937 rng(11);
  const char noise[] = {'"', 'r', 'a', 'n', 'k', ':', ' ', 'x', '\n'};
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    const size_t n = rng() % 400;
    for (size_t i = 0; i < n; ++i) text += noise[rng() % sizeof(noise)];
    const int keys = int(rng() % 3);
    for (int k = 0; k < keys; ++k) {
      std::string key = rng() % 2 ? "\"rank\": " + std::to_string(rng() % 1000) : "\"rank\":5";
      text.insert(rng() % (text.size() + 1), key);
    }
    ASSERT_EQ(FindRank(text), ReferenceFindRank(text)) << text;
  }
  EXPECT_EQ(FindRank(std::string(100, 'x') + "\"rank\": 42"), 42);
}

}  // namespace
}  // namespace moetrace::hta
