#include "formats/trace_selection.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "formats/decimal.h"
#include "formats/errors.h"

namespace moetrace {
namespace {

int32_t ParseId(std::string_view s, std::string_view spec, const char* what) {
  int32_t v = -1;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < 0) {
    ThrowInputError(what, std::string(spec), "'" + std::string(s) + "' is not a number >= 0");
  }
  return v;
}

// "1.5ms" -> 1500000; false when not a number with a known unit.
bool ParseTime(std::string_view s, int64_t* ns) {
  static const std::pair<std::string_view, int> kUnits[] = {
      {"ns", 0}, {"us", 3}, {"ms", 6}, {"s", 9}};
  int scale = 0;
  for (const auto& [unit, digits] : kUnits) {
    if (s.size() > unit.size() && s.substr(s.size() - unit.size()) == unit &&
        (unit != "s" || (s[s.size() - 2] >= '0' && s[s.size() - 2] <= '9') ||
         s[s.size() - 2] == '.')) {
      s.remove_suffix(unit.size());
      scale = digits;
      break;
    }
  }
  return ParseScaledDecimal(s, scale, ns);
}

// Kept time of a rank: the selected steps' marker windows (all time when
// no step is selected), cut to the window.
struct Windows {
  std::vector<std::pair<int64_t, int64_t>> spans;  // sorted [begin, end)
  bool Overlaps(int64_t b, int64_t e) const {
    for (const auto& [lo, hi] : spans) {
      // A zero-length event at lo is inside.
      if (b < hi && (e > lo || (e == b && b >= lo))) return true;
    }
    return false;
  }
  bool Holds(int64_t t) const {
    for (const auto& [lo, hi] : spans)
      if (t >= lo && t < hi) return true;
    return false;
  }
};

// A host sync (or blocking call) that ends in the kept time is kept whatever
// its step: the host wait it ends belongs to the kept step, and the analyzer
// tells a sync-bound wait from a dispatch-bound one by it (METRICS.md,
// host_bound_sync). The loss read of step N typically ends as step N+1
// begins.
bool EndsHostWaitInside(const Track& t, size_t i, const Windows& w) {
  const EventTable& e = t.events;
  return t.kind == TrackKind::kHostThread &&
         (e.category[i] == Category::kSync || (e.flags[i] & kFlagBlocking)) && w.Holds(e.End(i));
}

Windows KeptTime(const TraceSelection& sel, const Rank& rank) {
  Windows w;
  if (sel.steps.empty()) {
    w.spans.emplace_back(sel.from_ns, sel.to_ns);
    return w;
  }
  for (const Track& t : rank.tracks) {
    const EventTable& e = t.events;
    for (size_t i = 0; i < e.size(); ++i) {
      if (!(e.flags[i] & kFlagStepMarker)) continue;
      if (!std::binary_search(sel.steps.begin(), sel.steps.end(), e.step[i])) continue;
      const int64_t lo = std::max(e.ts[i], sel.from_ns), hi = std::min(e.End(i), sel.to_ns);
      if (lo < hi) w.spans.emplace_back(lo, hi);
    }
  }
  std::sort(w.spans.begin(), w.spans.end());
  return w;
}

// Track::prior_end and after_start of a stream cut to `kept`, from the ops
// the analyzer times (pass_one.cc: compute, comm, copy) that the cut drops:
// the latest end of those before the first kept one in (ts, index) order,
// where the whole trace's host wait of that op starts, and the earliest
// start of those after the last kept one, where the whole trace's window of
// the last kept step ends (the next step's first op). Ops dropped between
// kept ones (a cut that skips a step) are neither. A track cut twice keeps
// the outer bounds of the first cut when nothing more is dropped. Returns
// the row of the op that now starts at after_start (the track's size when
// it is the first cut's, or none).
size_t CutBounds(Track* t, const std::vector<uint8_t>& kept) {
  const EventTable& e = t->events;
  auto timed = [&](size_t i) {
    const Category c = e.category[i];
    return c == Category::kCompute || c == Category::kCollective || c == Category::kP2P || c == Category::kCopy;
  };
  auto before = [&](size_t a, size_t b) { return e.ts[a] < e.ts[b] || (e.ts[a] == e.ts[b] && a < b); };
  const size_t none = e.size();
  size_t first = none, last = none, next = none;
  for (size_t i = 0; i < e.size(); ++i) {
    if (!kept[i] || !timed(i)) continue;
    if (first == none || before(i, first)) first = i;
    if (last == none || before(last, i)) last = i;
  }
  for (size_t i = 0; i < e.size(); ++i) {
    if (kept[i] || !timed(i)) continue;
    if (first == none || before(i, first)) t->prior_end = std::max(t->prior_end, e.ts[i] + std::max<TimeNs>(e.dur[i], 0));
    if (last != none && before(last, i) && (next == none || before(i, next))) next = i;
  }
  if (next != none && e.ts[next] < t->after_start) {
    t->after_start = e.ts[next];
    return next;
  }
  return none;
}

// The launch end and launch threads of the op at each cut stream's
// after_start, and the last host sync before that launch on those threads,
// as the analyzer joins them (launch_table.h: the latest end among the
// kLaunch events of its correlation id; the threads of the first and of
// the latest; syncs as pass_one.cc's HostPassThread counts them). Read from
// the rank before any track is cut: that launch belongs to the next step.
void SetAfterLaunches(const Rank& rank, const std::vector<size_t>& next_row, const std::vector<Track*>& cut) {
  struct Want {
    int64_t corr;
    Track* track;
    TimeNs end = INT64_MIN;
    size_t first = SIZE_MAX, last = SIZE_MAX;
  };
  std::vector<Want> want;
  for (size_t k = 0; k < cut.size(); ++k) {
    Track* t = cut[k];
    const size_t i = next_row[k];
    if (i >= t->events.size()) continue;
    t->after_launch = INT64_MIN;
    t->after_sync = INT64_MIN;
    t->after_name = t->events.name[i];
    if (t->events.correlation[i] >= 0) want.push_back({t->events.correlation[i], t});
  }
  if (want.empty()) return;
  std::sort(want.begin(), want.end(), [](const Want& a, const Want& b) { return a.corr < b.corr; });
  for (size_t ti = 0; ti < rank.tracks.size(); ++ti) {
    const Track& h = rank.tracks[ti];
    if (h.kind != TrackKind::kHostThread) continue;
    const EventTable& e = h.events;
    for (size_t i = 0; i < e.size(); ++i) {
      if (e.category[i] != Category::kLaunch || e.correlation[i] < 0) continue;
      auto it = std::lower_bound(want.begin(), want.end(), e.correlation[i],
                                 [](const Want& w, int64_t c) { return w.corr < c; });
      for (; it != want.end() && it->corr == e.correlation[i]; ++it) {
        const TimeNs end = e.ts[i] + std::max<TimeNs>(e.dur[i], 0);
        if (it->first == SIZE_MAX) it->first = ti;
        if (end >= it->end) it->end = end, it->last = ti;
      }
    }
  }
  // The host syncs' ends of each launching thread, gathered once.
  std::vector<std::vector<TimeNs>> sync_ends(rank.tracks.size());
  std::vector<uint8_t> gathered(rank.tracks.size(), 0);
  auto last_sync_before = [&](size_t ti, TimeNs at) {
    std::vector<TimeNs>& ends = sync_ends[ti];
    if (!gathered[ti]) {
      gathered[ti] = 1;
      const EventTable& e = rank.tracks[ti].events;
      for (size_t i = 0; i < e.size(); ++i) {
        if (e.category[i] == Category::kSync || (e.flags[i] & kFlagBlocking)) {
          ends.push_back(e.ts[i] + std::max<TimeNs>(e.dur[i], 0));
        }
      }
      std::sort(ends.begin(), ends.end());
    }
    auto it = std::lower_bound(ends.begin(), ends.end(), at);
    return it == ends.begin() ? INT64_MIN : *(it - 1);
  };
  for (const Want& w : want) {
    if (w.first == SIZE_MAX) continue;
    w.track->after_launch = w.end;
    w.track->after_sync = last_sync_before(w.last, w.end);
    if (w.first != w.last) w.track->after_sync = std::max(w.track->after_sync, last_sync_before(w.first, w.end));
  }
}

std::vector<uint8_t> KeptRows(const TraceSelection& sel, const Windows& w, const Track& t) {
  const EventTable& e = t.events;
  std::vector<uint8_t> kept(e.size(), 0);
  for (size_t i = 0; i < e.size(); ++i) {
    bool keep;
    if (!sel.steps.empty() && e.step[i] != kNone) {
      keep = std::binary_search(sel.steps.begin(), sel.steps.end(), e.step[i]) &&
             e.ts[i] < sel.to_ns && (e.End(i) > sel.from_ns || e.ts[i] >= sel.from_ns);
    } else {
      keep = w.Overlaps(e.ts[i], e.End(i));
    }
    kept[i] = keep || EndsHostWaitInside(t, i, w);
  }
  return kept;
}

void FilterTrack(const Windows& w, const std::vector<uint8_t>& kept, Track* t) {
  EventTable& e = t->events;
  std::vector<int32_t> comm_map(t->comms.size(), kNone);
  std::vector<CommRecord> comms;
  size_t out = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    if (!kept[i]) continue;
    Event ev = e.Get(i);
    if (ev.comm != kNone && size_t(ev.comm) < t->comms.size()) {
      int32_t& m = comm_map[size_t(ev.comm)];
      if (m == kNone) {
        m = int32_t(comms.size());
        comms.push_back(t->comms[size_t(ev.comm)]);
      }
      ev.comm = m;
    }
    // Rows move down in place: row `out` <= i was read already.
    e.ts[out] = ev.ts, e.dur[out] = ev.dur, e.name[out] = ev.name;
    e.category[out] = ev.category, e.phase[out] = ev.phase, e.flags[out] = ev.flags;
    e.correlation[out] = ev.correlation, e.step[out] = ev.step;
    e.micro_batch[out] = ev.micro_batch, e.layer[out] = ev.layer, e.comm[out] = ev.comm;
    e.flops[out] = ev.flops, e.bytes[out] = ev.bytes;
    if (!e.shape.empty()) e.shape[out] = ev.shape;
    ++out;
  }
  e.Resize(out);
  t->comms = std::move(comms);
  // Counters: the samples inside the kept time and the one in force at the
  // start of each kept span.
  if (!t->sample_ts.empty()) {
    std::vector<TimeNs> ts;
    std::vector<double> v;
    for (size_t i = 0; i < t->sample_ts.size(); ++i) {
      const int64_t at = t->sample_ts[i];
      const int64_t next = i + 1 < t->sample_ts.size() ? t->sample_ts[i + 1] : INT64_MAX;
      bool keep = false;
      for (const auto& [lo, hi] : w.spans) keep |= at < hi && next > lo;
      if (keep) {
        ts.push_back(at);
        v.push_back(t->sample_value[i]);
      }
    }
    t->sample_ts = std::move(ts);
    t->sample_value = std::move(v);
  }
}

}  // namespace

std::vector<int32_t> ParseIdList(std::string_view spec, const char* what) {
  std::vector<int32_t> out;
  std::string_view rest = spec;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view part = rest.substr(0, comma);
    const size_t dash = part.find('-');
    if (dash == std::string_view::npos) {
      out.push_back(ParseId(part, spec, what));
    } else {
      const int32_t a = ParseId(part.substr(0, dash), spec, what);
      const int32_t b = ParseId(part.substr(dash + 1), spec, what);
      if (b < a) ThrowInputError(what, std::string(spec), "range end before its start");
      if (int64_t(b) - a > (int64_t(1) << 24)) {
        ThrowInputError(what, std::string(spec), "range of more than 2^24 ids");
      }
      for (int32_t r = a; r <= b; ++r) out.push_back(r);
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
    if (rest.empty()) ThrowInputError(what, std::string(spec), "empty item after ','");
  }
  if (out.empty()) ThrowInputError(what, std::string(spec), "expected ids such as 0-7,64");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void ParseWindow(std::string_view spec, TraceSelection* sel) {
  const size_t colon = spec.find(':');
  if (colon == std::string_view::npos) {
    ThrowInputError("--window", std::string(spec), "expected FROM:TO (e.g. 1.5s:1.6s)");
  }
  const std::string_view from = spec.substr(0, colon), to = spec.substr(colon + 1);
  if (!from.empty() && !ParseTime(from, &sel->from_ns)) {
    ThrowInputError("--window", std::string(spec), "'" + std::string(from) +
                                                       "' is not a time (ns, us, ms or s)");
  }
  if (!to.empty() && !ParseTime(to, &sel->to_ns)) {
    ThrowInputError("--window", std::string(spec), "'" + std::string(to) +
                                                       "' is not a time (ns, us, ms or s)");
  }
  if (sel->to_ns <= sel->from_ns) {
    ThrowInputError("--window", std::string(spec), "the window ends before it starts");
  }
}

void FilterRankEvents(const TraceSelection& sel, Rank* rank) {
  if (sel.steps.empty() && sel.from_ns == INT64_MIN && sel.to_ns == INT64_MAX) return;
  const Windows w = KeptTime(sel, *rank);
  std::vector<std::vector<uint8_t>> kept(rank->tracks.size());
  std::vector<Track*> cut;
  std::vector<size_t> next_row;
  for (size_t i = 0; i < rank->tracks.size(); ++i) {
    Track& t = rank->tracks[i];
    kept[i] = KeptRows(sel, w, t);
    if (t.kind != TrackKind::kDeviceStream) continue;
    cut.push_back(&t);
    next_row.push_back(CutBounds(&t, kept[i]));
  }
  SetAfterLaunches(*rank, next_row, cut);
  for (size_t i = 0; i < rank->tracks.size(); ++i) FilterTrack(w, kept[i], &rank->tracks[i]);
  std::erase_if(rank->routing, [&](const RoutingRecord& r) {
    if (!sel.steps.empty() && r.step != kNone) {
      return !std::binary_search(sel.steps.begin(), sel.steps.end(), r.step);
    }
    return !w.Overlaps(r.ts, r.ts);
  });
}

namespace {

class SelectedSource : public TraceSource {
 public:
  SelectedSource(std::unique_ptr<TraceSource> source, TraceSelection sel,
                 std::vector<size_t> indices)
      : source_(std::move(source)), sel_(std::move(sel)), indices_(std::move(indices)) {
    metadata_ = source_->metadata();
    // Labelled figures of the selected ranks and steps only: a figure summed
    // over a run's steps does not describe some of them, and none describes
    // a time window, which may cut any step.
    const bool window = sel_.from_ns != INT64_MIN || sel_.to_ns != INT64_MAX;
    auto unselected = [&](const LabeledValue& l) {
      if (!sel_.ranks.empty() && !std::binary_search(sel_.ranks.begin(), sel_.ranks.end(), l.rank)) {
        return true;
      }
      if (window) return true;
      if (sel_.steps.empty()) return false;
      return l.step == kNone || !std::binary_search(sel_.steps.begin(), sel_.steps.end(), l.step);
    };
    std::erase_if(metadata_.ground_truth, unselected);
    std::erase_if(metadata_.reference, unselected);
  }
  const Metadata& metadata() const override { return metadata_; }
  size_t rank_count() const override { return indices_.size(); }
  Rank ReadRank(size_t i) const override {
    Rank r;
    ReadRankInto(i, &r);
    return r;
  }
  void ReadRankInto(size_t i, Rank* out) const override {
    source_->ReadRankInto(indices_.at(i), out);
    FilterRankEvents(sel_, out);
  }
  int32_t RankId(size_t i) const override { return source_->RankId(indices_.at(i)); }
  uint64_t RankBytes(size_t i) const override { return source_->RankBytes(indices_.at(i)); }
  std::string RankPath(size_t i) const override { return source_->RankPath(indices_.at(i)); }

 private:
  std::unique_ptr<TraceSource> source_;
  TraceSelection sel_;
  std::vector<size_t> indices_;
  Metadata metadata_;
};

}  // namespace

std::unique_ptr<TraceSource> SelectFrom(std::unique_ptr<TraceSource> source,
                                        const TraceSelection& sel) {
  if (sel.SelectsAll()) return source;
  std::vector<size_t> indices;
  int32_t lo = INT32_MAX, hi = INT32_MIN;
  for (size_t i = 0; i < source->rank_count(); ++i) {
    if (sel.ranks.empty()) {
      indices.push_back(i);
      continue;
    }
    int32_t id = source->RankId(i);
    if (id == kNone) id = source->ReadRank(i).rank;  // the id is only known by reading
    lo = std::min(lo, id);
    hi = std::max(hi, id);
    if (std::binary_search(sel.ranks.begin(), sel.ranks.end(), id)) indices.push_back(i);
  }
  if (indices.empty()) {
    ThrowInputError("--ranks", "",
                    source->rank_count() == 0
                        ? std::string("the input has no ranks")
                        : "no rank of the input has a selected id (its ids are " +
                              std::to_string(lo) + ".." + std::to_string(hi) + ")");
  }
  return std::make_unique<SelectedSource>(std::move(source), sel, std::move(indices));
}

}  // namespace moetrace
