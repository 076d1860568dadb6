#include "analyzer/pass_one.h"

#include <algorithm>
#include <span>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "analyzer/comm_class.h"

namespace moetrace::rank_pass {
namespace {

// The sum of an all-to-all's receive splits (its received load), four at a
// time in two SSE2 accumulators (the x86-64 baseline): the one-add-per-load
// loop -O2 made was ~1.5% of `analyze`'s samples on the 718B trace.
// Unsigned sums wrap alike in any order: the value is the scalar loop's.
uint64_t SumSplits(std::span<const uint64_t> v) {
  const uint64_t* p = v.data();
  const size_t n = v.size();
  size_t i = 0;
  uint64_t sum = 0;
#if defined(__SSE2__)
  if (n >= 4) {
    __m128i a = _mm_setzero_si128(), b = _mm_setzero_si128();
    for (; i + 4 <= n; i += 4) {
      a = _mm_add_epi64(a, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)));
      b = _mm_add_epi64(b, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 2)));
    }
    alignas(16) uint64_t lanes[2];
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes), _mm_add_epi64(a, b));
    sum = lanes[0] + lanes[1];
  }
#endif
  for (; i < n; ++i) sum += p[i];
  return sum;
}

// True when host thread `thread` ended a sync in [lo, hi).
bool SyncedIn(const std::vector<std::vector<TimeNs>>& sync_ends, int32_t thread, TimeNs lo, TimeNs hi) {
  if (thread < 0) return false;
  const auto& v = sync_ends[static_cast<size_t>(thread)];
  auto it = std::lower_bound(v.begin(), v.end(), lo);
  return it != v.end() && *it < hi;
}

// A communication op's item bits beyond kBitComm (its class, a pipeline
// receive), and its arrival for cross-rank matching. Out of the op loop:
// its many values would take registers from the loop's hot ones.
__attribute__((noinline)) uint32_t CommBits(const Track& t, size_t i, Category cat, TimeNs start, TimeNs end,
                                            PassOne* p) {
  const Rank& rank = *p->rank;
  RankScratch* s = p->s;
  const EventTable& ev = t.events;
  const int32_t ci = ev.comm[i];
  CommClass cls;
  bool recv = false;
  if (ci >= 0 && static_cast<size_t>(ci) < t.comms.size()) {
    const CommRecord& rec = t.comms[static_cast<size_t>(ci)];
    if (rec.comm_class != CommClass::kOther) {
      cls = rec.comm_class;
    } else {
      int8_t& cached = s->group_class[rec.group < s->group_class.size() ? rec.group : 0];
      CommClass by_group = CommClass::kOther;
      if (rec.group != 0) {
        if (cached < 0) cached = static_cast<int8_t>(ClassFromGroupName(rank.strings.Get(rec.group)));
        by_group = static_cast<CommClass>(cached);
      }
      cls = by_group != CommClass::kOther ? by_group : DeriveCommClass(rec, "", ev.phase[i], ev.layer[i]);
    }
    recv = cat == Category::kP2P && rec.kind == CollectiveKind::kRecv;
    if (rec.sequence >= 0 && rec.group != 0) {
      Arrival a;
      a.group = rec.group;
      a.name = ev.name[i];
      a.sequence = rec.sequence;
      a.dur = end - start;
      a.group_size = rec.group_size;
      a.layer = ev.layer[i];
      a.step = ev.step[i];
      a.kind = rec.kind;
      if ((rec.kind == CollectiveKind::kAllToAll || rec.kind == CollectiveKind::kAllToAllV) &&
          !rec.recv_splits.empty()) {
        a.recv_load = static_cast<int64_t>(SumSplits(t.Splits(rec.recv_splits)));
      }
      p->arrivals->push_back(a);
    }
  } else {
    const StringId n = ev.name[i];
    int8_t& cached = s->name_class[n < s->name_class.size() ? n : 0];
    std::string_view name = rank.strings.Get(n);
    if (ev.phase[i] != Phase::kNone || ev.layer[i] >= 0 || cached < 0) {
      cls = DeriveCommClassFromName(name, cat, ev.phase[i], ev.layer[i]);
      if (ev.phase[i] == Phase::kNone && ev.layer[i] < 0) cached = static_cast<int8_t>(cls);
    } else {
      cls = static_cast<CommClass>(cached);
    }
    recv = cat == Category::kP2P && IsRecvName(name);
  }
  return (kBitClass0 << static_cast<int>(cls)) | (recv ? kBitPpRecv : 0u);
}

// The marker of an op's `when` (its launch, else its start): the last
// marker starting at or before it, cached as the window of times that find
// the same one. Launches come in nearly increasing order: most ops stay in
// the window, one test each.
struct MarkerWindow {
  TimeNs lo = std::numeric_limits<TimeNs>::max(), hi = kNoTime;  // [lo, hi): empty at first
  TimeNs end = kNoTime;  // the marker's end
  int32_t step = -1;     // its step; -1 before the first marker

  // Moves the window to the marker of `when`. Without markers every op is
  // in `unmarked`, the step of a rank that has none.
  __attribute__((noinline)) void Find(const std::vector<Marker>& markers, TimeNs when, int32_t unmarked) {
    const size_t nm = markers.size();
    if (nm == 0) {
      lo = kNoTime;
      hi = end = std::numeric_limits<TimeNs>::max();
      step = unmarked;
      return;
    }
    auto it = std::upper_bound(markers.begin(), markers.end(), when,
                               [](TimeNs v, const Marker& m) { return v < m.ts; });
    const size_t at = static_cast<size_t>(it - markers.begin());  // markers at or before `when`
    if (at == 0) {
      lo = kNoTime;
      hi = markers[0].ts;
      step = -1;
      return;
    }
    lo = markers[at - 1].ts;
    hi = at < nm ? markers[at].ts : std::numeric_limits<TimeNs>::max();
    end = markers[at - 1].end;
    step = markers[at - 1].step;
  }
};

}  // namespace

void HostPassThread(const EventTable& ev, int32_t thread, LaunchTable* launches,
                                              std::vector<TimeNs>* sync_ends, std::vector<Marker>* markers) {
  const size_t n = ev.size();
  const Category* cat = ev.category.data();
  const uint16_t* flags = ev.flags.data();
  const int64_t* corr = ev.correlation.data();
  const TimeNs* ts = ev.ts.data();
  const TimeNs* dur = ev.dur.data();
  const int32_t* step = ev.step.data();
  for (size_t i = 0; i < n; ++i) {
    if (i + 16 < n) launches->PrefetchAll(corr[i + 16]);
    const Category c = cat[i];
    const TimeNs d = std::max<TimeNs>(dur[i], 0);
    const TimeNs end = ts[i] + d;
    if (c == Category::kLaunch && corr[i] >= 0) launches->Add(corr[i], end, d, thread);
    const uint16_t f = flags[i];
    if ((c == Category::kSync) | ((f & (kFlagBlocking | kFlagStepMarker)) != 0)) [[unlikely]] {
      if (c == Category::kSync || (f & kFlagBlocking)) sync_ends->push_back(end);
      if ((f & kFlagStepMarker) && step[i] >= 0) markers->push_back({ts[i], end, step[i]});
    }
  }
}

template <bool kSorted>
void PassOneStream(const Track& t, const uint32_t* order, PassOne* p) {
  const EventTable& ev = t.events;
  const LaunchTable& launches = *p->launches;
  const std::vector<Marker>& markers = *p->markers;
  const TimeNs* col_ts = ev.ts.data();
  const TimeNs* col_dur = ev.dur.data();
  const Category* col_cat = ev.category.data();
  const int64_t* col_corr = ev.correlation.data();
  const int32_t* col_step = ev.step.data();
  RankScratch::Item* const items_out = p->items_out;
  int64_t* const op_host_out = p->op_host_out;
  uint64_t* const mask_count = p->mask_count;
  size_t n_items = p->n_items;
  int64_t* delay_w = p->delays_out + p->n_delays;
  int64_t delay_max = p->delay_max;
  MarkerWindow win;
  // The step whose bounds the ops are widening, kept here until another
  // step comes (-1: none).
  int32_t cur = -1;
  TimeNs cur_first = 0, cur_last = 0;
  auto leave_step = [&] {
    if (cur < 0) return;
    p->step_first[static_cast<size_t>(cur)] = cur_first;
    p->step_last[static_cast<size_t>(cur)] = cur_last;
  };
  // A cut trace's stream starts after the ops it dropped (Track::prior_end,
  // INT64_MIN = kNoTime when uncut).
  TimeNs max_end = t.prior_end;
  const size_t n_ev = ev.size();
  for (size_t k = 0; k < n_ev; ++k) {
    const size_t i = kSorted ? k : order[k];
    // Slots are far apart in a large table: fetch ahead of the join.
    if (kSorted && k + 16 < n_ev) launches.Prefetch(col_corr[k + 16]);
    const Category cat = col_cat[i];
    uint32_t mask;
    switch (cat) {
      case Category::kCompute: mask = kBitCompute; break;
      case Category::kCollective:
      case Category::kP2P: mask = kBitComm; break;
      case Category::kCopy: mask = kBitCopy; break;
      default:  // syncs are waits, markers cost nothing
        p->idle_task_first = std::min(p->idle_task_first, col_ts[i]);
        p->idle_task_last = std::max(p->idle_task_last, col_ts[i] + std::max<TimeNs>(col_dur[i], 0));
        continue;
    }
    const TimeNs start = col_ts[i];
    const TimeNs end = start + std::max<TimeNs>(col_dur[i], 0);
    if (mask == kBitComm) mask |= CommBits(t, i, cat, start, end, p);

    // Launch join, host wait, step.
    const LaunchTable::Threads* th;
    TimeNs host = -1;
    const TimeNs L = launches.Find(col_corr[i], &th, &host);
    if (L != kNoTime) {
      const int64_t delay = std::max<TimeNs>(0, start - L);
      *delay_w++ = delay;
      delay_max = std::max(delay_max, delay);
    }
    // L > max_end also says L is not kNoTime (the smallest time).
    if (start > max_end && L > max_end && max_end != kNoTime) [[unlikely]] {
      uint32_t wmask = kBitHostWait;
      const int32_t th_first = th->first, th_last = th->last;
      if (SyncedIn(*p->sync_ends, th_last, max_end, L) ||
          (th_first != th_last && SyncedIn(*p->sync_ends, th_first, max_end, L)))
        wmask |= kBitHostSync;
      p->waits_out[p->n_waits++] = {max_end, std::min(start, L), wmask, ev.name[i]};
      ++mask_count[wmask & (kMaskCount - 1)];
    }
    // The item's name slot (read for host waits only) holds the op's
    // index in the table here, for the operator view's fold.
    op_host_out[n_items] = host;
    items_out[n_items++] = {start, end, mask, static_cast<uint32_t>(i)};
    ++mask_count[mask & (kMaskCount - 1)];
    max_end = std::max(max_end, end);

    int32_t step = col_step[i];
    if (step < 0) {
      const TimeNs when = L != kNoTime ? L : start;
      if (!(win.lo <= when && when < win.hi)) [[unlikely]] win.Find(markers, when, p->unmarked_step);
      if (win.step >= 0 && when <= win.end) step = win.step;
    }
    if (static_cast<uint32_t>(step) < (1u << 20)) [[likely]] {
      if (step != cur) [[unlikely]] {
        leave_step();
        const size_t s = static_cast<size_t>(step);
        if (s >= p->step_first.size()) {
          p->step_first.resize(s + 1, std::numeric_limits<TimeNs>::max());
          p->step_last.resize(s + 1, kNoTime);
        }
        cur = step;
        cur_first = p->step_first[s];
        cur_last = p->step_last[s];
      }
      cur_first = std::min(cur_first, start);
      cur_last = std::max(cur_last, end);
    } else if (step < 0) {
      p->stepless_starts.push_back(start);
    }
  }
  // A cut stream's dropped next op (Track::after_start): its host wait, as
  // the loop above would find it in the whole trace.
  if (t.after_start != std::numeric_limits<TimeNs>::max() && t.after_start > max_end &&
      t.after_launch > max_end && max_end != kNoTime) [[unlikely]] {
    const uint32_t wmask = kBitHostWait | (t.after_sync >= max_end ? kBitHostSync : 0u);
    p->waits_out[p->n_waits++] = {max_end, std::min(t.after_start, t.after_launch), wmask, t.after_name};
    ++mask_count[wmask & (kMaskCount - 1)];
  }
  leave_step();
  p->n_items = n_items;
  p->n_delays = static_cast<size_t>(delay_w - p->delays_out);
  p->delay_max = delay_max;
}

template void PassOneStream<true>(const Track&, const uint32_t*, PassOne*);
template void PassOneStream<false>(const Track&, const uint32_t*, PassOne*);

}  // namespace moetrace::rank_pass
