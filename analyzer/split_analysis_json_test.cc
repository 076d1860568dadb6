#include "analyzer/split_analysis_json.h"

#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>

#include "analyzer/gate.h"
#include "analyzer/stable_json.h"
#include "formats/errors.h"

namespace moetrace {
namespace {

// `n` ranks whose operator names hold what a naive splitter would cut at:
// brackets, commas, quotes, backslashes and the word "ranks" in strings.
analysis::Analysis Ranks(int n) {
  analysis::Analysis a;
  a.set_source("tracegen");
  a.add_warnings("top-level \"ranks\": [1, 2], {\"ranks\": []}");
  for (int i = 0; i < n; ++i) {
    analysis::RankAnalysis* r = a.add_ranks();
    r->set_rank(i);
    r->mutable_breakdown()->set_span_ns(1000 + i);
    r->mutable_operators()->add_top()->set_name(i % 3 == 0 ? "]}, {\"ranks\": [" : "a \\\" b ] , [ \\\\");
  }
  a.mutable_cluster()->set_rank_count(n);
  for (int i = 0; i < 2 * n; ++i) {  // before "ranks" in the document (sorted keys)
    analysis::LabelCheck* c = a.add_label_checks();
    c->set_rank(i / 2);
    c->set_key(i % 5 == 0 ? "breakdown.\"span_ns\"]," : "breakdown.free_ns");
    c->set_expected(i);
  }
  return a;
}

std::string ErrorOf(const std::string& json, int threads) {
  try {
    ParseAnalysisJsonSplit(json, "x.json", threads);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SplitAnalysisJson, FindsEachElementOfTheTopLevelArrays) {
  const std::string json = R"({"a": {"ranks": [9]}, "label_checks": [], "ranks" : [ {"rank": 1, "w": ["]"]} ,
    {"rank": 2}], "z": "\"ranks\": [3]"})";
  const auto found = FindTopArrays(json, {"label_checks", "ranks"});
  ASSERT_TRUE(found);
  ASSERT_EQ(found->size(), 2u);
  EXPECT_EQ((*found)[0].key, "label_checks");
  EXPECT_EQ((*found)[0].items.size(), 0u);
  EXPECT_EQ(json.substr((*found)[0].open, (*found)[0].close + 1 - (*found)[0].open), "[]");
  const TopArray& r = (*found)[1];
  EXPECT_EQ(r.key, "ranks");
  EXPECT_EQ(json.substr(r.open, r.close + 1 - r.open),
            "[ {\"rank\": 1, \"w\": [\"]\"]} ,\n    {\"rank\": 2}]");
  ASSERT_EQ(r.items.size(), 2u);
  EXPECT_EQ(json.substr(r.items[0].first, r.items[0].second - r.items[0].first),
            R"({"rank": 1, "w": ["]"]})");
  EXPECT_EQ(json.substr(r.items[1].first, r.items[1].second - r.items[1].first),
            R"({"rank": 2})");
  EXPECT_EQ(FindTopArrays(R"({"cluster": {}})", {"ranks"})->size(), 0u);
  // Not split: twice, not an array, unclosed, not an object.
  EXPECT_FALSE(FindTopArrays(R"({"ranks": [], "ranks": []})", {"ranks"}));
  EXPECT_FALSE(FindTopArrays(R"({"ranks": {}})", {"ranks"}));
  EXPECT_FALSE(FindTopArrays(R"({"ranks": [{"rank": 1})", {"ranks"}));
  EXPECT_FALSE(FindTopArrays(R"({"ranks": [{"rank": 1}])", {"ranks"}));
  EXPECT_FALSE(FindTopArrays(R"(["ranks"])", {"ranks"}));
  // Not split: an empty element (it would vanish from its slice), a key
  // the parser also reads as a field (JSON name, escapes).
  EXPECT_FALSE(FindTopArrays(R"({"ranks": [{"rank": 1},,{"rank": 2}]})", {"ranks"}));
  EXPECT_FALSE(FindTopArrays(R"({"ranks": [,{"rank": 1}]})", {"ranks"}));
  EXPECT_FALSE(FindTopArrays(R"({"ranks": [{"rank": 1}, ]})", {"ranks"}));
  EXPECT_FALSE(FindTopArrays(R"({"ranks": [], "labelChecks": []})", {"ranks", "label_checks"}));
  EXPECT_FALSE(FindTopArrays(R"({"ranks": [], "r\u0061nks": []})", {"ranks"}));
  EXPECT_TRUE(FindTopArrays(R"({"ranks": [ ], "label_checks": []})", {"ranks", "label_checks"}));
}

// `,,` between two elements is bad JSON on any number of threads, wherever
// the cut falls (at 300 threads each element is a slice of its own: the
// empty one was dropped and the document accepted).
TEST(SplitAnalysisJson, DoubleCommaIsAnErrorOnAnyNumberOfThreads) {
  const std::string good = ToStableJson(Ranks(100));
  for (int rank : {1, 40, 99}) {
    std::string json = good;
    const size_t at = json.find(fmt::format("\"rank\": {},", rank));
    ASSERT_NE(at, std::string::npos);
    const size_t close = json.rfind('{', at);
    json.insert(close, ",");  // `}, ,{"rank": N` -> an empty element
    std::string expected;
    try {
      ParseAnalysisJson(json, "x.json");
    } catch (const InputError& e) {
      expected = e.what();
    }
    ASSERT_FALSE(expected.empty()) << rank;
    for (int threads : {2, 3, 8, 300}) EXPECT_EQ(ErrorOf(json, threads), expected) << rank << " " << threads;
  }
}

TEST(SplitAnalysisJson, SameMessageOnAnyNumberOfThreads) {
  const std::string json = ToStableJson(Ranks(203));
  const std::string whole = ToStableJson(ParseAnalysisJson(json, "x.json"));
  ASSERT_EQ(whole, json);
  for (int threads : {0, 1, 2, 3, 7}) {
    const analysis::Analysis a = ParseAnalysisJsonSplit(json, "x.json", threads);
    ASSERT_EQ(a.ranks_size(), 203) << threads;
    EXPECT_EQ(a.ranks(202).breakdown().span_ns(), 1202) << threads;
    ASSERT_EQ(a.label_checks_size(), 406) << threads;
    EXPECT_EQ(a.label_checks(405).expected(), 405) << threads;
    EXPECT_EQ(ToStableJson(a), whole) << threads;
  }
}

TEST(SplitAnalysisJson, ErrorsAreThoseOfTheWholeDocument) {
  std::string json = ToStableJson(Ranks(100));
  // A bad value in rank 70: the whole document's error, its index 70 (not
  // the index inside a slice).
  const size_t at = json.find("\"span_ns\": 1070");
  ASSERT_NE(at, std::string::npos);
  json.replace(at, 15, "\"span_ns\": \"x\"");
  std::string expected;
  try {
    ParseAnalysisJson(json, "x.json");
  } catch (const InputError& e) {
    expected = e.what();
  }
  ASSERT_EQ(expected.rfind("x.json: not an `analyze --json` document: ", 0), 0u) << expected;
  EXPECT_NE(expected.find("ranks[70]"), std::string::npos) << expected;
  EXPECT_EQ(ErrorOf(json, 2), expected);
  EXPECT_EQ(ErrorOf(json, 4), expected);
  EXPECT_EQ(ErrorOf(json, 64), expected);
  // Truncated: not split, the parser's own message.
  const std::string cut = ToStableJson(Ranks(100)).substr(0, 5000);
  try {
    ParseAnalysisJson(cut, "x.json");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(ErrorOf(cut, 2), e.what());
  }
}

}  // namespace
}  // namespace moetrace
