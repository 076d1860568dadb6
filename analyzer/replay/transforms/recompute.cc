#include "analyzer/replay/transforms/recompute.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "analyzer/replay/op_class.h"
#include "analyzer/replay/transforms/op_index.h"
#include "formats/errors.h"

namespace moetrace::replay {
namespace {

int32_t CounterTrack(const Rank& rank, CounterKind kind) {
  for (size_t t = 0; t < rank.tracks.size(); ++t) {
    if (rank.tracks[t].kind == TrackKind::kCounter && rank.tracks[t].counter == kind) return int32_t(t);
  }
  return -1;
}

// The activation steps of each (step, micro-batch, layer): growth in the
// forward, release at the end of the backward.
struct LayerMemory {
  int64_t growth = -1, release = -1;  // indices into RankMemory::deltas
};

std::unordered_map<uint64_t, LayerMemory> ActivationSteps(const Rank& rank, const RankMemory& mem,
                                                          int32_t act_track) {
  std::unordered_map<uint64_t, LayerMemory> out;
  for (size_t k = 0; k < mem.deltas.size(); ++k) {
    const MemDelta& d = mem.deltas[k];
    if (d.counter_track != act_track || d.op_track < 0 || d.removed) continue;
    const EventTable& ev = rank.tracks[size_t(d.op_track)].events;
    const size_t i = size_t(d.op_event);
    if (ev.layer[i] < 0 || ev.micro_batch[i] < 0) continue;
    LayerMemory& lm = out[WorkKey(ev.step[i], ev.micro_batch[i], ev.layer[i])];
    if (d.delta > 0 && ev.phase[i] == Phase::kForward && lm.growth < 0) lm.growth = int64_t(k);
    if (d.delta < 0 && ev.phase[i] == Phase::kBackward) lm.release = int64_t(k);
  }
  return out;
}

void AddDelta(RankMemory* mem, int32_t track, const MemDelta& anchor, double delta) {
  MemDelta d = anchor;
  d.counter_track = track;
  d.delta = delta;
  d.removed = false;
  mem->deltas.push_back(d);
}

// Adds the launch cost of `from`'s launches to `to`'s, track by track.
void AddLaunchCost(const Trace& trace, size_t r, const LaunchIndex& li, int64_t from_corr,
                   int64_t to_corr, EventEdits* edits) {
  if (from_corr < 0 || to_corr < 0) return;
  auto to = li.Of(to_corr);
  for (auto [h, k] : li.Of(from_corr)) {
    for (auto [h2, k2] : to) {
      if (h2 == h) edits->dur[r][size_t(h2)][size_t(k2)] += edits->dur[r][size_t(h)][size_t(k)];
    }
  }
  (void)trace;
}

struct Op {
  int32_t t;
  int64_t i;
  TimeNs ts;
};

// Removes, with their launches, the device ops of rank `r` for which
// `remove(events, i)` holds; returns how many.
template <typename Pred>
int64_t RemoveDeviceOps(const Trace& trace, size_t r, EventEdits* edits, Pred remove) {
  const Rank& rank = trace.ranks[r];
  LaunchIndex li(rank);
  int64_t n = 0;
  for (size_t t = 0; t < rank.tracks.size(); ++t) {
    const Track& tr = rank.tracks[t];
    if (tr.kind != TrackKind::kDeviceStream) continue;
    for (size_t i = 0; i < tr.events.size(); ++i) {
      if (!remove(tr.events, i)) continue;
      edits->RemoveOp(trace, r, t, i, li);
      ++n;
    }
  }
  return n;
}

void ToNone(const Trace& trace, EventEdits* edits) {
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const Rank& rank = trace.ranks[r];
    RemoveDeviceOps(trace, r, edits, [](const EventTable& ev, size_t i) {
      return ev.phase[i] == Phase::kRecompute;
    });
    // The recompute buffer of each layer becomes activations kept from the forward.
    RankMemory& mem = edits->memory[r];
    const int32_t act = CounterTrack(rank, CounterKind::kMemActivations);
    const int32_t rec = CounterTrack(rank, CounterKind::kMemRecompute);
    if (act < 0 || rec < 0) continue;
    auto steps = ActivationSteps(rank, mem, act);
    std::unordered_map<uint64_t, double> extra;
    for (MemDelta& d : mem.deltas) {
      if (d.counter_track != rec || d.op_track < 0) continue;
      const EventTable& ev = rank.tracks[size_t(d.op_track)].events;
      const size_t i = size_t(d.op_event);
      const uint64_t key = WorkKey(ev.step[i], ev.micro_batch[i], ev.layer[i]);
      auto it = steps.find(key);
      if (it == steps.end() || it->second.growth < 0 || it->second.release < 0) continue;
      if (d.delta > 0) extra[key] += d.delta;
      d.removed = true;
    }
    for (auto& [key, x] : extra) {
      const LayerMemory& lm = steps[key];
      mem.deltas[size_t(lm.growth)].delta += x;
      mem.deltas[size_t(lm.release)].delta -= x;
    }
  }
  edits->memory_edited = true;
}

void FromNone(const Trace& trace, bool full, const RunSettings& s, EventEdits* edits) {
  const CollectiveGroups groups(trace);
  const double sbh = double(s.seq) * s.mbs * s.hidden;
  const double t = std::max(1, s.tp);
  const double score = 5.0 * s.heads * double(s.seq) * s.seq * s.mbs / t;
  const double kept = 2 * sbh / (s.sp || s.tp == 1 ? t : 1);
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const Rank& rank = trace.ranks[r];
    LaunchIndex li(rank);
    // Ops of each layer instance by phase, in time order.
    std::unordered_map<uint64_t, std::vector<Op>> fwd, bwd;
    for (size_t tk = 0; tk < rank.tracks.size(); ++tk) {
      const Track& tr = rank.tracks[tk];
      if (tr.kind != TrackKind::kDeviceStream) continue;
      const EventTable& ev = tr.events;
      for (size_t i = 0; i < ev.size(); ++i) {
        if (ev.layer[i] < 0 || ev.micro_batch[i] < 0 || edits->IsRemoved(r, tk, i)) continue;
        const Category c = ev.category[i];
        if (c != Category::kCompute && c != Category::kCollective) continue;
        const uint64_t key = WorkKey(ev.step[i], ev.micro_batch[i], ev.layer[i]);
        if (ev.phase[i] == Phase::kForward) fwd[key].push_back({int32_t(tk), int64_t(i), ev.ts[i]});
        if (ev.phase[i] == Phase::kBackward) bwd[key].push_back({int32_t(tk), int64_t(i), ev.ts[i]});
      }
    }
    auto by_time = [](const Op& a, const Op& b) { return a.ts < b.ts; };
    const int32_t act = CounterTrack(rank, CounterKind::kMemActivations);
    int32_t rec = CounterTrack(rank, CounterKind::kMemRecompute);
    if (rec < 0) rec = act;
    RankMemory& mem = edits->memory[r];
    auto steps = act >= 0 ? ActivationSteps(rank, mem, act) : std::unordered_map<uint64_t, LayerMemory>{};
    auto cat = [&](const Op& o) { return rank.tracks[size_t(o.t)].events.category[size_t(o.i)]; };
    auto corr = [&](const Op& o) { return rank.tracks[size_t(o.t)].events.correlation[size_t(o.i)]; };
    auto is_fa = [&](const Op& o) {
      const EventTable& ev = rank.tracks[size_t(o.t)].events;
      return ev.category[size_t(o.i)] == Category::kCompute &&
             ClassifyOp(rank.strings.Get(ev.name[size_t(o.i)]), Category::kCompute) ==
                 OpClass::kFlashAttention;
    };
    for (auto& [key, b] : bwd) {
      auto f = fwd.find(key);
      if (f == fwd.end()) continue;
      std::sort(b.begin(), b.end(), by_time);
      std::sort(f->second.begin(), f->second.end(), by_time);
      const std::vector<Op>& fo = f->second;
      Op target{-1, -1, 0};  // the backward op that absorbs the re-run
      TimeNs extra_ns = 0;
      if (!full) {
        const Op* ffa = nullptr;
        for (const Op& o : fo) if (is_fa(o)) ffa = &o;
        for (const Op& o : b) {
          if (is_fa(o)) {
            target = o;
            break;
          }
        }
        if (!ffa || target.t < 0) continue;
        extra_ns = edits->dur[r][size_t(ffa->t)][size_t(ffa->i)];
        AddLaunchCost(trace, r, li, corr(*ffa), corr(target), edits);
      } else {
        for (const Op& o : b) {
          if (cat(o) == Category::kCompute) {
            target = o;
            break;
          }
        }
        if (target.t < 0) continue;
        std::vector<const Op*> fc, bc;
        for (const Op& o : fo) {
          if (cat(o) == Category::kCompute) extra_ns += edits->dur[r][size_t(o.t)][size_t(o.i)];
          else fc.push_back(&o);
          AddLaunchCost(trace, r, li, corr(o), corr(target), edits);
        }
        for (const Op& o : b) if (cat(o) != Category::kCompute) bc.push_back(&o);
        // The forward's collectives run again: their transfers join the backward's, in order.
        if (fc.size() == bc.size()) {
          for (size_t j = 0; j < fc.size(); ++j) {
            const int64_t g = groups.GroupOf(r, size_t(fc[j]->t), size_t(fc[j]->i));
            const TimeNs T = g >= 0 ? groups.Transfer(*edits, g)
                                    : edits->dur[r][size_t(fc[j]->t)][size_t(fc[j]->i)];
            edits->dur[r][size_t(bc[j]->t)][size_t(bc[j]->i)] += T;
          }
        }
      }
      edits->dur[r][size_t(target.t)][size_t(target.i)] += extra_ns;
      // Memory: what the re-run rebuilds is no longer kept from the forward.
      auto sm = steps.find(key);
      if (!s.known || sm == steps.end() || sm->second.growth < 0 || sm->second.release < 0) continue;
      MemDelta& grow = mem.deltas[size_t(sm->second.growth)];
      const double x = full ? std::max(0.0, grow.delta - kept) : std::min(grow.delta, score);
      if (x <= 0) continue;
      grow.delta -= x;
      mem.deltas[size_t(sm->second.release)].delta += x;
      MemDelta anchor;
      anchor.op_track = target.t;
      anchor.op_event = target.i;
      anchor.at_end = false;
      anchor.ts = target.ts;
      AddDelta(&mem, rec, anchor, x);
      AddDelta(&mem, rec, mem.deltas[size_t(sm->second.release)], -x);
    }
  }
  edits->memory_edited = true;
  if (!s.known) edits->notes.push_back("recompute: no model shape in the trace, memory unchanged");
}

}  // namespace

std::string RecomputeOf(const Trace& trace) {
  bool any = false, beyond_attention = false;
  for (const Rank& rank : trace.ranks) {
    for (const Track& tr : rank.tracks) {
      if (tr.kind != TrackKind::kDeviceStream) continue;
      for (size_t i = 0; i < tr.events.size(); ++i) {
        if (tr.events.phase[i] != Phase::kRecompute) continue;
        any = true;
        if (tr.events.category[i] != Category::kCompute ||
            ClassifyOp(rank.strings.Get(tr.events.name[i]), Category::kCompute) != OpClass::kFlashAttention) {
          beyond_attention = true;
        }
      }
    }
  }
  return !any ? "none" : beyond_attention ? "full" : "selective";
}

void ChangeRecompute(const Trace& trace, const std::string& from, const std::string& to,
                     const RunSettings& settings, EventEdits* edits) {
  for (const std::string* m : {&from, &to}) {
    if (*m != "none" && *m != "selective" && *m != "full") {
      ThrowInputError("--set", "memory.recompute=" + *m, "expected none, selective or full");
    }
  }
  if (!edits->active) edits->Init(trace);
  if (from == to) return;
  if (from != "none") ToNone(trace, edits);
  if (to != "none") FromNone(trace, to == "full", settings, edits);
  edits->notes.push_back("recompute " + from + " -> " + to);
}

int64_t AddSwap(const Trace& trace, const Calibration& cal, EventEdits* edits) {
  if (!edits->active) edits->Init(trace);
  const double bw = cal.host_link_bw > 0 ? cal.host_link_bw : 25e9;
  const double ovh = cal.known ? cal.kernel_overhead_ns : 0;
  int64_t swapped = 0;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const Rank& rank = trace.ranks[r];
    const int32_t act = CounterTrack(rank, CounterKind::kMemActivations);
    if (act < 0) continue;
    LaunchIndex li(rank);
    struct Layer { TimeNs fwd_compute = 0; Op last_fwd{-1, -1, 0}; };
    std::unordered_map<uint64_t, Layer> layers;
    std::unordered_map<uint64_t, Op> first_bwd;  // per (step, micro-batch): the backward task's start
    for (size_t tk = 0; tk < rank.tracks.size(); ++tk) {
      const Track& tr = rank.tracks[tk];
      if (tr.kind != TrackKind::kDeviceStream) continue;
      const EventTable& ev = tr.events;
      for (size_t i = 0; i < ev.size(); ++i) {
        if (ev.micro_batch[i] < 0 || edits->IsRemoved(r, tk, i) || ev.category[i] != Category::kCompute) continue;
        if (ev.phase[i] == Phase::kForward && ev.layer[i] >= 0) {
          Layer& l = layers[WorkKey(ev.step[i], ev.micro_batch[i], ev.layer[i])];
          l.fwd_compute += edits->dur[r][tk][i];
          if (l.last_fwd.t < 0 || ev.ts[i] >= l.last_fwd.ts) l.last_fwd = {int32_t(tk), int64_t(i), ev.ts[i]};
        }
        if (ev.phase[i] == Phase::kBackward) {
          Op& b = first_bwd.try_emplace(WorkKey(ev.step[i], ev.micro_batch[i], 0), Op{-1, -1, 0}).first->second;
          if (b.t < 0 || ev.ts[i] < b.ts) b = {int32_t(tk), int64_t(i), ev.ts[i]};
        }
      }
    }
    RankMemory& mem = edits->memory[r];
    auto steps = ActivationSteps(rank, mem, act);
    auto add_launch = [&](const Op& o) {
      for (auto [h, k] : li.Of(rank.tracks[size_t(o.t)].events.correlation[size_t(o.i)])) {
        edits->dur[r][size_t(h)][size_t(k)] += trace.ranks[r].tracks[size_t(h)].events.dur[size_t(k)];
      }
    };
    for (auto& [key, l] : layers) {
      auto sm = steps.find(key);
      if (sm == steps.end() || sm->second.growth < 0 || l.last_fwd.t < 0) continue;
      const EventTable& lev = rank.tracks[size_t(l.last_fwd.t)].events;
      auto b = first_bwd.find(WorkKey(lev.step[size_t(l.last_fwd.i)], lev.micro_batch[size_t(l.last_fwd.i)], 0));
      if (b == first_bwd.end()) continue;
      const double kept = mem.deltas[size_t(sm->second.growth)].delta;
      const double y = std::min(kept, double(l.fwd_compute) * bw / 1e9);
      if (y <= 0) continue;
      MemDelta out;
      out.op_track = l.last_fwd.t;
      out.op_event = l.last_fwd.i;
      out.at_end = true;
      out.ts = l.last_fwd.ts;
      out.offset = TimeNs(std::ceil(y * 1e9 / bw + ovh));
      AddDelta(&mem, act, out, -y);
      MemDelta in;
      in.op_track = b->second.t;
      in.op_event = b->second.i;
      in.ts = b->second.ts;
      AddDelta(&mem, act, in, y);
      add_launch(l.last_fwd);
      add_launch(b->second);
      ++swapped;
    }
  }
  edits->memory_edited = true;
  edits->notes.push_back("swap on: " + std::to_string(swapped) + " layer instances swapped");
  return swapped;
}

int64_t RemoveSwap(const Trace& trace, EventEdits* edits) {
  if (!edits->active) edits->Init(trace);
  int64_t n = 0;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    n += RemoveDeviceOps(trace, r, edits, [](const EventTable& ev, size_t i) {
      return ev.category[i] == Category::kCopy && (ev.flags[i] & (kFlagSwapOut | kFlagSwapIn));
    });
  }
  edits->notes.push_back("swap off: " + std::to_string(n) + " copies removed");
  return n;
}

}  // namespace moetrace::replay
