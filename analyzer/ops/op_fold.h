// The operator view's per-op work, folded into AnalyzeRank's pass 1
// (analyzer/rank_metrics.cc): each device op goes straight to its row
// (name, shape, group) in tables indexed by interned name id, and its launch
// time to its name. No record per op: what is left per op is a 4-byte row id
// (by the op's index in the device events), read back only to gather the
// durations of the few rows whose exact percentiles are written
// (rank_ops.h). The buffers live in RankScratch: no allocation per rank
// once warm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analyzer/ops/log_histogram.h"
#include "analyzer/ops/op_record.h"

namespace moetrace::ops {

struct FoldRow {
  StringId name = 0, shape = 0;  // shape 0: the trace records none
  int32_t next = -1;             // next row of the same name (unshaped) or (name, shape)
  uint8_t group = 0;             // CommClass, kGroupCompute or kGroupCopy
  int64_t count = 0, total = 0, min = 0, max = 0;
  // The current run of durations in one histogram bucket: consecutive ops of
  // a row mostly fall in the same bucket, so the (row, bucket) table is
  // touched once per run, not per op.
  int64_t run_dur = -1, run_count = 0;
  uint32_t run_bucket = 0;
};

// Launch figures of one name (rank_ops.h folds names into operator types).
struct NameLaunch {
  int64_t count = 0, host = 0, small = 0, device = 0;
  uint64_t first = 0;  // sequence number of its first joined op: the type's name is its first seen
};

class OpFold {
 public:
  static constexpr uint64_t kEmpty = ~0ull;
  static constexpr uint32_t kNoRow = ~0u;

  // `n_names`: the rank's string table size; `device_events`: every event of
  // its device streams (row_of is indexed by them).
  void Begin(size_t n_names, size_t device_events);

  // One busy device op: the `at`-th device event (track by track, each in
  // its table order), its device time `dur` (>= 0) and summed launch time
  // `host` (-1: no launch joined).
  // Always inline: GCC kept it out of line, a call per op with every
  // argument spilled (4% of analyze's samples).
  [[gnu::always_inline]] void Add(StringId name, StringId shape, uint8_t group, int64_t dur,
                                  int64_t host, size_t at) {
    if (name >= head.size()) GrowNames(name);
    int32_t h;
    if (shape == 0) {
      // A name's unshaped rows differ only by group: a chain of 1-3.
      h = head[name];
      while (h >= 0 && rows[static_cast<size_t>(h)].group != group) h = rows[static_cast<size_t>(h)].next;
      if (h < 0) h = NewRow(name, shape, group);
    } else {
      // Shapes per name are unbounded (dynamic shapes): hashed, not chained.
      h = ShapedRow(name, shape, group);
    }
    row_of[at] = static_cast<uint32_t>(h);
    FoldRow& row = rows[static_cast<size_t>(h)];
    if (row.count == 0 || dur < row.min) row.min = dur;
    if (dur > row.max) row.max = dur;
    row.count += 1;
    row.total += dur;
    if (dur == row.run_dur) {
      ++row.run_count;
    } else {
      const uint32_t b = LogHistogram::Bucket(dur);
      if (b == row.run_bucket && row.run_count > 0) {
        ++row.run_count;
      } else {
        if (row.run_count > 0) AddBucket(static_cast<uint32_t>(h), row.run_bucket, row.run_count);
        row.run_bucket = b;
        row.run_count = 1;
      }
      row.run_dur = dur;
    }
    if (host >= 0) {
      NameLaunch& l = launch[name];
      if (l.count == 0) l.first = seq_;
      ++seq_;
      l.count += 1;
      l.host += host;
      l.small += dur < host;
      l.device += dur;
    }
  }

  // Flushes the open runs into the (row, bucket) table.
  void Finish();

  std::vector<int32_t> head;       // by name id: its latest unshaped row, -1 none
  std::vector<FoldRow> rows;
  std::vector<NameLaunch> launch;  // by name id
  std::vector<uint32_t> row_of;    // by device event: its row, kNoRow when not a busy op
  // (row, bucket) -> count, open addressing: key row << 10 | bucket.
  std::vector<uint64_t> hkey;
  std::vector<int64_t> hcount;
  size_t hused = 0;

 private:
  void GrowNames(StringId name);
  int32_t NewRow(StringId name, StringId shape, uint8_t group);
  int32_t ShapedRow(StringId name, StringId shape, uint8_t group);
  // (name << 32 | shape) -> its latest row (rows of other groups chained by next).
  std::unordered_map<uint64_t, int32_t> shaped_;
  void AddBucket(uint32_t row, uint32_t bucket, int64_t count);
  int shift_ = 64 - 10;
  uint64_t seq_ = 0;
};

}  // namespace moetrace::ops
