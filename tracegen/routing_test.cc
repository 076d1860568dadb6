// Redundant experts: which experts get copies and where (EPLB's choice), how
// a copied expert's tokens split over its holders, and what the copies show
// in a generated trace (routing records, weights and gradients in memory).
#include "tracegen/routing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "formats/errors.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"
#include "tracegen/simulate_for_test.h"
#include "tracegen/model.h"

namespace moetrace::tracegen {
namespace {

int Moved(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  int n = 0;
  for (size_t e = 0; e < a.size(); ++e) n += a[e] != b[e];
  return n;
}

double MaxLoadOf(const std::vector<double>& pop, const std::vector<int32_t>& place, int group) {
  std::vector<double> load(group, 0);
  for (size_t e = 0; e < pop.size(); ++e) load[place[e]] += pop[e];
  return *std::max_element(load.begin(), load.end());
}

TEST(KeepInPlace, RenumberedSetsDoNotMove) {
  // The same three sets under other numbers: nothing moves.
  EXPECT_EQ(KeepInPlace({1, 1, 0, 0, 2, 2}, {0, 0, 1, 1, 2, 2}, 3), (std::vector<int32_t>{0, 0, 1, 1, 2, 2}));
  // Sets that really changed: each new set shares one expert with each old
  // one, so any numbering moves two experts; ties go to the lowest new, then
  // old, position (new 0 -> old 0).
  EXPECT_EQ(KeepInPlace({0, 1, 0, 1}, {0, 0, 1, 1}, 2), (std::vector<int32_t>{0, 1, 0, 1}));
  EXPECT_EQ(KeepInPlace({1, 0, 1, 0}, {0, 0, 1, 1}, 2), (std::vector<int32_t>{1, 0, 1, 0}));
  // Two of three experts of new set 1 are old set 0's: new 1 -> old 0.
  EXPECT_EQ(KeepInPlace({1, 1, 0, 1, 0, 0}, {0, 0, 1, 0, 1, 1}, 2), (std::vector<int32_t>{0, 0, 1, 0, 1, 1}));
}

TEST(MigrationPlan, SwapsWhileAnExtremeRankMovesCloserToTheOthers) {
  // Loads 4,3 | 2,1 (7 vs 3): swapping experts 0 and 2 (or 1 and 3, the
  // same gain: the first found is kept) gives 5 | 5 with two moves; then no
  // swap lowers the sum of squares. The packing from scratch
  // ({0,1,1,0}, also 5 | 5) is not better, so it is not taken.
  EXPECT_EQ(MigrationPlan({4, 3, 2, 1}, {0, 0, 1, 1}, 2), (std::vector<int32_t>{1, 0, 0, 1}));
  // Already balanced: nothing moves.
  EXPECT_EQ(MigrationPlan({4, 1, 3, 2}, {0, 0, 1, 1}, 2), (std::vector<int32_t>{0, 0, 1, 1}));
}

TEST(MigrationPlan, EndsWhenASwapOnlyTradesTwoRanksLoads) {
  // Loads 0.9 | 0.7 (0.3 x 3 against 0.1 + 0.3 + 0.3): swapping an expert of
  // 0.3 on rank 0 with the 0.1 on rank 1 gives d = 0.2 = gap, i.e. the two
  // ranks trade loads: no gain, but 3 x 0.1 rounds so that gap - d was a
  // stray positive ulp, and the swap and its mirror alternated for ever.
  const double t = 0.1 * 3;
  EXPECT_EQ(MigrationPlan({t, t, t, t, 0.1, t}, {0, 0, 0, 1, 1, 1}, 2), (std::vector<int32_t>{0, 0, 0, 1, 1, 1}));
}

TEST(MigrationPlan, SeedTableLayerMovesFewExpertsOnceBalanced) {
  // The 718B preset's routing at the EDPB rows' skew 1.0 (256 experts over
  // 32 EP ranks, drift 0.05 per step), layer 10: the first migration from the
  // contiguous placement, then one step later. Before (the packing from
  // scratch each step) 246 and 217 of 256 experts moved; the plan moves
  // 136, then 66, and its most loaded rank is never above the packing's.
  RoutingModel m;
  m.seed = 1, m.experts = 256, m.top_k = 8, m.skew = 1.0, m.drift = 0.05;
  const std::vector<double> p0 = m.Popularity(10, 0), p1 = m.Popularity(10, 1);
  const std::vector<int32_t> start = ContiguousPlacement(256, 32);
  const std::vector<int32_t> first = MigrationPlan(p0, start, 32);
  const std::vector<int32_t> second = MigrationPlan(p1, first, 32);
  EXPECT_EQ(Moved(BalancedPlacement(p0, 32), start), 246);
  EXPECT_EQ(Moved(BalancedPlacement(p1, 32), BalancedPlacement(p0, 32)), 217);
  EXPECT_EQ(Moved(first, start), 136);
  EXPECT_EQ(Moved(second, first), 66);
  EXPECT_LE(MaxLoadOf(p0, first, 32), MaxLoadOf(p0, BalancedPlacement(p0, 32), 32));
  EXPECT_LE(MaxLoadOf(p1, second, 32), MaxLoadOf(p1, BalancedPlacement(p1, 32), 32));
}

TEST(ReplicateExperts, OneDominantExpertGetsEveryCopyOnTheLightestRanks) {
  // 4 EP ranks of 2 experts; expert 0 (400 of 560 tokens) alone is more
  // than a rank's fair share (140).
  const std::vector<double> loads = {400, 20, 30, 30, 10, 10, 20, 40};
  const ExpertCopies c = ReplicateExperts(loads, ContiguousPlacement(8, 4), 4, 3);
  // Shares of 100 on 4 holders; rank loads before the copies go:
  // {100+20, 60, 20, 60} -> rank 2, then the first of the tied 1 and 3, then 3.
  EXPECT_EQ(c.expert, (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(c.position, (std::vector<int32_t>{2, 1, 3}));
}

TEST(ReplicateExperts, AtMostOneCopyPerRankAndNoneWithoutCopies) {
  const std::vector<double> loads = {100, 60, 50, 10, 10, 10, 5, 5};
  // Two ranks: expert 0 can have one copy only; the next copies go to 1, 2.
  const ExpertCopies c = ReplicateExperts(loads, ContiguousPlacement(8, 2), 2, 3);
  EXPECT_EQ(c.expert, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(c.position, (std::vector<int32_t>{1, 1, 1}));
  EXPECT_TRUE(ReplicateExperts(loads, ContiguousPlacement(8, 2), 2, 0).expert.empty());
  EXPECT_TRUE(ReplicateExperts(loads, ContiguousPlacement(8, 1), 1, 2).expert.empty());
}

TEST(CopyShare, EqualSharesRemainderRotatedByMember) {
  // 10 tokens over 4 holders: 3, 3, 2, 2 from member 0; 2, 3, 3, 2 from member 1.
  EXPECT_EQ(CopyShare(10, 4, 0, 0), 3);
  EXPECT_EQ(CopyShare(10, 4, 1, 0), 3);
  EXPECT_EQ(CopyShare(10, 4, 2, 0), 2);
  EXPECT_EQ(CopyShare(10, 4, 3, 0), 2);
  EXPECT_EQ(CopyShare(10, 4, 0, 1), 2);
  EXPECT_EQ(CopyShare(10, 4, 1, 1), 3);
  EXPECT_EQ(CopyShare(10, 4, 2, 1), 3);
  EXPECT_EQ(CopyShare(7, 1, 0, 5), 7);
}

double FirstSample(const Rank& r, CounterKind kind) {
  for (const Track& t : r.tracks) {
    if (t.kind == TrackKind::kCounter && t.counter == kind && !t.sample_value.empty()) return t.sample_value[0];
  }
  ADD_FAILURE() << "no counter";
  return -1;
}

TEST(RedundantExperts, CopiesTakeTheirShareAndCostWeightsAndGradients) {
  const Trace base = SimulateTinyMoe({"routing.skew=2"});
  const Trace with = SimulateTinyMoe({"routing.skew=2", "routing.redundant_experts=4"});
  ASSERT_EQ(base.ranks.size(), with.ranks.size());
  const ModelShape shape(BuildConfig({"tiny-moe", "", {}, 0}));
  // One expert's weights per rank: 3 matrices of hidden x expert_ffn (TP 1).
  EXPECT_EQ(shape.ExpertParamsEach(), 3.0 * 1024 * 512);
  int64_t copied_tokens = 0;
  int copies_held = 0;
  for (size_t i = 0; i < with.ranks.size(); ++i) {
    const Rank& r = with.ranks[i];
    const int pos = shape.EpPosition(r.rank);
    std::map<int32_t, int> held;  // layer -> copies on this rank's EP position
    for (const RoutingRecord& rec : r.routing) {
      ASSERT_EQ(rec.copy_expert.size(), 4u);
      ASSERT_EQ(rec.copy_ep_rank.size(), 4u);
      ASSERT_EQ(rec.copy_tokens.size(), 4u);
      // The record still counts every token of an expert; each holder's
      // share is CopyShare of this rank's (EP member `pos`) count.
      std::map<int32_t, int> holders, nth;
      for (int32_t e : rec.copy_expert) holders[e] = 1;
      for (int32_t e : rec.copy_expert) ++holders[e];
      for (size_t k = 0; k < rec.copy_expert.size(); ++k) {
        const int32_t e = rec.copy_expert[k];
        EXPECT_EQ(rec.copy_tokens[k], CopyShare(rec.tokens_per_expert[size_t(e)], holders[e], ++nth[e], pos));
        EXPECT_NE(rec.copy_ep_rank[k], e / 2) << "a copy on its original's rank";
        copied_tokens += rec.copy_tokens[k];
      }
      if (rec.step == 0 && rec.micro_batch == 0) {
        int h = 0;
        for (int32_t p : rec.copy_ep_rank) h += p == pos;
        held[rec.layer] = h;
      }
    }
    int copies = 0;
    for (auto [layer, h] : held) copies += h;
    copies_held += copies;
    // bf16 weights (2 B) and fp32 gradients (4 B) of each copy; no optimizer states.
    const double each = shape.ExpertParamsEach();
    EXPECT_EQ(FirstSample(r, CounterKind::kMemWeights) - FirstSample(base.ranks[i], CounterKind::kMemWeights),
              2 * copies * each) << "rank " << r.rank;
    EXPECT_EQ(FirstSample(r, CounterKind::kMemGradients) - FirstSample(base.ranks[i], CounterKind::kMemGradients),
              4 * copies * each) << "rank " << r.rank;
    EXPECT_EQ(FirstSample(r, CounterKind::kMemOptimizer), FirstSample(base.ranks[i], CounterKind::kMemOptimizer));
  }
  // One EP group of 8 per stage; 4 copies for each of the 3 MoE layers (1 on stage 0, 2 on stage 1).
  EXPECT_EQ(copies_held, 12);
  EXPECT_GT(copied_tokens, 0);
  // Same tokens routed: the routing itself does not change.
  for (size_t i = 0; i < with.ranks.size(); ++i) {
    ASSERT_EQ(with.ranks[i].routing.size(), base.ranks[i].routing.size());
    for (size_t k = 0; k < with.ranks[i].routing.size(); ++k) {
      EXPECT_EQ(with.ranks[i].routing[k].tokens_per_expert, base.ranks[i].routing[k].tokens_per_expert);
    }
  }
}

TEST(RedundantExperts, BadCountExitsNamingTheKey) {
  for (const char* bad : {"routing.redundant_experts=-1", "routing.redundant_experts=17"}) {
    try {
      BuildConfig({"tiny-moe", "", {bad}, 0});
      ADD_FAILURE() << bad << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("routing.redundant_experts"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(BuildConfig({"tiny-moe", "", {"routing.redundant_experts=16"}, 0}));
}

}  // namespace
}  // namespace moetrace::tracegen
