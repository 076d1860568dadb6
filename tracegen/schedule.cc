#include "tracegen/schedule.h"

#include <algorithm>
#include <deque>

namespace moetrace::tracegen {
namespace {

// Megatron-LM's interleaved 1F1B (forward_backward_pipelining_with_
// interleaving); with vpp = 1 it is plain 1F1B (PipeDream-Flush).
std::vector<PipeItem> Interleaved(const ScheduleShape& sh, int s, bool fuse_steady, bool halves) {
  const int p = sh.pp, v = sh.vpp, m = sh.micro_batches;
  const int total = m * v;
  auto task = [&](int k, bool forward) {
    int in_group = k % (p * v);
    int chunk = in_group / p;
    if (!forward) chunk = v - 1 - chunk;
    PipeTask t;
    t.backward = !forward;
    t.mb = (k / (p * v)) * p + in_group % p;
    t.model_stage = chunk * p + s;
    int stages = p * v;
    t.up = t.model_stage == 0 ? -1 : (t.model_stage - 1) % p;
    t.down = t.model_stage == stages - 1 ? -1 : (t.model_stage + 1) % p;
    return t;
  };
  int warmup = v == 1 ? p - s - 1 : (p - s - 1) * 2 + (v - 1) * p;
  // Adaptive pipe runs one more warmup forward than Megatron's VPP, as
  // MindSpeed's --moe-fb-overlap and Megatron-LM's combined 1F1B do
  // (`num_warmup_microbatches += 1`): the forward of each steady pair is then
  // one micro-batch ahead, so no pair is a micro-batch's forward with its
  // own backward (at the last stage, warmup p·(v-1) pairs F(k) with B(k),
  // which cannot overlap: the backward starts from the forward's loss). One
  // more micro-batch's activations are held.
  if (halves) ++warmup;
  warmup = std::min(warmup, total);
  std::vector<PipeItem> out;
  // Warmup forwards and cooldown backwards have no opposite-direction
  // partner. Pairing two same-direction chunks (F&F, B&B) would hide their
  // all-to-alls but delays the first chunk of each pair, i.e. the pipeline
  // fill and drain (measured on the 718B preset: ~3 s longer step for
  // 0.5 s less exposed EP time). The adaptive schedule instead cuts such a
  // chunk into two halves of its micro-batch that overlap each other
  // (`halves`, adaptive_pipe only): the chunk still ends, and feeds the next
  // stage, as soon as its own work is done.
  for (int k = 0; k < warmup; ++k) out.push_back({task(k, true), {}, false, halves});
  for (int i = 0; i < total - warmup; ++i) {
    if (fuse_steady) {
      // A pair of one micro-batch's forward and backward (the last stage)
      // cannot overlap: `halves` cuts each in two (EngineImpl::BuildItem).
      PipeTask f = task(warmup + i, true), b = task(i, false);
      out.push_back({f, b, true, halves && f.mb == b.mb && f.model_stage == b.model_stage});
    } else {
      out.push_back({task(warmup + i, true), {}, false});
      out.push_back({task(i, false), {}, false});
    }
  }
  for (int i = total - warmup; i < total; ++i) out.push_back({task(i, false), {}, false, halves});
  return out;
}

// DualPipe: micro-batches enter from both ends; stage s holds model stage s
// for direction 0 and model stage p-1-s for direction 1. The order comes from
// a greedy list schedule on unit costs (F = 1, B = 2, fused F&B = 3) where a
// stage prefers a fused forward/backward pair, then a backward, then a
// forward while fewer than p+1 micro-batches hold activations.
std::vector<PipeItem> DualPipe(const ScheduleShape& sh, int want_stage) {
  const int p = sh.pp, m = sh.micro_batches, half = m / 2;
  struct Dir {
    int next_f = 0, next_b = 0;
  };
  // done_f[d][mb][pos], done_b[d][mb][pos]: completion times (-1 = not yet)
  auto idx = [&](int d, int mb, int pos) { return (static_cast<size_t>(d) * half + mb) * p + pos; };
  std::vector<long> done_f(2 * half * p, -1), done_b(2 * half * p, -1);
  std::vector<Dir> dirs(2 * p);
  std::vector<long> busy_until(p, 0);
  std::vector<int> inflight(p, 0);
  std::vector<std::vector<PipeItem>> order(p);
  auto pos_of = [&](int d, int stage) { return d == 0 ? stage : p - 1 - stage; };
  auto make = [&](int d, int mb, int stage, bool backward) {
    PipeTask t;
    t.backward = backward;
    t.mb = d * half + mb;
    int pos = pos_of(d, stage);
    t.model_stage = pos;
    auto stage_at = [&](int q) { return d == 0 ? q : p - 1 - q; };
    t.up = pos == 0 ? -1 : stage_at(pos - 1);
    t.down = pos == p - 1 ? -1 : stage_at(pos + 1);
    return t;
  };
  int remaining = 2 * p * half * 2;  // tasks (F and B) over all stages and directions
  long now = 0;
  while (remaining > 0) {
    bool progressed = false;
    for (int s = 0; s < p; ++s) {
      if (busy_until[s] > now) continue;
      // Ready tasks of this stage at `now`.
      int fd = -1, bd = -1;
      for (int d = 0; d < 2; ++d) {
        Dir& dir = dirs[d * p + s];
        int pos = pos_of(d, s);
        if (dir.next_f < half && fd < 0) {
          long dep = pos == 0 ? 0 : done_f[idx(d, dir.next_f, pos - 1)];
          if (dep >= 0 && dep <= now && inflight[s] < p + 1) fd = d;
        }
        if (dir.next_b < dir.next_f && bd < 0) {
          long dep = pos == p - 1 ? done_f[idx(d, dir.next_b, pos)]
                                  : done_b[idx(d, dir.next_b, pos + 1)];
          if (dep >= 0 && dep <= now) bd = d;
        }
      }
      if (fd < 0 && bd < 0) continue;
      progressed = true;
      auto run_f = [&](long end) {
        Dir& dir = dirs[fd * p + s];
        done_f[idx(fd, dir.next_f, pos_of(fd, s))] = end;
        ++dir.next_f;
        ++inflight[s];
        --remaining;
      };
      auto run_b = [&](long end) {
        Dir& dir = dirs[bd * p + s];
        done_b[idx(bd, dir.next_b, pos_of(bd, s))] = end;
        ++dir.next_b;
        --inflight[s];
        --remaining;
      };
      if (fd >= 0 && bd >= 0) {
        PipeItem it{make(fd, dirs[fd * p + s].next_f, s, false),
                    make(bd, dirs[bd * p + s].next_b, s, true), true};
        order[s].push_back(it);
        busy_until[s] = now + 3;
        run_f(now + 3);
        run_b(now + 3);
      } else if (bd >= 0) {
        order[s].push_back({make(bd, dirs[bd * p + s].next_b, s, true), {}, false});
        busy_until[s] = now + 2;
        run_b(now + 2);
      } else {
        order[s].push_back({make(fd, dirs[fd * p + s].next_f, s, false), {}, false});
        busy_until[s] = now + 1;
        run_f(now + 1);
      }
    }
    (void)progressed;
    ++now;
  }
  return order[want_stage];
}

}  // namespace

int ModelStages(const ScheduleShape& shape) {
  return shape.kind == "dualpipe" ? shape.pp : shape.pp * shape.vpp;
}

std::vector<PipeItem> StageSchedule(const ScheduleShape& shape, int stage) {
  if (shape.kind == "dualpipe") return DualPipe(shape, stage);
  const bool pipe = shape.kind == "adaptive_pipe";
  return Interleaved(shape, stage, shape.kind == "adaptive" || pipe, pipe);
}

}  // namespace moetrace::tracegen
