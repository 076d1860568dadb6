#include "formats/trace.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace moetrace {
namespace {

template <typename T>
void Permute(std::vector<T>& v, const std::vector<uint32_t>& order) {
  std::vector<T> out;
  out.reserve(v.size());
  for (uint32_t i : order) out.push_back(v[i]);
  v.swap(out);
}

}  // namespace

std::string_view CategoryName(Category c) {
  switch (c) {
    case Category::kCompute: return "compute";
    case Category::kCollective: return "collective";
    case Category::kP2P: return "p2p";
    case Category::kCopy: return "copy";
    case Category::kLaunch: return "launch";
    case Category::kHostOp: return "host_op";
    case Category::kSync: return "sync";
    case Category::kMarker: return "marker";
  }
  return "unknown";
}

bool ParseCategory(std::string_view name, Category* out) {
  for (int i = 0; i < kCategoryCount; ++i) {
    if (CategoryName(static_cast<Category>(i)) == name) {
      *out = static_cast<Category>(i);
      return true;
    }
  }
  return false;
}

std::string_view PhaseName(Phase p) {
  switch (p) {
    case Phase::kNone: return "none";
    case Phase::kForward: return "forward";
    case Phase::kBackward: return "backward";
    case Phase::kRecompute: return "recompute";
    case Phase::kOptimizer: return "optimizer";
  }
  return "unknown";
}

std::string_view CommClassName(CommClass c) {
  switch (c) {
    case CommClass::kOther: return "other";
    case CommClass::kEP: return "EP";
    case CommClass::kTP: return "TP";
    case CommClass::kPP: return "PP";
    case CommClass::kDP: return "DP";
  }
  return "other";
}

std::string_view CollectiveKindName(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::kNone: return "none";
    case CollectiveKind::kAllToAll: return "all_to_all";
    case CollectiveKind::kAllToAllV: return "all_to_allv";
    case CollectiveKind::kAllReduce: return "all_reduce";
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kBroadcast: return "broadcast";
    case CollectiveKind::kReduce: return "reduce";
    case CollectiveKind::kBarrier: return "barrier";
    case CollectiveKind::kSend: return "send";
    case CollectiveKind::kRecv: return "recv";
    case CollectiveKind::kOther: return "other";
  }
  return "other";
}

std::string_view TrackKindName(TrackKind k) {
  switch (k) {
    case TrackKind::kHostThread: return "host_thread";
    case TrackKind::kDeviceStream: return "device_stream";
    case TrackKind::kCounter: return "counter";
  }
  return "unknown";
}

std::string_view TrackRoleName(TrackRole r) {
  switch (r) {
    case TrackRole::kUnspecified: return "unspecified";
    case TrackRole::kHostMain: return "host_main";
    case TrackRole::kHostDispatch: return "host_dispatch";
    case TrackRole::kHostOther: return "host_other";
    case TrackRole::kDeviceCompute: return "device_compute";
    case TrackRole::kDeviceComm: return "device_comm";
    case TrackRole::kDeviceCopy: return "device_copy";
    case TrackRole::kDeviceOther: return "device_other";
  }
  return "unknown";
}

std::string_view CounterKindName(CounterKind k) {
  switch (k) {
    case CounterKind::kOther: return "other";
    case CounterKind::kMemAllocated: return "allocated";
    case CounterKind::kMemReserved: return "reserved";
    case CounterKind::kMemWeights: return "weights";
    case CounterKind::kMemGradients: return "gradients";
    case CounterKind::kMemOptimizer: return "optimizer";
    case CounterKind::kMemActivations: return "activations";
    case CounterKind::kMemRecompute: return "recompute";
    case CounterKind::kMemSwap: return "swap";
    case CounterKind::kMemComm: return "comm";
  }
  return "other";
}

void EventTable::Append(const Event& e) {
  ts.push_back(e.ts);
  dur.push_back(e.dur);
  name.push_back(e.name);
  category.push_back(e.category);
  phase.push_back(e.phase);
  flags.push_back(e.flags);
  correlation.push_back(e.correlation);
  step.push_back(e.step);
  micro_batch.push_back(e.micro_batch);
  layer.push_back(e.layer);
  comm.push_back(e.comm);
  flops.push_back(e.flops);
  bytes.push_back(e.bytes);
  // The first shape sizes the column: zeros for the rows before it (a
  // resize to ts.size() - 1 left it empty when that was the first row).
  if (!shape.empty()) {
    shape.push_back(e.shape);
  } else if (e.shape != 0) {
    shape.assign(ts.size() - 1, 0);
    shape.push_back(e.shape);
  }
}

Event EventTable::Get(size_t i) const {
  Event e;
  e.ts = ts[i];
  e.dur = dur[i];
  e.name = name[i];
  e.category = category[i];
  e.phase = phase[i];
  e.flags = flags[i];
  e.correlation = correlation[i];
  e.step = step[i];
  e.micro_batch = micro_batch[i];
  e.layer = layer[i];
  e.comm = comm[i];
  e.flops = flops[i];
  e.bytes = bytes[i];
  e.shape = ShapeAt(i);
  return e;
}

void EventTable::Reserve(size_t n) {
  ts.reserve(n);
  dur.reserve(n);
  name.reserve(n);
  category.reserve(n);
  phase.reserve(n);
  flags.reserve(n);
  correlation.reserve(n);
  step.reserve(n);
  micro_batch.reserve(n);
  layer.reserve(n);
  comm.reserve(n);
  flops.reserve(n);
  bytes.reserve(n);
}

void EventTable::Resize(size_t n) {
  const Event d;
  ts.resize(n, d.ts);
  dur.resize(n, d.dur);
  name.resize(n, d.name);
  category.resize(n, d.category);
  phase.resize(n, d.phase);
  flags.resize(n, d.flags);
  correlation.resize(n, d.correlation);
  step.resize(n, d.step);
  micro_batch.resize(n, d.micro_batch);
  layer.resize(n, d.layer);
  comm.resize(n, d.comm);
  flops.resize(n, d.flops);
  bytes.resize(n, d.bytes);
  if (!shape.empty()) shape.resize(n, 0);
}

void EventTable::Clear() { Resize(0); }

bool EventTable::IsSortedByTime() const {
  return std::is_sorted(ts.begin(), ts.end());
}

void EventTable::SortByTime() {
  if (IsSortedByTime()) return;
  std::vector<uint32_t> order(size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return ts[a] < ts[b]; });
  Permute(ts, order);
  Permute(dur, order);
  Permute(name, order);
  Permute(category, order);
  Permute(phase, order);
  Permute(flags, order);
  Permute(correlation, order);
  Permute(step, order);
  Permute(micro_batch, order);
  Permute(layer, order);
  Permute(comm, order);
  Permute(flops, order);
  Permute(bytes, order);
  if (!shape.empty()) Permute(shape, order);
}

namespace {

template <typename T>
ElementRange<T> Append(std::vector<T>& flat, std::span<const T> v) {
  if (flat.size() + v.size() > UINT32_MAX) {
    throw std::length_error("more than 2^32 - 1 communication list elements in one track");
  }
  const ElementRange<T> r{static_cast<uint32_t>(flat.size()), static_cast<uint32_t>(v.size())};
  flat.insert(flat.end(), v.begin(), v.end());
  return r;
}

template <typename T>
bool SameElements(std::span<const T> a, std::span<const T> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

template <typename T>
bool Inside(ElementRange<T> r, const std::vector<T>& flat) {
  return uint64_t{r.begin} + r.size <= flat.size();
}

}  // namespace

RankList Track::AddRanks(std::span<const int32_t> v) { return Append(comm_ranks, v); }
SplitList Track::AddSplits(std::span<const uint64_t> v) { return Append(comm_splits, v); }

bool Track::CommListsValid() const {
  for (const CommRecord& c : comms) {
    if (!Inside(c.group_ranks, comm_ranks) || !Inside(c.send_splits, comm_splits) ||
        !Inside(c.recv_splits, comm_splits)) {
      return false;
    }
  }
  return true;
}

// Lists every field of Track: a field added there must be added here.
bool Track::operator==(const Track& o) const {
  if (!CommListsValid() || !o.CommListsValid()) return false;  // never read out of range
  if (kind != o.kind || role != o.role || counter != o.counter || name != o.name ||
      native_id != o.native_id || prior_end != o.prior_end || after_start != o.after_start ||
      after_launch != o.after_launch || after_sync != o.after_sync || after_name != o.after_name || events != o.events || sample_ts != o.sample_ts ||
      sample_value != o.sample_value || comms.size() != o.comms.size()) {
    return false;
  }
  for (size_t i = 0; i < comms.size(); ++i) {
    const CommRecord &a = comms[i], &b = o.comms[i];
    if (a.kind != b.kind || a.comm_class != b.comm_class || a.group != b.group ||
        a.sequence != b.sequence || a.group_size != b.group_size || a.peer != b.peer ||
        a.bytes != b.bytes || !SameElements(Ranks(a.group_ranks), o.Ranks(b.group_ranks)) ||
        !SameElements(Splits(a.send_splits), o.Splits(b.send_splits)) ||
        !SameElements(Splits(a.recv_splits), o.Splits(b.recv_splits))) {
      return false;
    }
  }
  return true;
}

Track& Rank::AddTrack(TrackKind kind, TrackRole role, std::string_view name,
                      int64_t native_id) {
  Track& t = tracks.emplace_back();
  t.kind = kind;
  t.role = role;
  t.name = strings.Intern(name);
  t.native_id = native_id;
  return t;
}

void Rank::AddStat(std::string_view key, int64_t n) {
  for (auto& [k, v] : import_stats) {
    if (k == key) {
      v += n;
      return;
    }
  }
  import_stats.emplace_back(std::string(key), n);
}

size_t Rank::EventCount() const {
  size_t n = 0;
  for (const Track& t : tracks) n += t.events.size() + t.sample_ts.size();
  return n;
}

}  // namespace moetrace
