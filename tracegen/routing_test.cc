// Redundant experts: which experts get copies and where (EPLB's choice), how
// a copied expert's tokens split over its holders, and what the copies show
// in a generated trace (routing records, weights and gradients in memory).
#include "tracegen/routing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>

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

// Each position's load with copies: an expert's load split equally over
// its holders (the original at `place`, the copies at theirs).
std::vector<double> LoadsWithCopies(const std::vector<double>& pop, const std::vector<int32_t>& place,
                                    const ExpertCopies& c, int group) {
  std::vector<int> holders(pop.size(), 1);
  for (int32_t e : c.expert) ++holders[size_t(e)];
  std::vector<double> load(size_t(group), 0);
  for (size_t e = 0; e < pop.size(); ++e) load[size_t(place[e])] += pop[e] / holders[e];
  for (size_t k = 0; k < c.expert.size(); ++k) load[size_t(c.position[k])] += pop[size_t(c.expert[k])] / holders[size_t(c.expert[k])];
  return load;
}

TEST(MigrationPlanWithCopies, CopyPlannedWithTheOriginalsLowersTheFloor) {
  // 4 experts over 2 EP positions, EDPB's plan {0, 2} | {1, 3}: loads 0.6 |
  // 0.4, the whole-expert floor (expert 0 plus the coldest). One copy of
  // expert 0 (shares 0.25) cannot go to position 0, which holds expert 0:
  // added on top of the plan it lands on position 1, 0.35 | 0.65, worse
  // than no copy (the defect of branch redundant).
  const std::vector<double> pop = {0.5, 0.3, 0.1, 0.1};
  const std::vector<int32_t> plan = {0, 1, 0, 1};
  const ExpertCopies on_top = ReplicateExperts(pop, plan, 2, 1);
  EXPECT_EQ(on_top.position, (std::vector<int32_t>{1}));
  EXPECT_EQ(LoadsWithCopies(pop, plan, on_top, 2), (std::vector<double>{0.25 + 0.1, 0.3 + 0.1 + 0.25}));
  // Planned together: from 0.35 | 0.65 the best allowed swap is expert 1
  // (0.3) for expert 2 (0.1), gain 0.2 x 0.1; expert 0's copy for expert 2
  // (gain 0.15 x 0.15) would put both holders of expert 0 on position 0.
  // Then {0, 1} | {2, 3, copy}: 0.55 | 0.45, no allowed swap left, and the
  // packing (0.55 too) does not beat it.
  const PlannedPlacement with = MigrationPlanWithCopies(pop, plan, 2, 1);
  EXPECT_EQ(with.placement, (std::vector<int32_t>{0, 0, 1, 1}));
  EXPECT_EQ(with.copies.expert, (std::vector<int32_t>{0}));
  EXPECT_EQ(with.copies.position, (std::vector<int32_t>{1}));
  const std::vector<double> loads = LoadsWithCopies(pop, with.placement, with.copies, 2);
  EXPECT_DOUBLE_EQ(loads[0], 0.55);
  EXPECT_DOUBLE_EQ(loads[1], 0.45);
}

TEST(MigrationPlanWithCopies, WithoutCopiesItIsMigrationPlan) {
  const std::vector<double> pop = {0.5, 0.3, 0.1, 0.1};
  // From the contiguous start the first swap is expert 0 for expert 2
  // (0.8 | 0.2 -> 0.4 | 0.6; it ties with expert 1 for expert 2, the first
  // found is taken), then no swap gains: {1, 0, 0, 1}.
  const PlannedPlacement p = MigrationPlanWithCopies(pop, {0, 0, 1, 1}, 2, 0);
  EXPECT_EQ(p.placement, MigrationPlan(pop, {0, 0, 1, 1}, 2));
  EXPECT_EQ(p.placement, (std::vector<int32_t>{1, 0, 0, 1}));
  EXPECT_TRUE(p.copies.expert.empty());
}

TEST(MigrationPlanWithCopies, SeedTableLayerBelowItsWholeExpertFloor) {
  // The 718B preset at its skew 0.6 (256 experts over 32 EP ranks, drift
  // 0.05), layer 17, first migration point: the hottest expert alone is
  // 1.09x a rank's mean at step 1 and EDPB's plan reaches only 1.28
  // (bench/README.md, "skewlag"). One copy: on top of that plan 1.54, planned
  // with it 1.035 (bench/edpb_bound, "redundant").
  RoutingModel m;
  m.seed = 1, m.experts = 256, m.top_k = 8, m.skew = 0.6, m.drift = 0.05;
  const std::vector<double> p0 = m.Popularity(17, 0), p1 = m.Popularity(17, 1);
  const std::vector<int32_t> plan = MigrationPlan(p0, ContiguousPlacement(256, 32), 32);
  const double mean = 1.0 / 32;
  EXPECT_NEAR(MaxLoadOf(p1, plan, 32) / mean, 1.280, 0.0005);
  const std::vector<double> on_top = LoadsWithCopies(p1, plan, ReplicateExperts(p0, plan, 32, 1), 32);
  EXPECT_NEAR(*std::max_element(on_top.begin(), on_top.end()) / mean, 1.544, 0.0005);
  const PlannedPlacement with = MigrationPlanWithCopies(p0, ContiguousPlacement(256, 32), 32, 1);
  const std::vector<double> loads = LoadsWithCopies(p1, with.placement, with.copies, 32);
  EXPECT_NEAR(*std::max_element(loads.begin(), loads.end()) / mean, 1.035, 0.0005);
  // Every position keeps 8 originals (their optimizer states); the copy is
  // a ninth physical expert on its position, not its expert's.
  std::vector<int> held(32, 0);
  for (int32_t p : with.placement) ++held[size_t(p)];
  EXPECT_EQ(std::count(held.begin(), held.end(), 8), 32);
  EXPECT_NE(with.placement[size_t(with.copies.expert[0])], with.copies.position[0]);
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

// Step 1's tokens received per (EP group, layer, micro-batch) and EP
// position, from the routing records (copies at their ranks): the mean over
// those of the most loaded position's tokens over the mean position's.
double MeanMaxOverMean(const Trace& t, const ModelShape& shape) {
  std::map<std::tuple<uint64_t, int32_t, int32_t>, std::vector<double>> recv;
  for (const Rank& r : t.ranks) {
    for (const RoutingRecord& rec : r.routing) {
      if (rec.step != 1) continue;
      std::vector<double>& load = recv[{shape.EpGroupId(r.rank), rec.layer, rec.micro_batch}];
      load.resize(size_t(shape.expert_group), 0);
      std::vector<int64_t> own = rec.tokens_per_expert;
      for (size_t k = 0; k < rec.copy_expert.size(); ++k) {
        own[size_t(rec.copy_expert[k])] -= rec.copy_tokens[k];
        load[size_t(rec.copy_ep_rank[k])] += double(rec.copy_tokens[k]);
      }
      for (size_t e = 0; e < own.size(); ++e) load[size_t(rec.expert_to_ep_rank[e])] += double(own[e]);
    }
  }
  double sum = 0;
  for (const auto& [key, load] : recv) {
    double total = 0;
    for (double v : load) total += v;
    sum += *std::max_element(load.begin(), load.end()) * load.size() / total;
  }
  return recv.empty() ? 0 : sum / double(recv.size());
}

TEST(RedundantExperts, WithEdpbACopyLowersTheMostLoadedRank) {
  // tiny-moe (16 experts over EP 8, 2 a rank) at skew 0.8 with EDPB: a copy
  // of each layer's hottest expert must lower the most loaded EP rank's
  // tokens, not raise them. Before branch redundant the copy was added on
  // top of EDPB's plan, on a rank the plan had filled: 1.4220 against 1.3283
  // without copies; planned with the originals, 1.2427
  // (MigrationPlanWithCopies).
  const std::vector<std::string> edpb = {"routing.skew=0.8", "routing.edpb=true"};
  std::vector<std::string> copies = edpb;
  copies.push_back("routing.redundant_experts=1");
  const ModelShape shape(BuildConfig({"tiny-moe", "", edpb, 0}));
  const double alone = MeanMaxOverMean(SimulateTinyMoe(edpb), shape);
  const double with = MeanMaxOverMean(SimulateTinyMoe(copies), shape);
  EXPECT_NEAR(alone, 1.3283, 0.00005);
  EXPECT_NEAR(with, 1.2427, 0.00005);
  EXPECT_LT(with, alone);
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
