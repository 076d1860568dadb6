#include "formats/trace.h"

#include <gtest/gtest.h>

#include "formats/sample_trace.h"
#include "formats/errors.h"
#include "formats/trace_io.h"

namespace moetrace {
namespace {

TEST(StringTable, InternsOnceAndKeepsEmptyAtZero) {
  StringTable t;
  EXPECT_EQ(t.Get(0), "");
  StringId a = t.Intern("FlashAttentionScore");
  StringId b = t.Intern("GroupedMatmul");
  EXPECT_EQ(a, 1u);
  EXPECT_EQ(b, 2u);
  EXPECT_EQ(t.Intern("FlashAttentionScore"), a);
  EXPECT_EQ(t.Find("GroupedMatmul"), 2);
  EXPECT_EQ(t.Find("missing"), -1);
  StringTable copy = t;
  EXPECT_EQ(copy, t);
  EXPECT_EQ(copy.Intern("GroupedMatmul"), 2u);
}

// The table holds valid UTF-8 only: what is not is repaired as it is
// interned, and counted (an importer's repaired.utf8).
TEST(StringTable, InternRepairsBytesThatAreNotUtf8) {
  StringTable t;
  const StringId a = t.Intern("Mat\xff\xfemul");
  EXPECT_EQ(t.Get(a), "Mat\xEF\xBF\xBD\xEF\xBF\xBDmul");
  EXPECT_EQ(t.repaired(), 2);
  EXPECT_EQ(t.Intern("Mat\xff\xfemul"), a);  // the same repair, the same id
  EXPECT_EQ(t.Intern("Mat\xEF\xBF\xBD\xEF\xBF\xBDmul"), a);
  EXPECT_EQ(t.repaired(), 4);
  EXPECT_EQ(t.Intern("h\xC3\xA9"), 2u);  // valid UTF-8 stays as it is
  EXPECT_EQ(t.repaired(), 4);
  StringTable copy = t;
  EXPECT_EQ(copy.repaired(), 4);
}

// Assign must leave exactly the table a fresh one interning the list would
// hold, whatever the table held before (the reader reuses one per thread).
StringTable Fresh(const std::vector<std::string_view>& list) {
  StringTable t;
  for (std::string_view s : list) t.Intern(s);
  return t;
}

TEST(StringTable, AssignReusesEqualIdsAndReplacesTheRest) {
  // Two ranks of the 718B trace differ in their group names at the same ids.
  StringTable t = Fresh({"python", "pp_4616_5000", "RmsNorm", "tp_d000000001"});
  const std::vector<std::string_view> next = {"python", "pp_4617_5001", "RmsNorm",
                                              "tp_d000000002", "ep_e3"};
  EXPECT_EQ(t.Assign(next), -1);
  EXPECT_EQ(t, Fresh(next));
  EXPECT_EQ(t.size(), 6u);
  EXPECT_EQ(t.Find("pp_4617_5001"), 2);
  EXPECT_EQ(t.Find("pp_4616_5000"), -1);  // the replaced names are gone from the index
  EXPECT_EQ(t.Find("tp_d000000001"), -1);
  EXPECT_EQ(t.Find("ep_e3"), 5);
  EXPECT_EQ(t.Intern("RmsNorm"), 3u);
  // Shorter, and a string moving to another id (a swap).
  const std::vector<std::string_view> shorter = {"RmsNorm", "python"};
  EXPECT_EQ(t.Assign(shorter), -1);
  EXPECT_EQ(t, Fresh(shorter));
  EXPECT_EQ(t.Find("RmsNorm"), 1);
  EXPECT_EQ(t.Find("python"), 2);
  EXPECT_EQ(t.Find("ep_e3"), -1);
  EXPECT_EQ(t.Intern("new"), 3u);
  EXPECT_EQ(t.Assign({}), -1);
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(t.Get(0), "");
}

TEST(StringTable, AssignReportsTheFirstRepeat) {
  // A repeat among replaced ids, and among appended ones.
  StringTable t = Fresh({"a", "b", "c", "d"});
  EXPECT_EQ(t.Assign({"a", "x", "y", "x", "z"}), 3);
  EXPECT_EQ(t, Fresh({"a", "x", "y"}));  // the strings before the repeat
  EXPECT_EQ(t.Find("x"), 2);
  EXPECT_EQ(t.Find("d"), -1);
  EXPECT_EQ(t.Intern("d"), 4u);
  StringTable u = Fresh({"a"});
  EXPECT_EQ(u.Assign({"a", "b", "a"}), 2);
  EXPECT_EQ(u, Fresh({"a", "b"}));
  EXPECT_EQ(u.Find("b"), 2);
  // The repeat's earlier copy at a changed id, the later one at a kept id:
  // the same answer as a fresh table (the review's {c, b, c} after {a, b, c}).
  StringTable v = Fresh({"a", "b", "c"});
  EXPECT_EQ(v.Assign({"c", "b", "c"}), 2);
  EXPECT_EQ(v, Fresh({"c", "b"}));
  EXPECT_EQ(v.Intern("a"), 3u);
}

TEST(EventTable, TheShapeColumnAppearsWithTheFirstShapeEvenOnTheFirstRow) {
  EventTable first;
  first.Append({.ts = 1, .shape = 5});
  first.Append({.ts = 2});
  EXPECT_EQ(first.shape, (std::vector<StringId>{5, 0}));
  EventTable later;
  later.Append({.ts = 1});
  EXPECT_TRUE(later.shape.empty());
  later.Append({.ts = 2, .shape = 7});
  EXPECT_EQ(later.shape, (std::vector<StringId>{0, 7}));
  EXPECT_EQ(later.ShapeAt(0), 0u);
  EXPECT_EQ(later.Get(1).shape, 7u);
}

TEST(EventTable, SortByTimeIsStableAndMovesEveryColumn) {
  EventTable t;
  Event a{.ts = 30, .dur = 1, .name = 1, .layer = 3};
  Event b{.ts = 10, .dur = 2, .name = 2, .layer = 1};
  Event c{.ts = 30, .dur = 3, .name = 3, .layer = 4};
  t.Append(a);
  t.Append(b);
  t.Append(c);
  EXPECT_FALSE(t.IsSortedByTime());
  t.SortByTime();
  EXPECT_EQ(t.Get(0), b);
  EXPECT_EQ(t.Get(1), a);
  EXPECT_EQ(t.Get(2), c);
}

// Comm lists live in the track's flat arrays; tracks compare their
// records by content, wherever the elements lie.
TEST(Track, ComparesCommListsByContent) {
  Track a, b;
  CommRecord c;
  c.group_ranks = a.AddRanks(std::vector<int32_t>{4, 5});
  c.send_splits = a.AddSplits(std::vector<uint64_t>{1, 2});
  c.recv_splits = a.AddSplits(std::vector<uint64_t>{3});
  a.comms.push_back(c);
  b.comm_splits = {9, 3, 1, 2};  // an unused element, recv before send
  b.comm_ranks = {4, 5};
  CommRecord d = c;
  d.send_splits = {2, 2};
  d.recv_splits = {1, 1};
  b.comms.push_back(d);
  EXPECT_EQ(a.Splits(c.send_splits)[1], 2u);
  EXPECT_EQ(b.Splits(d.send_splits)[1], 2u);
  EXPECT_TRUE(a == b);
  b.comm_splits[1] = 4;  // now recv_splits = {4}
  EXPECT_FALSE(a == b);
  b.comm_splits[1] = 3;
  b.comm_ranks[1] = 6;
  EXPECT_FALSE(a == b);
  // A range outside the arrays makes the track invalid (and unequal even to
  // itself) instead of being read.
  EXPECT_TRUE(a.CommListsValid());
  a.comms[0].send_splits = {2, 5};
  EXPECT_FALSE(a.CommListsValid());
  EXPECT_FALSE(a == a);
}

TEST(Names, CategoryRoundTrip) {
  for (int i = 0; i < kCategoryCount; ++i) {
    Category c;
    ASSERT_TRUE(ParseCategory(CategoryName(static_cast<Category>(i)), &c));
    EXPECT_EQ(static_cast<int>(c), i);
  }
  Category c;
  EXPECT_FALSE(ParseCategory("kernel", &c));
}

TEST(SampleTrace, IsDeterministicAndPopulated) {
  Trace a = MakeSampleTrace(3, 16, 7);
  Trace b = MakeSampleTrace(3, 16, 7);
  EXPECT_EQ(a, b);
  ASSERT_EQ(a.ranks.size(), 3u);
  EXPECT_EQ(a.ranks[0].tracks.size(), 7u);
  // 48 device ops, 48 launches + 7 syncs + 1 marker, 48 dequeues, 2x48 samples.
  EXPECT_EQ(a.ranks[0].EventCount(), 48u + 56u + 48u + 96u);
  EXPECT_NE(a, MakeSampleTrace(3, 16, 8));
}

}  // namespace
}  // namespace moetrace

namespace moetrace {
namespace {

TEST(ConcatSource, RanksInInputOrderWithFirstMetadata) {
  Trace a = MakeSampleTrace(2, 4, 1);
  Trace b = MakeSampleTrace(3, 4, 2);
  for (Rank& r : b.ranks) r.rank += 10;
  b.metadata.source = "second";
  std::vector<std::unique_ptr<TraceSource>> parts;
  parts.push_back(std::make_unique<MemorySource>(a));
  parts.push_back(std::make_unique<MemorySource>(b));
  ConcatSource all(std::move(parts));
  ASSERT_EQ(all.rank_count(), 5u);
  EXPECT_EQ(all.metadata(), a.metadata);
  EXPECT_EQ(all.ReadRank(1), a.ranks[1]);
  EXPECT_EQ(all.ReadRank(2).rank, 10);
  EXPECT_EQ(all.ReadRank(4), b.ranks[2]);
}

// A file of a trace whose rank ids are known at open (as .mtrace and
// Kineto files with distributedInfo are).
class NamedSource : public MemorySource {
 public:
  NamedSource(Trace t, std::string path) : MemorySource(t), ids_(t.ranks.size()), path_(std::move(path)) {
    for (size_t i = 0; i < t.ranks.size(); ++i) ids_[i] = t.ranks[i].rank;
  }
  int32_t RankId(size_t i) const override { return ids_[i]; }
  std::string RankPath(size_t) const override { return path_; }

 private:
  std::vector<int32_t> ids_;
  std::string path_;
};

TEST(ConcatSource, RefusesARankIdGivenByTwoInputs) {
  Trace a = MakeSampleTrace(2, 4, 1);  // ranks 0, 1
  Trace b = MakeSampleTrace(3, 4, 2);  // ranks 0, 1, 2
  for (Rank& r : b.ranks) r.rank += 1;  // 1, 2, 3: rank 1 twice
  std::vector<std::unique_ptr<TraceSource>> parts;
  parts.push_back(std::make_unique<NamedSource>(a, "a.mtrace"));
  parts.push_back(std::make_unique<NamedSource>(b, "b.mtrace"));
  try {
    ConcatSource all(std::move(parts));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "b.mtrace: rank 1 is also in a.mtrace; give each rank once");
  }
  // Disjoint ids, or ids unknown at open (MemorySource), are read as given.
  for (Rank& r : b.ranks) r.rank += 1;  // 2, 3, 4
  std::vector<std::unique_ptr<TraceSource>> disjoint;
  disjoint.push_back(std::make_unique<NamedSource>(a, "a.mtrace"));
  disjoint.push_back(std::make_unique<NamedSource>(b, "b.mtrace"));
  EXPECT_EQ(ConcatSource(std::move(disjoint)).rank_count(), 5u);
  std::vector<std::unique_ptr<TraceSource>> unknown;
  unknown.push_back(std::make_unique<MemorySource>(a));
  unknown.push_back(std::make_unique<MemorySource>(a));
  EXPECT_EQ(ConcatSource(std::move(unknown)).rank_count(), 4u);
}

}  // namespace
}  // namespace moetrace
