// The operator view's per-op work, done by AnalyzeRank (analyzer/
// rank_metrics.cc) right after its pass 1 over each device stream
// (AddItems over the stream's items): each device op goes straight to its
// row (name, shape, group) in tables indexed by interned name id, and its
// launch time to its name. No record per op beyond the item pass 1 writes
// anyway: what is left per op is a 4-byte row id (by the op's index in the
// device events), read back only to gather the durations of the few rows
// whose exact percentiles are written (rank_ops.h). The buffers live in
// RankScratch: no allocation per rank once warm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/ops/log_histogram.h"
#include "analyzer/ops/op_record.h"

namespace moetrace::ops {

// One cache line per row (it was 56 bytes, so that most rows straddled two).
struct alignas(64) FoldRow {
  // What the per-op path touches first, in one cache line with the window base.
  int64_t count = 0, total = 0;
  int64_t min = std::numeric_limits<int64_t>::max(), max = -1;
  // Bit k % 64: the k-th stream folded (OpFold::streams) holds ops of the
  // row, so that the percentile gather passes over those streams only.
  uint64_t streams = 0;
  uint32_t hist_lo = 0;  // first bucket of the row's dense histogram window
  StringId name = 0, shape = 0;  // shape 0: the trace records none
  int32_t next = -1;             // next shaped row of the same (name, shape), another group
  uint8_t group = 0;             // CommClass, kGroupCompute or kGroupCopy
};
static_assert(sizeof(FoldRow) == 64);

// Launch figures of one name (rank_ops.h folds names into operator types).
struct NameLaunch {
  int64_t count = 0, host = 0, small = 0, device = 0;
  uint64_t first = 0;  // sequence number of its first joined op: the type's name is its first seen
};

class OpFold {
 public:
  static constexpr uint64_t kEmpty = ~0ull;
  static constexpr uint32_t kNoRow = ~0u;
  // Groups per name in the (name, group) table: a power of two >= kGroupCopy + 1.
  static constexpr uint32_t kGroupStride = 8;
  static_assert(kGroupCopy < kGroupStride);
  // Buckets of a row's dense histogram window: 2 octaves around its first
  // duration. Durations of one operator mostly stay in it (jitter of a few
  // %); the others go to the (row, bucket) hash. A dense counter per op
  // costs an increment, where runs of one bucket broke on jittered
  // durations and took the hash most of the time.
  static constexpr uint32_t kWindow = 32;
  static constexpr uint32_t kWindowBelow = 12;  // window buckets below the first duration's

  // `n_names`: the rank's string table size; `device_events`: every event of
  // its device streams (row_of is indexed by them).
  void Begin(size_t n_names, size_t device_events);

  // One busy device op: the `at`-th device event (track by track, each in
  // its table order), its device time `dur` (>= 0) and summed launch time
  // `host` (-1: no launch joined). Of no stream in particular: its row is
  // marked as on every stream.
  void Add(StringId name, StringId shape, uint8_t group, int64_t dur, int64_t host, size_t at) {
    Cursor c = cursor();
    AddOne(&c, name, shape, group, dur, host, at, ~0ull);
  }

  // A device stream folded by AddItems: its track in the rank, and the
  // index of its first event among the device events.
  struct Stream {
    size_t track = 0, base = 0;
  };

  // A track's busy ops as AnalyzeRank's pass 1 leaves them: `items[q]` has
  // start, end, mask and, in its name slot, the op's index i in the track's
  // table (names[i], shapes[i] when shapes is not null; device event
  // base + i); host[q] its launch time; group_of(mask) its group. `track`:
  // the stream's index in the rank's tracks (recorded in `streams`).
  // A loop of its own with the tables' pointers in registers: inlined into
  // pass 1 (or calling Add per op) the pointers were reloaded from memory
  // per op.
  template <class Item, class GroupOf>
  void AddItems(const Item* items, size_t n, const int64_t* host, const StringId* names,
                const StringId* shapes, size_t base, size_t track, GroupOf group_of) {
    const uint64_t bit = uint64_t{1} << (streams.size() % 64);
    streams.push_back({track, base});
    Cursor c = cursor();
    for (size_t q = 0; q < n; ++q) {
      const Item& it = items[q];
      const uint32_t i = it.name;
      AddOne(&c, names[i], shapes ? shapes[i] : 0, group_of(it.mask), it.end - it.start, host[q], base + i, bit);
    }
  }

  // Nothing left to flush (kept for the callers' symmetry with Begin).
  void Finish() {}

  // The buckets outside the rows' windows, as (row << 10 | bucket, count)
  // sorted by key: once per rank, for AppendHistogram.
  void SortedSpills(std::vector<std::pair<uint64_t, int64_t>>* out) const;
  // Row `r`'s histogram as (bucket, count) pairs sorted by bucket, appended
  // to `out`: its window's non-empty buckets and its `spills`.
  void AppendHistogram(uint32_t r, const std::vector<std::pair<uint64_t, int64_t>>& spills,
                       std::vector<std::pair<uint32_t, int64_t>>* out) const;

  std::vector<FoldRow> rows;
  std::vector<NameLaunch> launch;  // by name id
  std::vector<uint32_t> row_of;    // by device event: its row, kNoRow when not a busy op
  std::vector<Stream> streams;     // the streams AddItems folded, in order
  size_t spilled() const { return hused_; }

 private:
  // The tables' storage, refreshed when a new row or name grows them.
  struct Cursor {
    FoldRow* rows;
    int32_t* slot;
    uint32_t* window;
    uint32_t* row_of;
    NameLaunch* launch;
  };
  Cursor cursor() { return {rows.data(), slot_.data(), window_.data(), row_of.data(), launch.data()}; }

  [[gnu::always_inline]] void AddOne(Cursor* c, StringId name, StringId shape, uint8_t group,
                                     int64_t dur, int64_t host, size_t at, uint64_t stream_bit) {
    if (name >= n_names_) {
      GrowNames(name);
      *c = cursor();
    }
    int32_t h;
    if (shape == 0) {
      // One flat slot per (name, group): no chain to walk.
      h = c->slot[static_cast<size_t>(name) * kGroupStride + group];
      if (h < 0) {
        h = NewRow(name, 0, group, dur);
        *c = cursor();
      }
    } else {
      // Shapes per name are unbounded (dynamic shapes): hashed.
      h = ShapedRow(name, shape, group, dur);
      *c = cursor();
    }
    c->row_of[at] = static_cast<uint32_t>(h);
    FoldRow& row = c->rows[static_cast<size_t>(h)];
    row.min = dur < row.min ? dur : row.min;
    row.max = dur > row.max ? dur : row.max;
    row.count += 1;
    row.total += dur;
    row.streams |= stream_bit;
    const uint32_t b = LogHistogram::Bucket(dur);
    const uint32_t o = b - row.hist_lo;  // wraps to huge below the window
    if (o < kWindow) {
      ++c->window[static_cast<size_t>(h) * kWindow + o];
    } else {
      AddBucket(static_cast<uint32_t>(h), b, 1);
    }
    if (host >= 0) {
      NameLaunch& l = c->launch[name];
      if (l.count == 0) l.first = seq_;
      ++seq_;
      l.count += 1;
      l.host += host;
      l.small += dur < host;
      l.device += dur;
    }
  }

  void GrowNames(StringId name);
  int32_t NewRow(StringId name, StringId shape, uint8_t group, int64_t first_dur);
  int32_t ShapedRow(StringId name, StringId shape, uint8_t group, int64_t first_dur);
  void AddBucket(uint32_t row, uint32_t bucket, int64_t count);

  size_t n_names_ = 0;
  std::vector<int32_t> slot_;     // by name * kGroupStride + group: its unshaped row, -1 none
  std::vector<uint32_t> window_;  // by row * kWindow + bucket - hist_lo: counts
  // (name << 32 | shape) -> its latest row (rows of other groups chained by next).
  std::unordered_map<uint64_t, int32_t> shaped_;
  // Buckets outside a row's window: (row, bucket) -> count, open
  // addressing, key row << 10 | bucket.
  std::vector<uint64_t> hkey_;
  std::vector<int64_t> hcount_;
  size_t hused_ = 0;
  int shift_ = 64 - 10;
  uint64_t seq_ = 0;
};

}  // namespace moetrace::ops
