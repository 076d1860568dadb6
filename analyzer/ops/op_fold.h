// The operator view's per-op work, done by AnalyzeRank (analyzer/
// rank_metrics.cc) right after its pass 1 over each device stream
// (AddItems over the stream's items): each device op goes straight to its
// row (name, shape, group), found by interned name id, with its launch
// time. No record per op beyond the item pass 1 writes
// anyway: what is left per op is a 4-byte row id (by the op's index in the
// device events), read back only to gather the durations of the few rows
// whose exact percentiles are written (rank_ops.h). The buffers live in
// RankScratch: no allocation per rank once warm.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/ops/log_histogram.h"
#include "analyzer/ops/op_record.h"

namespace moetrace::ops {

// A row: what every op of it reads and writes in its first line (the
// sums, the extremes, its launch figures, the window's base), then its
// histogram window, then what only the rare paths and the summary read.
// 256 bytes. The launch figures are the row's, summed into its name's by
// LaunchesByName: an op then stores to its row only (total, host, small,
// one window counter), where the name's own line took four more stores.
struct alignas(64) FoldRow {
  // 8-bit counters: 128 buckets (8 octaves). Durations of one operator
  // spread over more than 2 octaves (analyze_bench's 5-25 us: 38 buckets);
  // a counter wrapping at 256 moves 256 to the hash once, 1 op in 256.
  static constexpr uint32_t kWindow = 128;
  static constexpr uint64_t kNoPos = ~0ull;
  int64_t total = 0;
  int64_t min = std::numeric_limits<int64_t>::max(), max = -1;
  int64_t host = 0;  // summed launch time of its ops joined to a launch
  // Bit k % 64: the k-th stream folded (OpFold::streams) holds ops of the
  // row, so that the percentile gather passes over those streams only.
  uint64_t streams = 0;
  uint64_t first_launch = kNoPos;  // fold position of its first op joined to a launch
  int64_t small = 0;     // joined ops whose device time is under their launch time
  uint32_t hist_lo = 0;  // first bucket of the row's dense histogram window
  alignas(64) uint8_t window[kWindow] = {};  // counts mod 256 of buckets hist_lo + 0 .. 127
  // Ops of the row: its spilled ops (and 256 per wrapped window counter)
  // while folding, then OpFold::Finish adds its window's counts (no count
  // per op).
  int64_t count = 0;
  // Ops not joined to a launch (rare): the launch count and device time are
  // the row's minus these.
  int64_t unlaunched = 0, unlaunched_total = 0;
  StringId name = 0, shape = 0;  // shape 0: the trace records none
  int32_t next = -1;             // next shaped row of the same (name, shape), another group
  uint8_t group = 0;             // CommClass, kGroupCompute or kGroupCopy
};
static_assert(sizeof(FoldRow) == 256);
static_assert(offsetof(FoldRow, window) == 64, "an op's sums fill the row's first line");

// A name's unshaped row per group (rank_ops.h folds names into operator
// types).
struct NameRows {
  static constexpr uint32_t kGroupStride = 8;  // a power of two >= kGroupCopy + 1
  int32_t row[kGroupStride];  // by group: its unshaped row, -1 none
  NameRows() { std::fill(row, row + kGroupStride, -1); }
};
static_assert(kGroupCopy < NameRows::kGroupStride);

// A name's launch figures: its rows' summed (LaunchesByName).
struct NameLaunch {
  int64_t count = 0, host = 0, small = 0, device = 0;
  uint64_t first = FoldRow::kNoPos;  // fold position of its first op joined to a launch
};

class OpFold {
 public:
  static constexpr uint64_t kEmpty = ~0ull;
  static constexpr uint32_t kNoRow = ~0u;
  // Buckets of a row's dense histogram window: 8 octaves around its first
  // duration, 3 below it and 5 above (the first op is seldom the slowest).
  // Durations of one operator mostly stay in it; the others go to the
  // (row, bucket) hash. A dense counter per op costs an increment, where
  // runs of one bucket broke on jittered durations and took the hash most
  // of the time.
  static constexpr uint32_t kWindow = FoldRow::kWindow;
  static constexpr uint32_t kWindowBelow = 48;  // window buckets below the first duration's

  // `n_names`: the rank's string table size; `device_events`: every event of
  // its device streams (row_of is indexed by them).
  void Begin(size_t n_names, size_t device_events);

  // One busy device op: the `at`-th device event (track by track, each in
  // its table order), its device time `dur` (>= 0) and summed launch time
  // `host` (-1: no launch joined). Of no stream in particular: its row is
  // marked as on every stream. It writes row_of[at] only: the slots of
  // events never added keep whatever they held.
  void Add(StringId name, StringId shape, uint8_t group, int64_t dur, int64_t host, size_t at) {
    if (name >= n_names_) GrowNames(name);
    const int32_t h = shape == 0 ? UnshapedRow(name, group, dur) : ShapedRow(name, shape, group, dur);
    row_of[at] = static_cast<uint32_t>(h);
    AddToRow(&rows[static_cast<size_t>(h)], static_cast<uint32_t>(h), dur, ~0ull, host, folded_);
    ++folded_;
  }

  // A device stream folded by AddItems: its track in the rank, the index
  // of its first event among the device events, and whether every
  // one of its events is a busy op.
  struct Stream {
    size_t track = 0, base = 0;
    bool all_busy = false;
  };

  // A track's busy ops as AnalyzeRank's pass 1 leaves them (`n_events`:
  // the track's events, busy or not): `items[q]` has
  // start, end, mask and, in its name slot, the op's index i in the track's
  // table (names[i], shapes[i] when shapes is not null; device event
  // base + i); host[q] its launch time; group_of(mask) its group. `track`:
  // the stream's index in the rank's tracks (recorded in `streams`).
  // A loop of its own with the tables' pointers in locals: inlined into
  // pass 1 (or calling Add per op) the pointers were reloaded from memory
  // per op. Traces without shapes (most) take a loop with no shape test.
  template <class Item, class GroupOf>
  void AddItems(const Item* items, size_t n, const int64_t* host, const StringId* names,
                const StringId* shapes, size_t base, size_t n_events, size_t track, GroupOf group_of) {
    const uint64_t bit = uint64_t{1} << (streams.size() % 64);
    streams.push_back({track, base, n == n_events});
    // The busy ops write their row below; the others (syncs, markers: few
    // streams have any) keep kNoRow.
    if (n < n_events) std::fill(row_of.begin() + base, row_of.begin() + base + n_events, kNoRow);
    if (shapes != nullptr) {
      FoldItems<true>(items, n, host, names, shapes, base, bit, group_of);
    } else {
      FoldItems<false>(items, n, host, names, shapes, base, bit, group_of);
    }
    folded_ += n;
  }

  // After the last op: each row's count from its histogram.
  void Finish();

  // By name id: its rows' launch figures summed (`out` sized to the name
  // table); after Finish.
  void LaunchesByName(std::vector<NameLaunch>* out) const;

  // The hash's counts (buckets outside the rows' windows, and 256 per
  // wrapped window counter), as (row << 10 | bucket, count) sorted by key:
  // once per rank, for AppendHistogram.
  void SortedSpills(std::vector<std::pair<uint64_t, int64_t>>* out) const;
  // Row `r`'s histogram as (bucket, count) pairs sorted by bucket, appended
  // to `out`: its window's non-empty buckets plus its `spills` of the same
  // bucket, and its other `spills`.
  void AppendHistogram(uint32_t r, const std::vector<std::pair<uint64_t, int64_t>>& spills,
                       std::vector<std::pair<uint32_t, int64_t>>* out) const;

  std::vector<FoldRow> rows;
  std::vector<NameRows> name_rows;  // by name id
  // By device event of the folded streams: its row, kNoRow when not a
  // busy op. Begin leaves it unset: AddItems writes each stream's slots.
  std::vector<uint32_t> row_of;
  std::vector<Stream> streams;         // the streams AddItems folded, in order
  size_t spilled() const { return hused_; }

 private:
  // The tables' pointers and size in locals (stores to the rows' uint64_t
  // fields may alias a size_t member for the compiler), refreshed after
  // the rare calls that grow a table.
  template <bool kShapes, class Item, class GroupOf>
  void FoldItems(const Item* items, size_t n, const int64_t* host, const StringId* names,
                 const StringId* shapes, size_t base, uint64_t bit, GroupOf group_of) {
    uint32_t* row_at = row_of.data() + base;
    const uint64_t pos0 = folded_;
    FoldRow* rows_p = rows.data();
    NameRows* names_p = name_rows.data();
    size_t n_names = n_names_;
    for (size_t q = 0; q < n; ++q) {
      const Item& it = items[q];
      const uint32_t i = it.name;
      const StringId name = names[i];
      const int64_t dur = it.end - it.start;
      const uint8_t group = group_of(it.mask);
      if (name >= n_names) [[unlikely]] {
        GrowNames(name);
        names_p = name_rows.data();
        n_names = n_names_;
      }
      int32_t h = -1;
      if constexpr (kShapes) {
        // Shapes per name are unbounded (dynamic shapes): hashed.
        const StringId shape = shapes[i];
        if (shape != 0) {
          h = ShapedRow(name, shape, group, dur);
          rows_p = rows.data();
        }
      }
      if (h < 0) {
        h = names_p[name].row[group];
        if (h < 0) [[unlikely]] {
          h = NewRow(name, 0, group, dur);
          rows_p = rows.data();
        }
      }
      row_at[i] = static_cast<uint32_t>(h);
      AddToRow(&rows_p[static_cast<size_t>(h)], static_cast<uint32_t>(h), dur, bit, host[q], pos0 + q);
    }
  }

  // One flat slot per (name, group): no chain to walk.
  [[gnu::always_inline]] int32_t UnshapedRow(StringId name, uint8_t group, int64_t dur) {
    const int32_t h = name_rows[name].row[group];
    return h >= 0 ? h : NewRow(name, 0, group, dur);
  }

  // `host`: the op's launch time, -1 when no launch joined; `pos`: its
  // fold position.
  [[gnu::always_inline]] void AddToRow(FoldRow* row, uint32_t h, int64_t dur, uint64_t stream_bit, int64_t host,
                                       uint64_t pos) {
    row->total += dur;
    // New extremes, a new stream, a first launch are rare after a row's
    // first ops: branches on loads, not a store per op.
    if (dur < row->min) row->min = dur;
    if (dur > row->max) row->max = dur;
    if ((row->streams & stream_bit) != stream_bit) [[unlikely]] row->streams |= stream_bit;
    const uint32_t b = LogHistogram::Bucket(dur);
    const uint32_t o = b - row->hist_lo;  // wraps to huge below the window
    if (o < kWindow) [[likely]] {
      if (++row->window[o] == 0) [[unlikely]] {  // wrapped: 256 more in the hash
        row->count += 256;
        AddBucket(h, b, 256);
      }
    } else {
      row->count += 1;
      AddBucket(h, b, 1);
    }
    if (host >= 0) [[likely]] {
      row->host += host;
      row->small += dur < host;
      if (row->first_launch == FoldRow::kNoPos) [[unlikely]] row->first_launch = pos;
    } else {
      row->unlaunched += 1;
      row->unlaunched_total += dur;
    }
  }

  void GrowNames(StringId name);
  int32_t NewRow(StringId name, StringId shape, uint8_t group, int64_t first_dur);
  int32_t ShapedRow(StringId name, StringId shape, uint8_t group, int64_t first_dur);
  void AddBucket(uint32_t row, uint32_t bucket, int64_t count);

  size_t n_names_ = 0;
  uint64_t folded_ = 0;  // ops folded so far in the rank
  // (name << 32 | shape) -> its latest row (rows of other groups chained by next).
  std::unordered_map<uint64_t, int32_t> shaped_;
  // Buckets outside a row's window: (row, bucket) -> count, open
  // addressing, key row << 10 | bucket.
  std::vector<uint64_t> hkey_;
  std::vector<int64_t> hcount_;
  size_t hused_ = 0;
  int shift_ = 64 - 10;
};

}  // namespace moetrace::ops
