#include "analyzer/ops/op_fold.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace moetrace::ops {
namespace {

// The (row, bucket) counts of every row's histogram (window and spills), as
// a map; each row's pairs must come sorted by bucket.
std::map<std::pair<uint32_t, uint32_t>, int64_t> Buckets(const OpFold& f) {
  std::map<std::pair<uint32_t, uint32_t>, int64_t> out;
  std::vector<std::pair<uint64_t, int64_t>> spills;
  f.SortedSpills(&spills);
  for (uint32_t r = 0; r < f.rows.size(); ++r) {
    std::vector<std::pair<uint32_t, int64_t>> h;
    f.AppendHistogram(r, spills, &h);
    EXPECT_TRUE(std::is_sorted(h.begin(), h.end())) << "row " << r;
    for (const auto& [b, c] : h) out[{r, b}] += c;
  }
  return out;
}

TEST(OpFold, RowsByNameShapeGroupAndHistogramAddUpPerOp) {
  OpFold f;
  f.Begin(/*n_names=*/4, /*device_events=*/8);
  // Name 1: 100 and 101 share bucket 57 (octave 6: 16 * 3 + ((v >> 2) & 15)), 5000 is
  // bucket 147: past the row's window (buckets 9-136, from its first op), spilled.
  f.Add(1, 0, kGroupCompute, 100, -1, 0);
  f.Add(1, 0, kGroupCompute, 101, 50, 1);
  f.Add(1, 0, kGroupCompute, 5000, 70, 2);
  f.Add(1, 0, kGroupCompute, 100, -1, 4);
  // Same name, another shape and another group: rows of their own.
  f.Add(1, 2, kGroupCompute, 7, -1, 5);
  f.Add(1, 0, kGroupCopy, 9, 20, 6);
  // Name 3: a comm op (group 0), joined to a launch: the seventh op folded.
  f.Add(3, 0, 0, 30, 40, 7);
  f.Finish();

  ASSERT_EQ(f.rows.size(), 4u);
  EXPECT_EQ(f.rows[0].count, 4);
  EXPECT_EQ(f.rows[0].total, 5301);
  EXPECT_EQ(f.rows[0].min, 100);
  EXPECT_EQ(f.rows[0].max, 5000);
  EXPECT_EQ(f.rows[1].shape, 2u);
  EXPECT_EQ(f.rows[2].group, kGroupCopy);
  EXPECT_EQ(f.rows[3].name, 3u);
  EXPECT_EQ(LogHistogram::Bucket(100), 57u);
  EXPECT_EQ(LogHistogram::Bucket(101), 57u);
  EXPECT_EQ(LogHistogram::Bucket(5000), 147u);
  const std::map<std::pair<uint32_t, uint32_t>, int64_t> want = {
      {{0, 57}, 3}, {{0, 147}, 1}, {{1, 7}, 1}, {{2, 9}, 1}, {{3, 30}, 1}};
  EXPECT_EQ(Buckets(f), want);
  EXPECT_EQ(f.rows[0].hist_lo, 9u);
  EXPECT_EQ(f.spilled(), 1u);  // only (row 0, bucket 147)

  // Row ids by device event.
  EXPECT_EQ(f.row_of[0], 0u);
  EXPECT_EQ(f.row_of[2], 0u);
  EXPECT_EQ(f.row_of[5], 1u);
  EXPECT_EQ(f.row_of[7], 3u);

  // Launch figures by name, summed over its rows: name 1 (two compute ops
  // and the copy joined; the unshaped compute row's two other ops and the
  // shaped row's op were not).
  std::vector<NameLaunch> l;
  f.LaunchesByName(&l);
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[1].count, 3);
  EXPECT_EQ(l[1].host, 140);
  EXPECT_EQ(l[1].small, 1);  // the copy: 9 ns on the device < 20 ns launching
  EXPECT_EQ(l[1].device, 5110);
  EXPECT_EQ(f.rows[0].unlaunched, 2);
  EXPECT_EQ(f.rows[0].unlaunched_total, 200);
  // Fold positions of each name's first joined op (ops folded before it):
  // name 1's is the second op, name 3's the seventh.
  EXPECT_EQ(l[1].first, 1u);
  EXPECT_EQ(l[3].first, 6u);
  EXPECT_EQ(l[3].count, 1);
  EXPECT_EQ(l[3].device, 30);
  EXPECT_EQ(l[0].count, 0);
  EXPECT_EQ(l[0].first, FoldRow::kNoPos);

  // Reused for the next rank: nothing of this one is left.
  f.Begin(2, 1);
  EXPECT_TRUE(f.rows.empty());
  EXPECT_EQ(f.spilled(), 0u);
  EXPECT_TRUE(Buckets(f).empty());
  // A name id past the string table (a hostile file) grows the tables.
  f.Add(9, 0, kGroupCompute, 5, 1, 0);
  f.Finish();
  EXPECT_EQ(f.rows.size(), 1u);
  f.LaunchesByName(&l);
  ASSERT_EQ(l.size(), 10u);
  EXPECT_EQ(l[9].count, 1);
}

// Dynamic shapes: every op of one name with its own shape gets its own row,
// found again by hash (a chain per name made this quadratic in the shapes).
TEST(OpFold, ManyShapesOfOneNameAreRowsOfTheirOwn) {
  OpFold f;
  f.Begin(/*n_names=*/2, /*device_events=*/3000);
  for (uint32_t k = 0; k < 1000; ++k) f.Add(1, 100 + k, kGroupCompute, 10, -1, k);
  for (uint32_t k = 0; k < 1000; ++k) f.Add(1, 100 + k, kGroupCompute, 30, -1, 1000 + k);
  for (uint32_t k = 0; k < 1000; ++k) f.Add(1, 100 + k, kGroupCopy, 5, -1, 2000 + k);
  f.Finish();
  ASSERT_EQ(f.rows.size(), 2000u);
  for (uint32_t k = 0; k < 1000; ++k) {
    EXPECT_EQ(f.row_of[k], f.row_of[1000 + k]);
    EXPECT_NE(f.row_of[k], f.row_of[2000 + k]);
    EXPECT_EQ(f.rows[f.row_of[k]].total, 40);
    EXPECT_EQ(f.rows[f.row_of[k]].shape, 100 + k);
  }
  // Each shaped row's histogram is its own: 10 and 30 ns (buckets 10 and 30), or 5.
  const auto b = Buckets(f);
  EXPECT_EQ(b.size(), 3000u);
  EXPECT_EQ(b.at({f.row_of[0], 10}), 1);
  EXPECT_EQ(b.at({f.row_of[0], 30}), 1);
  EXPECT_EQ(b.at({f.row_of[2000], 5}), 1);
}

// A window counter is 8 bits: every 256th op of one bucket moves 256 to the
// hash, and the row's histogram adds the two (one pair per bucket, exact).
TEST(OpFold, WrappedWindowCountersAddUpExactly) {
  OpFold f;
  f.Begin(/*n_names=*/2, /*device_events=*/856);
  for (uint32_t k = 0; k < 600; ++k) f.Add(1, 0, kGroupCompute, 100, -1, k);      // bucket 57
  for (uint32_t k = 600; k < 855; ++k) f.Add(1, 0, kGroupCompute, 5000, -1, k);  // bucket 147, spilled
  f.Add(1, 0, kGroupCompute, 200, -1, 855);                                       // bucket 73
  f.Finish();
  ASSERT_EQ(f.rows.size(), 1u);
  EXPECT_EQ(f.rows[0].count, 856);
  EXPECT_EQ(f.rows[0].window[57 - 9], 600 - 512);  // wrapped twice
  // Hash keys: (row 0, bucket 57) holding 512, (row 0, bucket 147) holding 255.
  EXPECT_EQ(f.spilled(), 2u);
  const std::map<std::pair<uint32_t, uint32_t>, int64_t> want = {{{0, 57}, 600}, {{0, 73}, 1}, {{0, 147}, 255}};
  EXPECT_EQ(Buckets(f), want);
  std::vector<std::pair<uint64_t, int64_t>> spills;
  f.SortedSpills(&spills);
  std::vector<std::pair<uint32_t, int64_t>> h;
  f.AppendHistogram(0, spills, &h);
  EXPECT_EQ(h, (std::vector<std::pair<uint32_t, int64_t>>{{57, 600}, {73, 1}, {147, 255}}));
}

// AddItems records each stream it folds, and marks each row with the
// streams holding its ops: the percentile gather passes over those only.
TEST(OpFold, RowsKnowTheirStreams) {
  struct Item {
    int64_t start, end;
    uint32_t mask, name;
  };
  OpFold f;
  f.Begin(/*n_names=*/3, /*device_events=*/7);
  const StringId names_a[] = {1, 2, 1};
  const StringId names_b[] = {0, 2, 0, 2};
  // Stream a (track 4, device events 0-2); its event 1 is not a busy op.
  const Item a[] = {{0, 10, 1, 0}, {20, 35, 1, 2}};
  const int64_t host_a[] = {-1, -1};
  // Stream b (track 7, device events 3-6): name 2 again, as a comm op.
  const Item b[] = {{0, 5, 2, 1}, {9, 12, 2, 3}};
  const int64_t host_b[] = {-1, -1};
  auto group = [](uint32_t mask) { return mask == 1 ? kGroupCompute : uint8_t{0}; };
  f.AddItems(a, 2, host_a, names_a, nullptr, 0, 3, 4, group);
  f.AddItems(b, 2, host_b, names_b, nullptr, 3, 4, 7, group);
  f.Finish();  // the rows' counts
  ASSERT_EQ(f.streams.size(), 2u);
  EXPECT_EQ(f.streams[0].track, 4u);
  EXPECT_EQ(f.streams[0].base, 0u);
  EXPECT_EQ(f.streams[1].track, 7u);
  EXPECT_EQ(f.streams[1].base, 3u);
  // Rows: (1, compute) from a's items 0 and 2; (2, comm) from b's items 1 and 3.
  ASSERT_EQ(f.rows.size(), 2u);
  EXPECT_EQ(f.rows[0].name, 1u);
  EXPECT_EQ(f.rows[0].count, 2);
  EXPECT_EQ(f.rows[0].total, 25);
  EXPECT_EQ(f.rows[0].streams, 0b01u);
  EXPECT_EQ(f.rows[1].name, 2u);
  EXPECT_EQ(f.rows[1].total, 8);
  EXPECT_EQ(f.rows[1].streams, 0b10u);
  EXPECT_EQ(f.row_of[0], 0u);
  EXPECT_EQ(f.row_of[1], OpFold::kNoRow);
  EXPECT_EQ(f.row_of[2], 0u);
  EXPECT_EQ(f.row_of[3], OpFold::kNoRow);
  EXPECT_EQ(f.row_of[4], 1u);
  EXPECT_EQ(f.row_of[5], OpFold::kNoRow);
  EXPECT_EQ(f.row_of[6], 1u);
  // Add (no stream of its own) marks its row as on every stream.
  f.Add(1, 0, kGroupCompute, 3, -1, 1);
  EXPECT_EQ(f.rows[0].streams, ~0ull);
  // The next rank starts with no stream. Begin does not clear the row ids:
  // a stream with events that are not busy ops overwrites the previous
  // rank's ids there.
  f.Begin(3, 7);
  EXPECT_TRUE(f.streams.empty());
  EXPECT_EQ(f.row_of[1], 0u);  // the previous rank's (event 1 was not busy, now it is)
  f.row_of[5] = 0;             // as if a busy op of the previous rank
  f.AddItems(b, 2, host_b, names_b, nullptr, 3, 4, 7, group);
  EXPECT_EQ(f.row_of[3], OpFold::kNoRow);
  EXPECT_EQ(f.row_of[4], 0u);
  EXPECT_EQ(f.row_of[5], OpFold::kNoRow);
  EXPECT_EQ(f.row_of[6], 0u);
}

}  // namespace
}  // namespace moetrace::ops
