#include "analyzer/rank_metrics.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>

#include "analyzer/item_bits.h"
#include "analyzer/launch_table.h"
#include "analyzer/ops/wait_attribution.h"
#include "analyzer/pass_one.h"
#include "analyzer/percentiles.h"
#include "analyzer/rl/rl_task.h"

namespace moetrace {
namespace {

using rank_pass::kBitClass0;
using rank_pass::kBitComm;
using rank_pass::kBitCompute;
using rank_pass::kBitCopy;
using rank_pass::kBitHostSync;
using rank_pass::kBitHostWait;
using rank_pass::kBitPpRecv;
using rank_pass::kBusy;
using rank_pass::kMaskCount;
using rank_pass::HostPassThread;
using rank_pass::kNoTime;
using rank_pass::LaunchTable;
using rank_pass::Marker;
using rank_pass::PassOne;
using rank_pass::PassOneStream;

// The interval unions built during the sweep. Each op feeds only the
// unions of its own class; differences with COMPUTE or with busy time
// (exposed class time, bubble, host-bound) are taken afterwards on the
// materialized unions, which keeps the per-op work small.
enum Acc : int {
  kAccCompute, kAccComm, kAccCc, kAccBusy, kAccPp, kAccHw, kAccHs, kAccClass0,
  kAccCount = kAccClass0 + kCommClassCount,
};
// Unions whose length per window is accumulated directly.
constexpr uint32_t kMeasured = (1u << kAccCompute) | (1u << kAccComm) | (1u << kAccCc) |
                               (1u << kAccBusy) | (((1u << kCommClassCount) - 1) << kAccClass0);
// Per-window outputs after the accumulators: differences.
enum Out : int {
  kOutHostBound = kAccCount, kOutHostSync, kOutBubble, kOutClassExposed0,
  kOutCount = kOutClassExposed0 + kCommClassCount,
};

// For every item mask, the set of unions it belongs to.
const std::array<uint32_t, kMaskCount>& AccTable() {
  static const std::array<uint32_t, kMaskCount> table = [] {
    std::array<uint32_t, kMaskCount> t{};
    for (uint32_t m = 0; m < kMaskCount; ++m) {
      uint32_t a = 0;
      auto set = [&](int acc, bool on) { if (on) a |= 1u << acc; };
      set(kAccCompute, m & kBitCompute);
      set(kAccComm, m & kBitComm);
      set(kAccCc, m & (kBitCompute | kBitComm));
      set(kAccBusy, m & kBusy);
      set(kAccPp, m & kBitPpRecv);
      set(kAccHw, m & kBitHostWait);
      set(kAccHs, m & kBitHostSync);
      for (int c = 0; c < kCommClassCount; ++c) set(kAccClass0 + c, m & (kBitClass0 << c));
      t[m] = a;
    }
    return t;
  }();
  return table;
}

struct Windows {
  const TimeNs* start;  // W + 1 boundaries: window w = [b[w], b[w+1])
  size_t count;
};

inline void Emit(size_t& cursor, TimeNs s, TimeNs e, const Windows& win, int64_t* lens) {
  const TimeNs* b = win.start;
  while (cursor < win.count && b[cursor + 1] <= s) ++cursor;
  while (s < e && cursor < win.count) {
    TimeNs lo = std::max(s, b[cursor]);
    TimeNs hi = std::min(e, b[cursor + 1]);
    if (hi > lo) lens[cursor] += hi - lo;
    if (e <= b[cursor + 1]) break;
    ++cursor;
  }
}

using Interval = std::pair<TimeNs, TimeNs>;

struct Pieces {
  const Interval* p;
  size_t n;
};

// |A \ B| per window, for sorted disjoint interval lists A and B.
void Subtract(Pieces A, Pieces B, const Windows& win, int64_t* lens) {
  size_t cursor = 0, j = 0;
  for (size_t i = 0; i < A.n; ++i) {
    const auto [as, ae] = A.p[i];
    TimeNs cur = as;
    while (j < B.n && B.p[j].second <= cur) ++j;
    size_t k = j;
    while (k < B.n && B.p[k].first < ae) {
      if (B.p[k].first > cur) Emit(cursor, cur, B.p[k].first, win, lens);
      cur = std::max(cur, B.p[k].second);
      if (cur >= ae) break;
      ++k;
    }
    if (cur < ae) Emit(cursor, cur, ae, win, lens);
  }
}

// Merges start-ordered item runs [a, ae) and [b, be) into `out`.
// Branch-free choice.
inline void MergeTwo(const RankScratch::Item* a, const RankScratch::Item* ae,
                     const RankScratch::Item* b, const RankScratch::Item* be,
                     RankScratch::Item* out) {
  while (a < ae && b < be) {
    const bool take_b = b->start < a->start;
    *out++ = *(take_b ? b : a);
    b += take_b;
    a += !take_b;
  }
  out = std::copy(a, ae, out);
  std::copy(b, be, out);
}

// GCC on x86-64 gets the selections below as inline asm; elsewhere (aarch64
// Kunpeng hosts, clang) the portable code. The sanitizer build uses clang,
// so CI runs every test through the portable path as well.
#if defined(__x86_64__) && !defined(__clang__)
#define MOETRACE_SWEEP_ASM 1
#else
#define MOETRACE_SWEEP_ASM 0
#endif

// c ? a : b without a branch. The sweep's choices depend on how the
// streams interleave, so branches would be mispredicted often, and the
// compiler turns plain selections into branches at will.
inline __attribute__((always_inline)) TimeNs Pick(bool c, TimeNs a, TimeNs b) {
#if MOETRACE_SWEEP_ASM
  asm("testl %k[c], %k[c]\n\tcmovne %[a], %[b]"
      : [b] "+r"(b)
      : [a] "r"(a), [c] "r"(static_cast<uint32_t>(c))
      : "cc");
  return b;
#else
  const int64_t m = -static_cast<int64_t>(c);
  return (a & m) | (b & ~m);
#endif
}

// One interval union built from start-ordered items, branch-free: the
// piece being grown is stored at the list's end on every item, and the
// list advances when an item starts after it (a new piece). Items that do
// not belong (`in` false) change nothing. It starts "closed at -inf", so
// the first item always opens a new piece.
struct UnionBuilder {
  Interval* w;  // slot of the current piece
  TimeNs s = std::numeric_limits<TimeNs>::min(), e = std::numeric_limits<TimeNs>::min();
  // An item that belongs.
  inline __attribute__((always_inline)) void Add(TimeNs st, TimeNs en) {
    *w = Interval(s, e);
#if MOETRACE_SWEEP_ASM
    // fresh = st > e; s = fresh ? st : s; e = max(e, en). An item ends at
    // or after its start, so a fresh piece ends at `en`.
    uint64_t fresh;
    asm("xorl %k[f], %k[f]\n\t"
        "cmpq %[e], %[st]\n\t"
        "setg %b[f]\n\t"
        "cmovgq %[st], %[s]\n\t"
        "cmpq %[e], %[en]\n\t"
        "cmovgq %[en], %[e]"
        : [s] "+r"(s), [e] "+r"(e), [f] "=&r"(fresh)
        : [st] "r"(st), [en] "r"(en)
        : "cc");
    w += fresh;
#else
    const bool fresh = st > e;
    w += fresh;
    s = Pick(fresh, st, s);
    e = Pick(en > e, en, e);
#endif
  }
  // An item that belongs when `in`: one that does not starts and ends at
  // -inf (no effect).
  inline __attribute__((always_inline)) void Add(TimeNs st, TimeNs en, bool in) {
    constexpr TimeNs kMin = std::numeric_limits<TimeNs>::min();
    Add(Pick(in, st, kMin), Pick(in, en, kMin));
  }
  // An item that belongs when `mask & kBit`: the test, the membership
  // selections and the growth in one asm block on x86-64 GCC (the flags of
  // one test serve both selections, the mask needs no copy).
  template <uint32_t kBit>
  inline __attribute__((always_inline)) void AddIf(TimeNs st, TimeNs en, uint32_t mask) {
#if MOETRACE_SWEEP_ASM
    *w = Interval(s, e);
    const TimeNs kMin = std::numeric_limits<TimeNs>::min();
    uint64_t fresh;
    asm("testl %[bit], %k[m]\n\t"
        "cmovzq %[kmin], %[st]\n\t"
        "cmovzq %[kmin], %[en]\n\t"
        "xorl %k[f], %k[f]\n\t"
        "cmpq %[e], %[st]\n\t"
        "setg %b[f]\n\t"
        "cmovgq %[st], %[s]\n\t"
        "cmpq %[e], %[en]\n\t"
        "cmovgq %[en], %[e]"
        : [s] "+r"(s), [e] "+r"(e), [f] "=&r"(fresh), [st] "+r"(st), [en] "+r"(en)
        : [m] "r"(mask), [bit] "i"(kBit), [kmin] "r"(kMin)
        : "cc");
    w += fresh;
#else
    Add(st, en, (mask & kBit) != 0);
#endif
  }
};

// The start-ordered runs of `items` ([rb[r], rb[r + 1]) for each r; `n`
// items in all) merged until at most `keep` runs remain (1 or 2), in
// `items` or in `buf`; `rb` then holds the boundaries of the remaining runs.
// The sweep merges the last two on the fly, which saves writing and reading
// one more level. Ties may go either way: unions do not depend on their order.
const RankScratch::Item* MergeRuns(RankScratch::Item* items, size_t n, std::vector<size_t>* run_begin,
                                   std::vector<RankScratch::Item>* buf, size_t keep) {
  std::vector<size_t>& rb = *run_begin;
  const size_t runs = rb.size();
  rb.push_back(n);  // runs + 1 boundaries
  if (runs <= keep) return items;
  if (buf->size() < n) buf->resize(n);
  if (runs <= 8) {
    // Few streams: merge runs pairwise (branch-free, ping-pong between the
    // two buffers) until `keep` remain.
    RankScratch::Item* src = items;
    RankScratch::Item* dst = buf->data();
    while (rb.size() > keep + 1) {
      size_t w = 1;
      for (size_t r = 0; r + 1 < rb.size(); r += 2) {
        if (r + 2 < rb.size()) {
          MergeTwo(src + rb[r], src + rb[r + 1], src + rb[r + 1], src + rb[r + 2], dst + rb[r]);
          rb[w++] = rb[r + 2];
        } else {
          std::copy(src + rb[r], src + rb[r + 1], dst + rb[r]);
          rb[w++] = rb[r + 1];
        }
      }
      rb.resize(w);
      std::swap(src, dst);
    }
    return src;
  }
  // Many streams: a binary heap of run cursors keyed by the next start.
  RankScratch::Item* dst = buf->data();
  struct Head { TimeNs start; size_t pos, end; };
  std::vector<Head> heap;
  heap.reserve(runs);
  for (size_t r = 0; r < runs; ++r) {
    if (rb[r] < rb[r + 1]) heap.push_back({items[rb[r]].start, rb[r], rb[r + 1]});
  }
  auto later = [](const Head& a, const Head& b) { return a.start > b.start; };
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    Head& h = heap.back();
    // Drain this run while it stays the earliest.
    const TimeNs limit = heap.size() > 1 ? heap.front().start : std::numeric_limits<TimeNs>::max();
    do {
      *dst++ = items[h.pos];
      ++h.pos;
    } while (h.pos < h.end && items[h.pos].start <= limit);
    if (h.pos < h.end) {
      h.start = items[h.pos].start;
      std::push_heap(heap.begin(), heap.end(), later);
    } else {
      heap.pop_back();
    }
  }
  rb.assign({0, n});
  return buf->data();
}

// A start-ordered run of items, [b, e).
struct Run {
  const RankScratch::Item* b;
  const RankScratch::Item* e;
};

// The start-ordered runs of `items` ([rb[r], rb[r + 1]), 3 to 8 of them)
// merged, the two shortest first, until two remain: `out[0]`, `out[1]`. A
// rank's streams differ in length by 30x (the 718B trace: 5.6 k compute
// ops, 1.5 k on the comm stream, 150-400 on each of pp send, pp recv and
// copy): merging in stream order rewrote every item at each of two levels,
// merging by length rewrites ~a fifth of them (only the short streams' items,
// in a buffer small enough to stay in L1/L2), and the compute stream is never
// copied. Merged runs go to `buf` one after the other; the schedule depends
// only on the lengths, so its total size is known before any merge.
void MergeShortestFirst(const RankScratch::Item* items, const std::vector<size_t>& rb,
                        std::vector<RankScratch::Item>* buf, Run out[2]) {
  const size_t nr = rb.size() - 1;
  // The schedule, from the lengths alone: at step k, runs lo and hi (the
  // two shortest of the k left, first found on ties) become run lo, and
  // the last run takes hi's place.
  size_t len[8], lo_at[8], hi_at[8], total = 0;
  for (size_t r = 0; r < nr; ++r) len[r] = rb[r + 1] - rb[r];
  for (size_t k = nr; k > 2; --k) {
    size_t a = 0, b = 1;
    if (len[b] < len[a]) std::swap(a, b);
    for (size_t r = 2; r < k; ++r) {
      if (len[r] < len[a]) {
        b = a;
        a = r;
      } else if (len[r] < len[b]) {
        b = r;
      }
    }
    const size_t lo = std::min(a, b), hi = std::max(a, b);
    len[lo] += len[hi];
    total += len[lo];
    len[hi] = len[k - 1];
    lo_at[k - 1] = lo;
    hi_at[k - 1] = hi;
  }
  if (buf->size() < total) buf->resize(total);
  Run runs[8];
  for (size_t r = 0; r < nr; ++r) runs[r] = {items + rb[r], items + rb[r + 1]};
  RankScratch::Item* dst = buf->data();
  for (size_t k = nr; k > 2; --k) {
    const Run x = runs[lo_at[k - 1]], y = runs[hi_at[k - 1]];
    MergeTwo(x.b, x.e, y.b, y.e, dst);
    const RankScratch::Item* merged = dst;
    dst += (x.e - x.b) + (y.e - y.b);
    runs[lo_at[k - 1]] = {merged, dst};
    runs[hi_at[k - 1]] = runs[k - 1];
  }
  out[0] = runs[0];
  out[1] = runs[1];
}

// The union of `items` (start-ordered) whose mask has a bit of `bits` (all
// of them when `bits` is 0), written from `storage` on, into `*out`. Inside
// AnalyzeRank (and when the builder is the return value) GCC kept the
// builder's state in memory, since the pieces written through its `w` might
// alias it: each item then reloaded the (s, e) pair with one 16-byte load
// from two 8-byte stores, which store forwarding cannot serve -- a stall
// per item that made these loops ~7% of `analyze` on the 718B trace. A
// local builder that never escapes lives in registers; it is copied out
// once at the end.
__attribute__((noinline)) void UnionOf(const RankScratch::Item* items, size_t n, uint32_t bits,
                                       Interval* storage, UnionBuilder* out) {
  UnionBuilder ub{storage};
  if (bits == 0) {
    for (size_t k = 0; k < n; ++k) ub.Add(items[k].start, items[k].end);
  } else {
    for (size_t k = 0; k < n; ++k) ub.Add(items[k].start, items[k].end, (items[k].mask & bits) != 0);
  }
  *out = ub;
}

// The unions most items feed, grown item by item in start order.
struct MainUnions {
  UnionBuilder compute, comm, cc, busy;
  RankScratch::Item* rare;
  uint32_t rare_bits;
  size_t n_rare = 0;
  template <bool kRare>
  inline __attribute__((always_inline)) void Add(const RankScratch::Item& it) {
    const TimeNs st = it.start, en = it.end;
    const uint32_t m = it.mask;
    compute.AddIf<kBitCompute>(st, en, m);
    comm.AddIf<kBitComm>(st, en, m);
    cc.AddIf<kBitCompute | kBitComm>(st, en, m);
    busy.Add(st, en);  // every op is busy
    if (kRare) {
      rare[n_rare] = it;
      n_rare += (m & rare_bits) != 0;
    }
  }
};

// The earlier head of two runs (`a` on ties), whose cursor advances;
// branch-free.
inline __attribute__((always_inline)) const RankScratch::Item* TakeEarlier(
    const RankScratch::Item*& a, const RankScratch::Item*& b) {
#if MOETRACE_SWEEP_ASM
  static_assert(sizeof(RankScratch::Item) == 24 && offsetof(RankScratch::Item, start) == 0);
  const RankScratch::Item* p;
  TimeNs t;
  const RankScratch::Item *na, *nb;
  asm("movq (%[b]), %[t]\n\t"
      "leaq 24(%[a]), %[na]\n\t"
      "leaq 24(%[b]), %[nb]\n\t"
      "movq %[a], %[p]\n\t"
      "cmpq (%[a]), %[t]\n\t"
      "cmovlq %[b], %[p]\n\t"
      "cmovlq %[nb], %[b]\n\t"
      "cmovgeq %[na], %[a]"
      : [a] "+r"(a), [b] "+r"(b), [p] "=&r"(p), [t] "=&r"(t), [na] "=&r"(na), [nb] "=&r"(nb)
      :
      : "cc", "memory");
  return p;
#else
  const bool take_b = b->start < a->start;
  const auto* p = reinterpret_cast<const RankScratch::Item*>(
      Pick(take_b, reinterpret_cast<TimeNs>(b), reinterpret_cast<TimeNs>(a)));
  const size_t tb = take_b;
  b += tb;
  a += 1 - tb;
  return p;
#endif
}

// The sweep over the items of two start-ordered runs [a, ae) and [b, be),
// merged on the fly: COMPUTE, COMM, COMPUTE ∪ COMM and busy time, and a
// copy of the items of the other unions in `rare` (few: receives, mixed
// classes) for their own passes. Its own function, so that the unions'
// state can live in registers.
template <bool kRare>
__attribute__((noinline)) void SweepMain(const RankScratch::Item* a, const RankScratch::Item* ae,
                                         const RankScratch::Item* b, const RankScratch::Item* be,
                                         MainUnions* out) {
  MainUnions u = *out;
  for (;;) {
    // Neither run ends within the next `m` items: no end checks inside.
    size_t m = static_cast<size_t>(std::min(ae - a, be - b));
    if (m == 0) break;
    do {
      u.Add<kRare>(*TakeEarlier(a, b));
    } while (--m != 0);
  }
  for (; a < ae; ++a) u.Add<kRare>(*a);
  for (; b < be; ++b) u.Add<kRare>(*b);
  *out = u;
}

// The sweep over four start-ordered runs h[r] .. e[r], merged on the fly
// (no materialised merge level), until one of them runs out: the cursors
// are left at the first item not taken, for a merge of the rest.
template <bool kRare>
__attribute__((noinline)) void SweepFour(const RankScratch::Item** h,
                                         const RankScratch::Item* const* e, MainUnions* out) {
  MainUnions u = *out;
  const RankScratch::Item *a = h[0], *b = h[1], *c = h[2], *d = h[3];
  for (;;) {
    // None of the runs ends within the next `m` items: no end checks inside.
    const size_t m = static_cast<size_t>(
        std::min(std::min(e[0] - a, e[1] - b), std::min(e[2] - c, e[3] - d)));
    if (m == 0) break;
    for (size_t j = 0; j < m; ++j) {
#if MOETRACE_SWEEP_ASM
      const RankScratch::Item *x, *y, *p;
      TimeNs t;
      asm("movq (%[b]), %[t]\n\t"
          "movq %[a], %[x]\n\t"
          "cmpq (%[a]), %[t]\n\t"
          "cmovlq %[b], %[x]\n\t"
          "movq (%[d]), %[t]\n\t"
          "movq %[c], %[y]\n\t"
          "cmpq (%[c]), %[t]\n\t"
          "cmovlq %[d], %[y]\n\t"
          "movq (%[y]), %[t]\n\t"
          "movq %[x], %[p]\n\t"
          "cmpq (%[x]), %[t]\n\t"
          "cmovlq %[y], %[p]"
          : [x] "=&r"(x), [y] "=&r"(y), [p] "=&r"(p), [t] "=&r"(t)
          : [a] "r"(a), [b] "r"(b), [c] "r"(c), [d] "r"(d)
          : "cc", "memory");
      asm("leaq 24(%[a]), %[t]\n\t"
          "cmpq %[p], %[a]\n\t"
          "cmoveq %[t], %[a]\n\t"
          "leaq 24(%[b]), %[t]\n\t"
          "cmpq %[p], %[b]\n\t"
          "cmoveq %[t], %[b]\n\t"
          "leaq 24(%[c]), %[t]\n\t"
          "cmpq %[p], %[c]\n\t"
          "cmoveq %[t], %[c]\n\t"
          "leaq 24(%[d]), %[t]\n\t"
          "cmpq %[p], %[d]\n\t"
          "cmoveq %[t], %[d]"
          : [a] "+r"(a), [b] "+r"(b), [c] "+r"(c), [d] "+r"(d), [t] "=&r"(t)
          : [p] "r"(p)
          : "cc");
#else
      const RankScratch::Item* x = b->start < a->start ? b : a;
      const RankScratch::Item* y = d->start < c->start ? d : c;
      const RankScratch::Item* p = y->start < x->start ? y : x;
      a += p == a;
      b += p == b;
      c += p == c;
      d += p == d;
#endif
      u.Add<kRare>(*p);
    }
  }
  h[0] = a;
  h[1] = b;
  h[2] = c;
  h[3] = d;
  *out = u;
}

// True when the rank's host ranges name RL phases (analyzer/rl) and none is
// an update (update_actor, update_critic). Each interned name is recognised
// once.
bool RolloutOnlyCard(const Rank& rank) {
  std::vector<int8_t> seen(rank.strings.size(), -1);  // -1 unknown, 0 not RL, 1 RL, 2 update
  bool rl = false;
  for (const Track& t : rank.tracks) {
    if (t.kind != TrackKind::kHostThread) continue;
    const EventTable& ev = t.events;
    for (size_t i = 0; i < ev.size(); ++i) {
      const Category c = ev.category[i];
      if ((c != Category::kMarker && c != Category::kHostOp) || (ev.flags[i] & kFlagStepMarker)) continue;
      const StringId n = ev.name[i];
      if (n >= seen.size()) continue;
      if (seen[n] < 0) {
        const auto r = moetrace::rl::Recognise(rank.strings.Get(n));
        seen[n] = !r ? 0
                  : (r->task == moetrace::rl::Task::kUpdateActor || r->task == moetrace::rl::Task::kUpdateCritic) ? 2
                                                                                                               : 1;
      }
      if (seen[n] == 2) return false;
      rl |= seen[n] == 1;
    }
  }
  return rl;
}

// EventTable::IsSortedByTime on the raw column, checked 8 at a time without
// a branch per event (the streams of a trace are nearly always sorted).
bool TimesAscend(const TimeNs* ts, size_t n) {
  if (n < 2) return true;
  TimeNs prev = ts[0];
  size_t i = 1;
  for (; i + 8 <= n; i += 8) {
    bool bad = false;
    for (size_t j = 0; j < 8; ++j) {
      const TimeNs x = ts[i + j];
      bad |= x < prev;
      prev = x;
    }
    if (bad) return false;
  }
  for (; i < n; ++i) {
    if (ts[i] < ts[i - 1]) return false;
  }
  return true;
}

}  // namespace

void Recycle(RankMetrics&& m, RankScratch* scratch) {
  scratch->arrivals_pool = std::move(m.arrivals);
}

void BreakdownNs::Add(const BreakdownNs& o) {
  span += o.span;
  compute += o.compute;
  comm += o.comm;
  comm_overlapped += o.comm_overlapped;
  comm_exposed += o.comm_exposed;
  copy_exposed += o.copy_exposed;
  free += o.free;
  host_bound += o.host_bound;
  host_bound_sync += o.host_bound_sync;
  host_bound_dispatch += o.host_bound_dispatch;
  bubble += o.bubble;
}

RankMetrics AnalyzeRank(const Rank& rank, RankScratch* s) {
  RankMetrics out;
  out.arrivals = std::move(s->arrivals_pool);
  out.arrivals.clear();
  out.rank = rank.rank;
  out.event_count = static_cast<int64_t>(rank.EventCount());

  // One scan of the host threads: launches (L(b)), syncs (ends, sorted),
  // step markers.
  std::vector<std::vector<TimeNs>>& sync_ends = s->sync_ends;  // kept capacity
  if (sync_ends.size() < rank.tracks.size()) sync_ends.resize(rank.tracks.size());
  for (size_t ti = 0; ti < rank.tracks.size(); ++ti) sync_ends[ti].clear();
  std::vector<Marker> markers;
  LaunchTable launches(rank, s);
  for (size_t ti = 0; ti < rank.tracks.size(); ++ti) {
    const Track& t = rank.tracks[ti];
    if (t.kind != TrackKind::kHostThread) continue;
    HostPassThread(t.events, static_cast<int32_t>(ti), &launches, &sync_ends[ti], &markers);
    if (!std::is_sorted(sync_ends[ti].begin(), sync_ends[ti].end()))
      std::sort(sync_ends[ti].begin(), sync_ends[ti].end());
  }
  std::sort(markers.begin(), markers.end(),
            [](const Marker& a, const Marker& b) { return a.ts < b.ts; });

  // Pass 1: per device stream, ops and host waits in start order; the step
  // of every op; launch statistics; collectives for cross-rank matching.
  // Items, host waits and delays are written by index into buffers that
  // only grow (no per-event capacity check or zero fill once warm): at most
  // one of each per device event.
  size_t device_events = 0, device_streams = 0;
  for (const Track& t : rank.tracks) {
    if (t.kind == TrackKind::kDeviceStream) device_events += t.events.size(), ++device_streams;
  }
  if (s->items.size() < device_events) s->items.resize(device_events);
  // and one more per stream: a cut stream's wait after its last op.
  if (s->waits.size() < device_events + device_streams) s->waits.resize(device_events + device_streams);
  if (s->delays.size() < device_events) s->delays.resize(device_events);
  if (s->op_host.size() < device_events) s->op_host.resize(device_events);
  ops::OpFold& op_fold = s->op_fold;
  op_fold.Begin(rank.strings.size(), device_events);
  size_t device_base = 0;  // index of the track's first event among the device events
  s->run_begin.clear();
  s->wait_run_begin.clear();
  s->mask_count.assign(kMaskCount, 0);
  s->group_class.assign(rank.strings.size(), -1);
  s->name_class.assign(rank.strings.size(), -1);
  PassOne pass;
  pass.rank = &rank;
  pass.s = s;
  pass.launches = &launches;
  pass.markers = &markers;
  pass.sync_ends = &sync_ends;
  pass.arrivals = &out.arrivals;
  // A rank without step markers is one step, except an RL card that never
  // trains (a rollout-only card of separate pools): it ran no training step,
  // so its unstamped work stays in no step and it reports none.
  pass.unmarked_step = markers.empty() && RolloutOnlyCard(rank) ? -1 : 0;
  pass.items_out = s->items.data();
  pass.waits_out = s->waits.data();
  pass.delays_out = s->delays.data();
  pass.op_host_out = s->op_host.data();
  pass.mask_count = s->mask_count.data();
  RankScratch::Item* const items_out = s->items.data();
  RankScratch::Item* const waits_out = s->waits.data();
  const int64_t* const op_host_out = s->op_host.data();
  const uint64_t* const mask_count = s->mask_count.data();

  for (size_t ti = 0; ti < rank.tracks.size(); ++ti) {
    const Track& t = rank.tracks[ti];
    // An empty stream has nothing to measure, unless a cut left it with its
    // next op's host wait (Track::after_start).
    if (t.kind != TrackKind::kDeviceStream ||
        (t.events.empty() && t.after_start == std::numeric_limits<TimeNs>::max()))
      continue;
    const EventTable& ev = t.events;
    const bool sorted = TimesAscend(ev.ts.data(), ev.size());
    if (!sorted) {
      s->order.resize(ev.size());
      std::iota(s->order.begin(), s->order.end(), 0u);
      std::sort(s->order.begin(), s->order.end(), [&](uint32_t a, uint32_t b) {
        return ev.ts[a] != ev.ts[b] ? ev.ts[a] < ev.ts[b] : a < b;
      });
    }
    s->run_begin.push_back(pass.n_items);
    s->wait_run_begin.push_back(pass.n_waits);
    const size_t track_base = device_base;
    device_base += ev.size();
    out.arrivals.reserve(out.arrivals.size() + t.comms.size());
    if (sorted) {
      PassOneStream<true>(t, nullptr, &pass);
    } else {
      PassOneStream<false>(t, s->order.data(), &pass);
    }
    const StringId* col_name = ev.name.data();
    const bool has_shape = !ev.shape.empty();
    const size_t n_ev = ev.size();
    const size_t n_items = pass.n_items;
    // The operator view: each op of the track to its row by the comm class,
    // or compute / copy, in a loop of its own over the track's items (in
    // the loop above it spilled that loop's registers).
    const size_t first_item = s->run_begin.back();
    op_fold.AddItems(items_out + first_item, n_items - first_item, op_host_out + first_item, col_name,
                     has_shape ? ev.shape.data() : nullptr, track_base, n_ev, ti, [](uint32_t mask) {
                       return mask == kBitCopy      ? ops::kGroupCopy
                              : mask == kBitCompute ? ops::kGroupCompute
                                                    : static_cast<uint8_t>(std::countr_zero(mask / kBitClass0));
                     });
  }

  // Every op is one item (and at most one host wait); every launched op
  // one delay.
  const size_t n_items = pass.n_items, n_waits = pass.n_waits, n_delays = pass.n_delays;
  const int64_t delay_max = pass.delay_max;
  const TimeNs idle_task_first = pass.idle_task_first, idle_task_last = pass.idle_task_last;
  std::vector<TimeNs>& step_first = pass.step_first;
  std::vector<TimeNs>& step_last = pass.step_last;
  std::vector<TimeNs>& stepless_starts = pass.stepless_starts;
  out.ops_with_host_wait = static_cast<int64_t>(n_waits);
  out.device_ops = static_cast<int64_t>(n_items);
  out.launch_count = static_cast<int64_t>(n_delays);
  op_fold.Finish();

  // Step windows: [first op start of k, first op start of next), the last
  // ending at its last op's end. A step also ends at its last op's end when
  // work of no step starts between that end and the next step's first op
  // (an RL iteration's rollout and scoring between two actor updates): the
  // gap becomes a window of its own (step id -1) that is measured like the
  // others but reported in no step. Pre-training has no such op between
  // steps, so its windows are unchanged.
  std::sort(stepless_starts.begin(), stepless_starts.end());
  auto stepless_in = [&](TimeNs lo, TimeNs hi) {
    auto it = std::lower_bound(stepless_starts.begin(), stepless_starts.end(), lo);
    return it != stepless_starts.end() && *it < hi;
  };
  std::vector<TimeNs> bounds;
  std::vector<int32_t> step_ids;
  TimeNs prev_end = kNoTime;  // last op end of the previous step
  for (size_t k = 0; k < step_first.size(); ++k) {
    if (step_last[k] == kNoTime) continue;
    TimeNs b = step_first[k];
    if (!bounds.empty()) {
      if (prev_end > bounds.back() && prev_end < b && stepless_in(prev_end, b)) {
        bounds.push_back(prev_end);
        step_ids.push_back(-1);
      }
      b = std::max(b, bounds.back());  // keep windows ordered
    }
    bounds.push_back(b);
    step_ids.push_back(static_cast<int32_t>(k));
    prev_end = step_last[k];
  }
  if (!bounds.empty()) {
    // The last window ends at its last op, or, in a trace cut after it
    // (Track::after_start), where the next step's first op starts, as in
    // the whole trace.
    TimeNs end = step_last[static_cast<size_t>(step_ids.back())];
    TimeNs next = std::numeric_limits<TimeNs>::max();
    for (const Track& t : rank.tracks)
      if (t.kind == TrackKind::kDeviceStream) next = std::min(next, t.after_start);
    if (next != std::numeric_limits<TimeNs>::max()) end = next;
    bounds.push_back(std::max(end, bounds.back()));
  }
  const size_t W = step_ids.size();
  Windows win{bounds.data(), W};
  s->lens.assign(static_cast<size_t>(kOutCount) * std::max<size_t>(W, 1), 0);
  int64_t* lens = s->lens.data();

  // Pass 2: merge the streams by start, build the unions, clip them to the
  // step windows.
  if (W > 0) {
    // Items per union (pass 1 counted them per mask).
    const auto& acc_table = AccTable();
    uint64_t acc_items[kAccCount] = {};
    for (uint32_t m = 0; m < kMaskCount; ++m) {
      if (mask_count[m] == 0) continue;
      for (uint32_t accs = acc_table[m]; accs != 0; accs &= accs - 1)
        acc_items[__builtin_ctz(accs)] += mask_count[m];
    }

    // The items of all streams as (at most) two start-ordered runs that
    // the sweep merges; apart, the host waits in start order.
    // Exactly four non-empty runs (a common layout: compute, comm, copy,
    // and one more stream) are merged inside the sweep without any level.
    const bool four = s->run_begin.size() == 4 && s->run_begin[0] < s->run_begin[1] &&
                      s->run_begin[1] < s->run_begin[2] && s->run_begin[2] < s->run_begin[3] &&
                      s->run_begin[3] < n_items;
    // Three to eight runs (the 718B trace: five) are merged shortest first;
    // more by a heap, to one run.
    const size_t runs = s->run_begin.size();
    Run two[2];
    const RankScratch::Item* seq = items_out;
    if (!four && runs > 2 && runs <= 8) {
      s->run_begin.push_back(n_items);
      MergeShortestFirst(items_out, s->run_begin, &s->merged, two);
    } else {
      seq = MergeRuns(items_out, n_items, &s->run_begin, &s->merged, four ? 4 : 2);
      const std::vector<size_t>& rb = s->run_begin;
      const size_t mid = rb.size() > 2 ? rb[1] : rb.back();
      two[0] = {seq + rb.front(), seq + mid};
      two[1] = {seq + mid, seq + rb.back()};
    }
    const std::vector<size_t>& rb = s->run_begin;
    const RankScratch::Item* wseq =
        MergeRuns(waits_out, n_waits, &s->wait_run_begin, &s->merged_waits, 1);

    // The unions, as lists of pieces. The four that most items feed are
    // built together in one pass; the others by a pass each, or shared
    // when they hold the same items (one comm class, syncs only).
    Pieces U[kAccCount];
    auto storage = [&](int a) {
      const size_t need = acc_items[a] + 1;  // one slot per item, the initial piece
      if (s->unions[a].size() < need) s->unions[a].resize(need);
      return s->unions[a].data();
    };
    auto finish = [&](int a, const UnionBuilder& ub) {
      Interval* w = ub.w;
      if (ub.e != kNoTime) *w++ = Interval(ub.s, ub.e);
      const Interval* first = s->unions[a].data();
      // The list starts with the initial piece (ending at -inf) whenever
      // the first item opened a new one: skip it.
      if (w > first && first->second == kNoTime) ++first;
      U[a] = Pieces{first, static_cast<size_t>(w - first)};
    };
    auto item_bit = [](int a) -> uint32_t {
      return a == kAccPp   ? kBitPpRecv
             : a == kAccHw ? kBitHostWait
             : a == kAccHs ? kBitHostSync
                           : kBitClass0 << (a - kAccClass0);
    };
    // Pipeline receives and classes are comm items, host syncs host waits:
    // a union with as many items as that superset has the same items.
    auto superset = [](int a) { return a == kAccHs ? kAccHw : kAccComm; };
    auto shared = [&](int a) { return a != kAccHw && acc_items[a] == acc_items[superset(a)]; };
    uint32_t rare_bits = 0;
    for (int a = kAccPp; a < kAccCount; ++a) {
      if (a == kAccHw || a == kAccHs) continue;  // built from the host waits
      if (acc_items[a] != 0 && !shared(a)) rare_bits |= item_bit(a);
    }
    uint64_t rare_items = 0;
    for (uint32_t m = 0; m < kMaskCount; ++m) rare_items += (m & rare_bits) ? mask_count[m] : 0;
    if (s->rare.size() < rare_items + 1) s->rare.resize(rare_items + 1);
    const RankScratch::Item* rare = s->rare.data();
    size_t n_rare = 0;
    {
      MainUnions main{{storage(kAccCompute)}, {storage(kAccComm)}, {storage(kAccCc)},
                      {storage(kAccBusy)}, s->rare.data(), rare_bits};
      auto sweep2 = [&](const RankScratch::Item* a, const RankScratch::Item* ae,
                        const RankScratch::Item* b, const RankScratch::Item* be) {
        if (rare_bits != 0) {
          SweepMain<true>(a, ae, b, be, &main);
        } else {
          SweepMain<false>(a, ae, b, be, &main);
        }
      };
      if (four) {
        const RankScratch::Item* h[4];
        const RankScratch::Item* e[4];
        for (int r = 0; r < 4; ++r) {
          h[r] = seq + rb[static_cast<size_t>(r)];
          e[r] = seq + rb[static_cast<size_t>(r) + 1];
        }
        if (rare_bits != 0) {
          SweepFour<true>(h, e, &main);
        } else {
          SweepFour<false>(h, e, &main);
        }
        // One run is done; every item left starts at or after the last one
        // taken. The rest: at most three runs, two of them merged first.
        const RankScratch::Item* lh[3];
        const RankScratch::Item* le[3];
        int left = 0;
        for (int r = 0; r < 4; ++r) {
          if (h[r] < e[r] && left < 3) {
            lh[left] = h[r];
            le[left++] = e[r];
          }
        }
        if (left == 3) {
          const size_t n01 = static_cast<size_t>((le[0] - lh[0]) + (le[1] - lh[1]));
          if (s->merged.size() < n01) s->merged.resize(n01);
          RankScratch::Item* m01 = s->merged.data();
          MergeTwo(lh[0], le[0], lh[1], le[1], m01);
          sweep2(m01, m01 + n01, lh[2], le[2]);
        } else if (left == 2) {
          sweep2(lh[0], le[0], lh[1], le[1]);
        } else if (left == 1) {
          sweep2(lh[0], le[0], le[0], le[0]);
        }
      } else {
        sweep2(two[0].b, two[0].e, two[1].b, two[1].e);
      }
      n_rare = main.n_rare;
      finish(kAccCompute, main.compute);
      finish(kAccComm, main.comm);
      finish(kAccCc, main.cc);
      finish(kAccBusy, main.busy);
    }
    UnionBuilder built{nullptr};
    UnionOf(wseq, n_waits, 0, storage(kAccHw), &built);
    finish(kAccHw, built);
    if (acc_items[kAccHs] != 0 && !shared(kAccHs)) {
      UnionOf(wseq, n_waits, kBitHostSync, storage(kAccHs), &built);
      finish(kAccHs, built);
    }
    for (int a = kAccPp; a < kAccCount; ++a) {
      if (a == kAccHw || (a == kAccHs && acc_items[a] != 0 && !shared(a))) continue;
      if (acc_items[a] == 0) {
        U[a] = Pieces{nullptr, 0};
      } else if (shared(a)) {
        U[a] = U[superset(a)];
      } else {
        UnionOf(rare, n_rare, item_bit(a), storage(a), &built);
        finish(a, built);
      }
    }
    for (int a = 0; a < kAccCount; ++a) {
      if (!((kMeasured >> a) & 1u)) continue;
      size_t cursor = 0;
      int64_t* l = lens + static_cast<size_t>(a) * W;
      for (size_t i = 0; i < U[a].n; ++i) Emit(cursor, U[a].p[i].first, U[a].p[i].second, win, l);
    }
    // Whole-rank pieces of COMPUTE and of COMPUTE ∪ COMM, unclipped: the
    // Ascend profiler's Overlap Analysis (segments of positive length).
    OverlapNs& ov = out.overlap;
    for (size_t i = 0; i < U[kAccCompute].n; ++i) {
      const auto [ps, pe] = U[kAccCompute].p[i];
      if (pe > ps) {
        ov.computing += pe - ps;
        ++ov.computing_segments;
      }
    }
    int64_t cc_len = 0;
    TimeNs cc_first = kNoTime, cc_last = kNoTime;
    for (size_t i = 0; i < U[kAccCc].n; ++i) {
      const auto [ps, pe] = U[kAccCc].p[i];
      if (pe > ps) {
        cc_len += pe - ps;
        if (cc_first == kNoTime) cc_first = ps;
        else ++ov.free_segments;
        cc_last = pe;
      }
    }
    if (cc_first != kNoTime) {
      // The span runs over every device task (copies and syncs included):
      // what lies outside COMPUTE ∪ COMM at its ends is Free too.
      TimeNs first = std::min(cc_first, idle_task_first), last = std::max(cc_last, idle_task_last);
      if (U[kAccBusy].n > 0) {
        first = std::min(first, U[kAccBusy].p[0].first);
        last = std::max(last, U[kAccBusy].p[U[kAccBusy].n - 1].second);
      }
      ov.free_segments += (first < cc_first) + (last > cc_last);
      ov.comm_not_overlapped = cc_len - ov.computing;
      ov.free = (last - first) - cc_len;
    }
    auto out_lens = [&](int o) { return lens + static_cast<size_t>(o) * W; };
    Subtract(U[kAccHw], U[kAccBusy], win, out_lens(kOutHostBound));
    Subtract(U[kAccHs], U[kAccBusy], win, out_lens(kOutHostSync));
    Subtract(U[kAccPp], U[kAccCompute], win, out_lens(kOutBubble));
    ops::AttributeHostBound(wseq, n_waits, U[kAccBusy].p, U[kAccBusy].n, bounds.data(),
                            step_ids.data(), W, &s->wait_by_name, &out.host_bound_by_op);
    for (int c = 0; c < kCommClassCount; ++c) {
      Subtract(U[kAccClass0 + c], U[kAccCompute], win, out_lens(kOutClassExposed0 + c));
    }
  }

  out.steps.reserve(W);
  for (size_t w = 0; w < W; ++w) {
    if (step_ids[w] < 0) continue;  // a gap between steps
    auto len = [&](int a) { return lens[static_cast<size_t>(a) * W + w]; };
    StepNs& st = out.steps.emplace_back();
    st.step = step_ids[w];
    st.start = bounds[w];
    BreakdownNs& b = st.b;
    b.span = bounds[w + 1] - bounds[w];
    b.compute = len(kAccCompute);
    b.comm = len(kAccComm);
    b.comm_exposed = len(kAccCc) - b.compute;
    b.comm_overlapped = b.comm - b.comm_exposed;
    b.copy_exposed = len(kAccBusy) - len(kAccCc);
    b.free = b.span - len(kAccBusy);
    b.host_bound = len(kOutHostBound);
    b.host_bound_sync = len(kOutHostSync);
    b.host_bound_dispatch = b.host_bound - b.host_bound_sync;
    b.bubble = len(kOutBubble);
    for (int c = 0; c < kCommClassCount; ++c) {
      st.cls[c].total = len(kAccClass0 + c);
      st.cls[c].exposed = len(kOutClassExposed0 + c);
      out.cls[c].total += st.cls[c].total;
      out.cls[c].exposed += st.cls[c].exposed;
    }
    out.total.Add(b);
  }

  out.has_experts = RankExpertImbalance(rank, &out.expert_steps, &out.experts);

  NearestRankPercentiles(s->delays.data(), n_delays, &s->selected, &out.delay_p50,
                         &out.delay_p90, &out.delay_p99, delay_max);

  // Memory: peaks of the allocated / reserved counters, categories at the
  // allocated peak (reserved when nothing else is known).
  const Track* alloc_track = nullptr;
  for (const Track& t : rank.tracks) {
    if (t.kind != TrackKind::kCounter || t.sample_ts.empty()) continue;
    if (t.counter != CounterKind::kMemAllocated && t.counter != CounterKind::kMemReserved) continue;
    size_t best = 0;
    for (size_t i = 1; i < t.sample_value.size(); ++i) {
      if (t.sample_value[i] > t.sample_value[best]) best = i;
    }
    auto peak = static_cast<int64_t>(t.sample_value[best]);
    auto& slot = t.counter == CounterKind::kMemAllocated ? out.memory.peak_allocated
                                                         : out.memory.peak_reserved;
    if (!slot || peak > *slot) {
      slot = peak;
      if (t.counter == CounterKind::kMemAllocated) {
        alloc_track = &t;
        out.memory.peak_time = t.sample_ts[best];
      } else if (!alloc_track) {
        out.memory.peak_time = t.sample_ts[best];
      }
    }
  }
  if (out.memory.peak_time) {
    const TimeNs at = *out.memory.peak_time;
    for (const Track& t : rank.tracks) {
      if (t.kind != TrackKind::kCounter || t.sample_ts.empty()) continue;
      if (t.counter < CounterKind::kMemWeights) continue;
      auto it = std::upper_bound(t.sample_ts.begin(), t.sample_ts.end(), at);
      int64_t v = 0;
      if (it != t.sample_ts.begin()) {
        v = static_cast<int64_t>(t.sample_value[static_cast<size_t>(it - t.sample_ts.begin()) - 1]);
      }
      auto found = std::find_if(out.memory.at_peak.begin(), out.memory.at_peak.end(),
                                [&](const auto& p) { return p.first == t.counter; });
      if (found == out.memory.at_peak.end()) {
        out.memory.at_peak.emplace_back(t.counter, v);
      } else {
        found->second += v;
      }
    }
  }
  return out;
}

}  // namespace moetrace
