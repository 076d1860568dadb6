#include "tracegen/documents.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace moetrace::tracegen {
namespace {

TEST(Documents, FixedLengthsCutTheLastDocument) {
  DocumentModel d;
  d.distribution = "fixed";
  d.mean = 3;
  d.seq = 8;
  d.mbs = 2;
  d.dp = 2;
  d.micro_batches = 2;
  // 3 + 3 + 2 tokens: 9 + 9 + 4 = 22 of 64.
  EXPECT_EQ(d.SequenceLoad(0, 0), 22.0);
  EXPECT_EQ(d.AttentionFactors(0), (std::vector<double>{0.34375, 0.34375, 0.34375, 0.34375}));
}

TEST(Documents, NoDistributionIsOneDocumentPerSequence) {
  DocumentModel d;
  d.seq = 8;
  d.dp = 2;
  d.micro_batches = 3;
  EXPECT_EQ(d.SequenceLoad(5, 1), 64.0);
  EXPECT_EQ(d.AttentionFactors(0), std::vector<double>(6, 1.0));
}

TEST(Documents, RearrangementDealsSortedSequencesInSnakeRounds) {
  // Loads 1..8 (sequence i carries i+1), 2 DP ranks x 2 micro-batches x 2.
  // Rounds, heaviest first: mb 0 gets 8|7 then 3|4 (reversed), mb 1 gets
  // 5|6 (reversed) then 2|1: every micro-batch carries 11 on rank 0 and 11
  // on rank 1 (mb 0), 7 and 7 (mb 1).
  EXPECT_EQ(RearrangeSequences({1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 2),
            (std::vector<int64_t>{7, 2, 4, 1, 6, 3, 5, 0}));
}

TEST(Documents, LognormalImbalanceAndItsRearrangement) {
  DocumentModel d;
  d.distribution = "lognormal";
  d.mean = 2048;
  d.sigma = 1.0;
  d.seq = 8192;
  d.dp = 4;
  d.micro_batches = 4;
  d.seed = 1;
  // Sums of squared document lengths, seed-driven.
  EXPECT_EQ(d.SequenceLoad(0, 0), 17991252.0);
  EXPECT_EQ(d.SequenceLoad(0, 2), 55291166.0);
  const std::vector<double> plain = d.AttentionFactors(0);
  EXPECT_EQ(plain[0], 17991252.0 / (8192.0 * 8192.0));
  EXPECT_EQ(plain[2], 55291166.0 / (8192.0 * 8192.0));
  d.rearrange = true;
  const std::vector<double> re = d.AttentionFactors(0);
  // The same sequences, moved: micro-batch 0 of each rank gets the four
  // heaviest (0.82, 0.75, 0.50, 0.38 of seq^2), and so on down.
  const std::vector<int> from = {2, 9, 10, 7, 1, 11, 0, 8, 13, 3, 15, 5, 4, 14, 12, 6};
  for (size_t i = 0; i < from.size(); ++i) EXPECT_EQ(re[i], plain[size_t(from[i])]) << i;
  // The slowest DP rank per micro-batch (what an EP all-to-all waits for):
  // 0.38 / 0.75 / 0.82 / 0.32 of seq^2 before (sum 2.28), 0.82 / 0.36 / 0.28
  // / 0.21 after (sum 1.67): the heavy sequences now meet each other.
  auto worst = [&](const std::vector<double>& f, int mb) {
    double w = 0;
    for (int k = 0; k < 4; ++k) w = std::max(w, f[size_t(k * 4 + mb)]);
    return w;
  };
  EXPECT_EQ(worst(plain, 1), plain[1]);
  EXPECT_EQ(worst(re, 1), plain[14]);
  double before = 0, after = 0;
  for (int mb = 0; mb < 4; ++mb) {
    before += worst(plain, mb);
    after += worst(re, mb);
  }
  EXPECT_NEAR(before, 0.382230 + 0.748395 + 0.823903 + 0.320669, 1e-5);
  EXPECT_NEAR(after, 0.823903 + 0.357269 + 0.281842 + 0.206273, 1e-5);
}


// Dolma 3 Mix (the 6T-token pre-training mix of OLMo 3), per source: documents
// (millions) and mean length (tokens = the table's tokens / documents).
constexpr const char* kDolma3 = "3150:1432,83.8:9606,526:778,9.10:5582,95.5:1592,4.24:592";

TEST(Documents, ParsesAMixAndItsMeanLength) {
  std::string error;
  const std::vector<DocSource> mix = ParseDocMix(kDolma3, &error);
  ASSERT_EQ(mix.size(), 6u) << error;
  EXPECT_EQ(mix[1], (DocSource{83.8, 9606}));
  // 5,930,353 M tokens over 3,868.64 M documents, the table's totals
  // (5.93 T tokens, 3.87 B documents).
  EXPECT_NEAR(MixtureMeanLength(mix), 1532.9297, 1e-4);
  for (const char* bad : {"", "3150", "3150:", ":1432", "0:100", "1:0.5", "1:x", "1:100,", "1:nan", "1e308:1", "2e15:100"}) {
    error.clear();
    EXPECT_TRUE(ParseDocMix(bad, &error).empty()) << bad;
    EXPECT_NE(error.find("is not documents:mean_tokens"), std::string::npos) << bad;
  }
}

TEST(Documents, MixtureOfOneVeryLongSourceFillsEverySequence) {
  // Documents far longer than a sequence: every sequence is one piece of
  // one document (s^2), as concatenate-and-chunk makes it.
  DocumentModel d;
  d.distribution = "mixture";
  d.sources = {{1, 1e9}};
  d.seq = 8192;
  EXPECT_EQ(d.SequenceLoad(0, 0), 8192.0 * 8192.0);
  EXPECT_EQ(d.SequenceLoad(3, 17), 8192.0 * 8192.0);
}

TEST(Documents, Dolma3MixtureLoadsAndItsRearrangement) {
  DocumentModel d;
  d.distribution = "mixture";
  std::string error;
  d.sources = ParseDocMix(kDolma3, &error);
  d.seq = 8192;
  d.dp = 4;
  d.micro_batches = 4;
  d.seed = 1;
  // Sums of squared document lengths, seed-driven.
  // Sequence 0 is one piece of a document (s^2); sequence 1 several.
  EXPECT_EQ(d.SequenceLoad(0, 0), 67108864.0);
  EXPECT_EQ(d.SequenceLoad(0, 1), 23717662.0);
  // Over many sequences: the mean share of seq^2 and how often a sequence
  // is one piece of a document (a long science PDF or arXiv paper).
  double sum = 0;
  int whole = 0;
  for (int i = 0; i < 4000; ++i) {
    const double l = d.SequenceLoad(1, i);
    sum += l / (8192.0 * 8192.0);
    whole += l == 8192.0 * 8192.0;
  }
  EXPECT_NEAR(sum / 4000, 0.3502421, 1e-6);
  EXPECT_EQ(whole, 268);  // 6.7%
  // The re-arrangement evens out the slowest DP rank per micro-batch.
  auto worst_sum = [&](const std::vector<double>& f) {
    double total = 0;
    for (int mb = 0; mb < 4; ++mb) {
      double w = 0;
      for (int k = 0; k < 4; ++k) w = std::max(w, f[size_t(k * 4 + mb)]);
      total += w;
    }
    return total;
  };
  const double before = worst_sum(d.AttentionFactors(0));
  d.rearrange = true;
  const double after = worst_sum(d.AttentionFactors(0));
  // Sum over the 4 micro-batches of the slowest rank's share of seq^2.
  EXPECT_NEAR(before, 3.0100546, 1e-6);
  EXPECT_NEAR(after, 2.2344144, 1e-6);
}

}  // namespace
}  // namespace moetrace::tracegen
