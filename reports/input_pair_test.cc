#include "reports/input_pair.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/stable_json.h"
#include "formats/errors.h"
#include "formats/native/native_test_util.h"
#include "formats/sample_trace.h"
#include "reports/inputs.h"

namespace moetrace {
namespace {

// Two sample traces (other seeds, other rank counts), their analyses by
// LoadInputs (what `diff` loaded side after side before), and those
// analyses saved as `analyze --json` writes them.
class InputPairTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = ::testing::TempDir() + "input_pair_" + std::to_string(getpid()) + "_";
    testing_native::WriteTrace(MakeSampleTrace(4, 64, 1), Path("a.mtrace"));
    testing_native::WriteTrace(MakeSampleTrace(3, 64, 2), Path("b.mtrace"));
    auto comm = SingleProcess();
    for (const char* side : {"a", "b"}) {
      const std::string json =
          ToStableJson(LoadInputs({Path(side + std::string(".mtrace"))}, 0, {}, *comm).analysis);
      std::ofstream(Path(side + std::string(".json")), std::ios::binary) << json;
      expected_.push_back(json);
    }
    // Truncated documents: still detected as analyses (first key), bad JSON
    // (its byte found by formats/json_syntax.h).
    for (const char* side : {"a", "b"}) {
      std::ofstream(Path(std::string("bad_") + side + ".json"), std::ios::binary)
          << expected_[0].substr(0, 1000);
    }
  }
  static void TearDownTestSuite() {
    for (const char* f : {"a.mtrace", "b.mtrace", "a.json", "b.json", "bad_a.json", "bad_b.json"}) {
      std::remove(Path(f).c_str());
    }
  }
  static std::string Path(const std::string& name) { return dir_ + name; }

  // Loads the pair and checks it against the expected analyses, byte for byte.
  static void ExpectPair(const std::string& a, const std::string& b, int threads) {
    auto comm = SingleProcess();
    const InputPair in = LoadInputPair(Path(a), Path(b), threads, {}, *comm);
    EXPECT_EQ(ToStableJson(in.a), expected_[0]) << a << " " << b << " threads " << threads;
    EXPECT_EQ(ToStableJson(in.b), expected_[1]) << a << " " << b << " threads " << threads;
  }

  static std::string ErrorOf(const std::string& a, const std::string& b) {
    auto comm = SingleProcess();
    try {
      LoadInputPair(Path(a), Path(b), 0, {}, *comm);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  }

  static inline std::string dir_;
  static inline std::vector<std::string> expected_;
};

TEST_F(InputPairTest, EveryKindOfPairGivesWhatLoadInputsGave) {
  ASSERT_NE(expected_[0], expected_[1]);
  ASSERT_NE(expected_[0].find("\"rank_count\": 4"), std::string::npos);
  ASSERT_NE(expected_[1].find("\"rank_count\": 3"), std::string::npos);
  for (int threads : {0, 1, 2}) {
    ExpectPair("a.json", "b.json", threads);
    ExpectPair("a.mtrace", "b.json", threads);
    ExpectPair("a.json", "b.mtrace", threads);
    ExpectPair("a.mtrace", "b.mtrace", threads);
  }
}

TEST_F(InputPairTest, ErrorsComeInTheOrderAThenB) {
  const std::string bad_a = Path("bad_a.json"), bad_b = Path("bad_b.json");
  // Both bad: A's error, though B's parse ran beside it.
  EXPECT_EQ(ErrorOf("bad_a.json", "bad_b.json").rfind(bad_a + ": byte 999: malformed JSON: ", 0), 0u)
      << ErrorOf("bad_a.json", "bad_b.json");
  EXPECT_EQ(ErrorOf("a.json", "bad_b.json").rfind(bad_b + ": byte 999: malformed JSON: ", 0), 0u);
  EXPECT_EQ(ErrorOf("a.mtrace", "bad_b.json").rfind(bad_b + ": byte 999: malformed JSON: ", 0), 0u);
  // A missing trace A fails before B's (bad) document, parsed beside it, is looked at.
  const std::string missing = ErrorOf("none.mtrace", "bad_b.json");
  EXPECT_NE(missing.find(Path("none.mtrace")), std::string::npos) << missing;
  EXPECT_EQ(missing.find(bad_b), std::string::npos) << missing;
  // A bad saved A fails before trace B is analysed (no error of B's).
  EXPECT_EQ(ErrorOf("bad_a.json", "none.mtrace").rfind(bad_a + ": byte 999: malformed JSON: ", 0), 0u);
}

TEST_F(InputPairTest, ParseProgressCountsTheSavedSides) {
  auto comm = SingleProcess();
  std::vector<std::pair<size_t, size_t>> calls;
  InputPairProgress progress;
  progress.parse = [&calls](size_t done, size_t total) { calls.emplace_back(done, total); };
  LoadInputPair(Path("a.json"), Path("b.json"), 0, progress, *comm);
  EXPECT_EQ(calls, (std::vector<std::pair<size_t, size_t>>{{0, 2}, {1, 2}, {2, 2}}));
  calls.clear();
  LoadInputPair(Path("a.json"), Path("b.mtrace"), 0, progress, *comm);
  EXPECT_EQ(calls, (std::vector<std::pair<size_t, size_t>>{{0, 1}, {1, 1}}));
  calls.clear();
  size_t analysed_b = 0;
  progress.analyze_b = [&analysed_b](size_t done, size_t total) {
    if (done == total) analysed_b = total;
  };
  LoadInputPair(Path("a.mtrace"), Path("b.mtrace"), 0, progress, *comm);
  EXPECT_TRUE(calls.empty());
  EXPECT_EQ(analysed_b, 3u);  // B's three ranks
}

}  // namespace
}  // namespace moetrace
