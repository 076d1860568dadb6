// Pass 1 of AnalyzeRank (rank_metrics.cc): the host pass over each host
// thread (launches, syncs, step markers) and the pass over each device
// stream (its busy ops as items with their launch time, host waits, launch
// delays, the step of each op). Functions of their own so that their
// running values stay in registers: inside AnalyzeRank they were spilled,
// a load and a store each per op (bench/README.md, "Session 19").
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "analyzer/item_bits.h"
#include "analyzer/launch_table.h"
#include "analyzer/rank_metrics.h"
#include "formats/trace.h"

namespace moetrace::rank_pass {

// A host step marker (ProfilerStep#N, tracegen's): [ts, end], its step.
struct Marker { TimeNs ts, end; int32_t step; };

// The host pass over one thread's events (`thread`: its track index):
// its launches into the table, its sync ends, its step markers (syncs,
// blocking calls and markers, all rare, share one test per event).
void HostPassThread(const EventTable& ev, int32_t thread, LaunchTable* launches,
                    std::vector<TimeNs>* sync_ends, std::vector<Marker>* markers);

// Pass 1's state across a rank's device streams: its inputs, the buffers
// it fills by index and their counts, the step bounds so far.
struct PassOne {
  const Rank* rank = nullptr;
  RankScratch* s = nullptr;
  const LaunchTable* launches = nullptr;
  const std::vector<Marker>* markers = nullptr;  // sorted by start
  const std::vector<std::vector<TimeNs>>* sync_ends = nullptr;  // by track, sorted
  std::vector<Arrival>* arrivals = nullptr;
  int32_t unmarked_step = 0;  // the step of every op when there is no marker
  RankScratch::Item* items_out = nullptr;
  RankScratch::Item* waits_out = nullptr;
  int64_t* delays_out = nullptr;
  int64_t* op_host_out = nullptr;
  uint64_t* mask_count = nullptr;
  size_t n_items = 0, n_waits = 0, n_delays = 0;
  int64_t delay_max = 0;
  std::vector<TimeNs> step_first, step_last;  // by step number
  std::vector<TimeNs> stepless_starts;        // device ops of no step (RL rollout, scoring, switch)
  // Device tasks that are neither busy nor waits here (syncs, markers) still
  // stretch the device span of the profiler's Overlap Analysis.
  TimeNs idle_task_first = std::numeric_limits<TimeNs>::max(), idle_task_last = kNoTime;
};

// Pass 1 over one device stream (`order`: its events in start order, used
// unless kSorted): its busy ops as items with their launch time, its host
// waits, its launch delays, the step of each op. What only rare paths
// touch (host waits, idle device tasks, the marker search) stays in `p`.
template <bool kSorted>
void PassOneStream(const Track& t, const uint32_t* order, PassOne* p);

}  // namespace moetrace::rank_pass
