#include "formats/kineto/kineto_builder.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

#include "formats/counter_sort.h"
#include "formats/kineto/kineto_names.h"
#include "formats/kineto/kineto_shapes.h"
#include "formats/starts_with.h"

namespace moetrace {
namespace {

// Marks a runtime call that is not a known launch or sync but carries a
// correlation: it becomes kLaunch when a device op has that correlation.
// Cleared before Finish() returns; never visible in the model.
constexpr uint16_t kTmpRuntimeCall = 1u << 15;

enum class Cat : uint8_t {
  kHostOp, kRuntime, kKernel, kMemcpy, kMemset, kDeviceAnnotation, kSync,
  kInstant, kTraceSpan, kOverhead, kLaunchFlow, kOtherFlow, kCudaEvent, kUnknown,
};

struct CatName {
  std::string_view name;
  Cat cat;
  bool legacy;
};

constexpr CatName kCats[] = {
    {"cpu_op", Cat::kHostOp, false},
    {"kernel", Cat::kKernel, false},
    {"cuda_runtime", Cat::kRuntime, false},
    {"ac2g", Cat::kLaunchFlow, false},
    {"python_function", Cat::kHostOp, false},
    {"user_annotation", Cat::kHostOp, false},
    {"gpu_memcpy", Cat::kMemcpy, false},
    {"gpu_memset", Cat::kMemset, false},
    {"cuda_driver", Cat::kRuntime, false},
    {"cpu_instant_event", Cat::kInstant, false},
    {"gpu_user_annotation", Cat::kDeviceAnnotation, false},
    {"cuda_sync", Cat::kSync, false},
    {"fwdbwd", Cat::kOtherFlow, false},
    {"Trace", Cat::kTraceSpan, false},
    {"overhead", Cat::kOverhead, false},
    {"privateuse1_runtime", Cat::kRuntime, false},
    {"privateuse1_driver", Cat::kRuntime, false},
    {"mtia_runtime", Cat::kRuntime, false},
    {"mtia_ccp_events", Cat::kKernel, false},
    {"xpu_runtime", Cat::kRuntime, false},
    {"xpu_driver", Cat::kRuntime, false},
    {"xpu_sync", Cat::kSync, false},
    {"cuda_event", Cat::kCudaEvent, false},
    {"Operator", Cat::kHostOp, true},
    {"Runtime", Cat::kRuntime, true},
    {"Kernel", Cat::kKernel, true},
    {"Memcpy", Cat::kMemcpy, true},
    {"Memset", Cat::kMemset, true},
    {"async", Cat::kLaunchFlow, true},
};

Cat Lookup(std::string_view cat, bool* legacy) {
  for (const CatName& c : kCats) {
    if (c.name == cat) {
      *legacy = c.legacy;
      return c.cat;
    }
  }
  *legacy = false;
  return Cat::kUnknown;
}

bool IsDeviceOp(Category c) {
  return c == Category::kCompute || c == Category::kCollective || c == Category::kP2P ||
         c == Category::kCopy;
}

}  // namespace

KinetoBuilder::KinetoBuilder(Rank* rank) : rank_(rank) {}

int64_t KinetoBuilder::SyntheticId(std::string_view /*key*/, std::string_view s) {
  auto it = synthetic_ids_.find(std::string(s));
  if (it != synthetic_ids_.end()) return it->second;
  int64_t id = -1000000 - int64_t(synthetic_ids_.size());
  synthetic_ids_.emplace(std::string(s), id);
  return id;
}

void KinetoBuilder::CountTimestamp(bool integral, bool from_string) {
  if (!integral) ++ts_non_integer_;
  if (from_string) ++ts_strings_;
}

KinetoCommArgs& KinetoBuilder::NewCommArgs(int32_t* index) {
  *index = int32_t(comm_args_.size());
  comm_args_.emplace_back();
  return comm_args_.back();
}

void KinetoBuilder::CountRead(std::string_view cat) {
  if (last_read_ < read_counts_.size() && read_counts_[last_read_].first == cat) {
    ++read_counts_[last_read_].second;
    return;
  }
  for (size_t i = 0; i < read_counts_.size(); ++i) {
    if (read_counts_[i].first == cat) {
      ++read_counts_[i].second;
      last_read_ = i;
      return;
    }
  }
  read_counts_.emplace_back(std::string(cat), 1);
  last_read_ = read_counts_.size() - 1;
}

uint32_t KinetoBuilder::HostTrack(int64_t pid, int64_t tid) {
  Key k{pid, tid};
  if (k == last_host_key_) return last_host_track_;
  auto [it, fresh] = host_.try_emplace(k, uint32_t(rank_->tracks.size()));
  if (fresh) {
    rank_->tracks.emplace_back();
    Track& t = rank_->tracks.back();
    t.kind = TrackKind::kHostThread;
    t.native_id = tid;
    info_.push_back(TrackInfo{false, pid, tid});
  }
  last_host_key_ = k;
  last_host_track_ = it->second;
  return it->second;
}

uint32_t KinetoBuilder::DeviceTrack(int64_t device, int64_t stream) {
  auto [it, fresh] = dev_.try_emplace(Key{device, stream}, uint32_t(rank_->tracks.size()));
  if (fresh) {
    rank_->tracks.emplace_back();
    Track& t = rank_->tracks.back();
    t.kind = TrackKind::kDeviceStream;
    t.native_id = stream;
    info_.push_back(TrackInfo{true, device, stream});
  }
  return it->second;
}

void KinetoBuilder::SawDeviceOp(bool has_correlation) {
  if (!has_correlation) {
    ++device_ops_without_correlation_;
    if (flow_mode_ == FlowMode::kUnneeded && flows_dropped_ > 0) {
      ++skipped_[kSkipFlowsDroppedEarly];
    }
    flow_mode_ = FlowMode::kNeeded;
  } else if (flow_mode_ == FlowMode::kUndecided) {
    flow_mode_ = FlowMode::kUnneeded;
    flows_.clear();
    flows_.shrink_to_fit();
  }
}

void KinetoBuilder::AddTo(uint32_t track, const Event& ev) {
  EventTable& t = rank_->tracks[track].events;
  // Grow by a quarter, not double: the columns are most of the importer's
  // memory, and doubling would leave up to as much again unused.
  if (t.ts.size() == t.ts.capacity()) t.Reserve(t.ts.size() + t.ts.size() / 4 + 64);
  t.Append(ev);
}

void KinetoBuilder::Add(const KinetoEvent& e) {
  CountRead(e.has_cat ? e.cat : std::string_view("(none)"));
  if (e.rejected) return;  // counted by the reader (skipped.event.<key>)
  switch (e.ph) {
    case 'X':
      AddComplete(e);
      return;
    case 'M':
      ++skipped_[kSkipMetadata];
      if (e.name == "thread_name" && !e.meta_name.empty()) {
        thread_names_[Key{e.pid, e.tid}] = std::string(e.meta_name);
      }
      return;
    case 's': case 'f': case 't': {
      ++skipped_[kSkipFlow];
      bool legacy = false;
      if (e.has_cat && Lookup(e.cat, &legacy) == Cat::kLaunchFlow && e.has_flow_id &&
          e.has_ts && e.ph != 't') {
        if (flow_mode_ == FlowMode::kUnneeded) {
          ++flows_dropped_;
          return;
        }
        auto [it, fresh] =
            flow_key_index_.try_emplace(Key{e.pid, e.tid}, uint32_t(flow_keys_.size()));
        if (fresh) flow_keys_.push_back(Key{e.pid, e.tid});
        flows_.push_back(Flow{e.flow_id, e.ts, it->second, e.ph == 's'});
      }
      return;
    }
    case 'i': case 'I': {
      if (e.name == "[memory]") {
        AddMemory(e);
        return;
      }
      bool legacy = false;
      Cat c = e.has_cat ? Lookup(e.cat, &legacy) : Cat::kUnknown;
      if (!e.has_cat || c == Cat::kTraceSpan || c == Cat::kOverhead) {
        ++skipped_[kSkipGlobalInstant];
        return;
      }
      if (!e.has_ts) {
        ++skipped_[kSkipNoTimestamp];
        return;
      }
      if (!EventTimesInRange(e.ts, 0)) {
        ++skipped_[kSkipTimeOutOfRange];
        return;
      }
      Event ev;
      ev.ts = e.ts;
      ev.name = rank_->strings.Intern(e.name);
      ev.category = Category::kMarker;
      ev.flags = kFlagInstant;
      ev.correlation = e.correlation;
      AddTo(HostTrack(e.pid, e.tid), ev);
      return;
    }
    default:
      ++skipped_[kSkipUnknownPhase];
      return;
  }
}

void KinetoBuilder::AddMemory(const KinetoEvent& e) {
  if (!e.has_ts) {
    ++skipped_[kSkipNoTimestamp];
    return;
  }
  if (!EventTimesInRange(e.ts, 0)) {
    ++skipped_[kSkipTimeOutOfRange];
    return;
  }
  Key k{e.mem_device_type, e.mem_device_id};
  auto [it, fresh] = mem_.try_emplace(k);
  MemTracks& m = it->second;
  bool device = e.mem_device_type != 0;  // c10::DeviceType 0 is the CPU
  std::string who = device ? "device " + std::to_string(e.mem_device_id) : std::string("cpu");
  if (fresh) {
    m.delta = e.total_allocated < 0;
    Track& t = rank_->AddTrack(TrackKind::kCounter, TrackRole::kUnspecified,
                               who + (m.delta ? " memory allocated (relative)"
                                              : " memory allocated"),
                               e.mem_device_id);
    t.counter = device ? CounterKind::kMemAllocated : CounterKind::kOther;
    m.allocated = int32_t(rank_->tracks.size() - 1);
    info_.push_back(TrackInfo{});
  }
  if (m.reserved < 0 && e.total_reserved >= 0) {
    Track& t = rank_->AddTrack(TrackKind::kCounter, TrackRole::kUnspecified,
                               who + " memory reserved", e.mem_device_id);
    t.counter = device ? CounterKind::kMemReserved : CounterKind::kOther;
    m.reserved = int32_t(rank_->tracks.size() - 1);
    info_.push_back(TrackInfo{});
  }
  Track& a = rank_->tracks[size_t(m.allocated)];
  a.sample_ts.push_back(e.ts);
  a.sample_value.push_back(m.delta ? double(e.mem_bytes) : double(e.total_allocated));
  if (m.reserved >= 0 && e.total_reserved >= 0) {
    Track& r = rank_->tracks[size_t(m.reserved)];
    r.sample_ts.push_back(e.ts);
    r.sample_value.push_back(double(e.total_reserved));
  }
}

void KinetoBuilder::AddComplete(const KinetoEvent& e) {
  if (!e.has_cat) {
    ++skipped_[kSkipNoCategory];
    return;
  }
  bool legacy = false;
  Cat cat = Lookup(e.cat, &legacy);
  legacy_schema_ |= legacy;
  switch (cat) {
    case Cat::kTraceSpan: ++skipped_[kSkipTraceSpan]; return;
    case Cat::kOverhead: ++skipped_[kSkipOverhead]; return;
    case Cat::kUnknown: ++skipped_[kSkipUnknownCategory]; return;
    case Cat::kLaunchFlow: case Cat::kOtherFlow: ++skipped_[kSkipFlow]; return;
    default: break;
  }
  if (!e.has_ts) {
    ++skipped_[kSkipNoTimestamp];
    return;
  }
  if (!EventTimesInRange(e.ts, e.dur)) {
    ++skipped_[kSkipTimeOutOfRange];
    return;
  }
  Event ev;
  ev.ts = e.ts;
  ev.dur = e.dur;
  if (ev.dur < 0) {
    ++negative_durations_;
    ev.dur = 0;
  }
  ev.name = rank_->strings.Intern(e.name);
  ev.correlation = e.correlation;
  const int64_t device = e.device >= 0 ? e.device : e.pid;
  const int64_t stream = e.stream >= 0 ? e.stream : e.tid;
  switch (cat) {
    case Cat::kHostOp:
    case Cat::kInstant: {
      uint32_t t = HostTrack(e.pid, e.tid);
      int32_t step = 0;
      if (ParseProfilerStep(e.name, &step)) {
        ev.category = Category::kMarker;
        ev.flags = kFlagStepMarker;
        ev.step = step;
        info_[t].has_step = true;
      } else {
        ev.category = cat == Cat::kInstant ? Category::kMarker : Category::kHostOp;
        if (cat == Cat::kInstant) ev.flags = kFlagInstant;
        // Only operators' own Input Dims: a user_annotation may carry some
        // too (vLLM's "nccl:_all_gather_base" inside record_param_comms),
        // but the kernel belongs to the operator, as its External id says.
        if (!e.input_dims.empty() && (e.cat == "cpu_op" || e.cat == "Operator")) {
          NormalizeInputDims(e.input_dims, &dims_scratch_);
          ev.shape = rank_->strings.Intern(dims_scratch_);
          any_shape_ = true;
        }
        bool rpc = e.name == "record_param_comms";
        if (rpc || StartsWith(e.name, "nccl:") || StartsWith(e.name, "c10d::")) {
          CollectiveKind kind = CollectiveKind::kNone;
          if (!rpc) kind = CollectiveFromName(e.name);
          if (e.comm_args >= 0 && !comm_args_[size_t(e.comm_args)].collective.empty()) {
            kind = CollectiveFromName(comm_args_[size_t(e.comm_args)].collective);
          }
          comm_ctx_.push_back(CommCtx{t, e.ts, e.ts + ev.dur, rpc ? e.comm_args : -1, kind});
          if (rpc && e.comm_args >= 0 && e.external_id >= 0) {
            rpc_by_external_id_[e.external_id] = e.comm_args;
          }
        }
      }
      AddTo(t, ev);
      return;
    }
    case Cat::kRuntime: {
      if (IsSyncCallName(e.name)) {
        ev.category = Category::kSync;
        ev.flags = kFlagBlocking;
      } else if (IsLaunchCallName(e.name)) {
        ev.category = Category::kLaunch;
      } else {
        ev.category = Category::kHostOp;
        ev.flags = kTmpRuntimeCall;
      }
      AddTo(HostTrack(e.pid, e.tid), ev);
      return;
    }
    case Cat::kKernel: {
      CollectiveKind kind;
      bool p2p = false;
      uint32_t t = DeviceTrack(device, stream);
      if (IsCommKernelName(e.name, &kind, &p2p) || e.comm_args >= 0) {
        ev.category = p2p ? Category::kP2P : Category::kCollective;
        ev.comm = int32_t(comm_refs_.size());
        comm_refs_.push_back(CommRef{e.comm_args, e.external_id, kind, p2p});
        ++info_[t].n_comm;
      } else {
        ev.category = Category::kCompute;
        ++info_[t].n_compute;
      }
      SawDeviceOp(ev.correlation >= 0);
      AddTo(t, ev);
      return;
    }
    case Cat::kMemcpy:
    case Cat::kMemset: {
      uint32_t t = DeviceTrack(device, stream);
      ev.category = Category::kCopy;
      ev.flags = cat == Cat::kMemset ? uint16_t(kFlagMemset) : MemcpyFlagsFromName(e.name);
      if (e.bytes > 0) ev.bytes = uint64_t(e.bytes);
      ++info_[t].n_copy;
      SawDeviceOp(ev.correlation >= 0);
      AddTo(t, ev);
      return;
    }
    case Cat::kDeviceAnnotation:
      ev.category = Category::kMarker;
      AddTo(DeviceTrack(device, stream), ev);
      return;
    case Cat::kSync:
    case Cat::kCudaEvent: {
      ev.category = cat == Cat::kSync ? Category::kSync : Category::kMarker;
      // Device-side records carry their stream; host-side ones do not.
      if (e.stream >= 0) {
        AddTo(DeviceTrack(device, stream), ev);
      } else {
        if (cat == Cat::kSync) ev.flags = kFlagBlocking;
        AddTo(HostTrack(e.pid, e.tid), ev);
      }
      return;
    }
    default:
      ++skipped_[kSkipUnknownCategory];
      return;
  }
}

// Index of the event a flow endpoint binds to: one starting exactly at `ts`
// (Kineto writes the flow at its event's start), else the innermost one
// enclosing `ts`. Host ends prefer launches/runtime calls, device ends ops.
int64_t KinetoBuilder::FindEvent(uint32_t track, int64_t ts, bool device) const {
  const EventTable& t = rank_->tracks[track].events;
  auto want = [&](size_t i) {
    Category c = t.category[i];
    return device ? IsDeviceOp(c)
                  : (c == Category::kLaunch || (t.flags[i] & kTmpRuntimeCall) ||
                     c == Category::kSync || c == Category::kHostOp);
  };
  size_t lo = size_t(std::lower_bound(t.ts.begin(), t.ts.end(), ts) - t.ts.begin());
  int64_t fallback = -1;
  for (size_t i = lo; i < t.size() && t.ts[i] == ts; ++i) {
    if (want(i)) {
      if (device || t.category[i] != Category::kHostOp || (t.flags[i] & kTmpRuntimeCall)) {
        return int64_t(i);
      }
      if (fallback < 0) fallback = int64_t(i);
    }
  }
  if (fallback >= 0) return fallback;
  for (size_t n = 0, i = lo; i > 0 && n < 256; --i, ++n) {
    size_t j = i - 1;
    if (t.ts[j] <= ts && t.End(j) >= ts && want(j)) return int64_t(j);
  }
  return -1;
}

void KinetoBuilder::LinkFlows() {
  if (flows_.empty() || device_ops_without_correlation_ == 0) return;
  // New ids must not collide with correlations already in the file.
  int64_t max_corr = -1;
  for (const Track& tr : rank_->tracks) {
    for (int64_t c : tr.events.correlation) max_corr = std::max(max_corr, c);
  }
  const int64_t offset = max_corr >= 0 ? max_corr + 1 : 0;
  std::sort(flows_.begin(), flows_.end(), [](const Flow& a, const Flow& b) {
    return a.id != b.id ? a.id < b.id : a.start > b.start;
  });
  for (size_t i = 0; i < flows_.size();) {
    size_t j = i;
    while (j < flows_.size() && flows_[j].id == flows_[i].id) ++j;
    // Starts first (sorted), then ends.
    const Flow* s = flows_[i].start ? &flows_[i] : nullptr;
    for (size_t k = i; k < j; ++k) {
      const Flow& f = flows_[k];
      if (f.start || !s) continue;
      auto hs = host_.find(flow_keys_[s->key]);
      auto ds = dev_.find(flow_keys_[f.key]);
      if (hs == host_.end() || ds == dev_.end()) continue;
      int64_t hi = FindEvent(hs->second, s->ts, false);
      int64_t di = FindEvent(ds->second, f.ts, true);
      if (hi < 0 || di < 0) continue;
      int64_t& hc = rank_->tracks[hs->second].events.correlation[size_t(hi)];
      int64_t& dc = rank_->tracks[ds->second].events.correlation[size_t(di)];
      if (dc >= 0 && hc >= 0) continue;
      if (dc < 0 && hc >= 0) {
        dc = hc;
      } else if (dc >= 0) {
        hc = dc;
      } else {
        hc = dc = offset + f.id;
      }
      ++flows_linked_;
    }
    i = j;
  }
}

// Sorted correlations of device ops: a flat vector is a third of the
// memory of a hash set, and this runs over millions of events.
static std::vector<int64_t> DeviceCorrelations(const Rank& rank) {
  std::vector<int64_t> out;
  for (const Track& tr : rank.tracks) {
    if (tr.kind != TrackKind::kDeviceStream) continue;
    for (size_t i = 0; i < tr.events.size(); ++i) {
      if (tr.events.correlation[i] >= 0 && IsDeviceOp(tr.events.category[i])) {
        out.push_back(tr.events.correlation[i]);
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void KinetoBuilder::LinkLaunches() {
  bool any = false;
  for (const Track& tr : rank_->tracks) {
    for (uint16_t f : tr.events.flags) any |= (f & kTmpRuntimeCall) != 0;
  }
  if (!any) return;
  const std::vector<int64_t> device_corr = DeviceCorrelations(*rank_);
  for (Track& tr : rank_->tracks) {
    EventTable& t = tr.events;
    for (size_t i = 0; i < t.size(); ++i) {
      if (!(t.flags[i] & kTmpRuntimeCall)) continue;
      t.flags[i] &= uint16_t(~kTmpRuntimeCall);
      if (t.correlation[i] >= 0 &&
          std::binary_search(device_corr.begin(), device_corr.end(), t.correlation[i])) {
        t.category[i] = Category::kLaunch;
        ++launches_by_correlation_;
      }
    }
  }
}

void KinetoBuilder::StampSteps() {
  struct Window { int64_t ts, end; int32_t step; };
  std::vector<Window> windows;
  for (const Track& tr : rank_->tracks) {
    const EventTable& t = tr.events;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t.flags[i] & kFlagStepMarker) windows.push_back({t.ts[i], t.End(i), t.step[i]});
    }
  }
  std::sort(windows.begin(), windows.end(),
            [](const Window& a, const Window& b) { return a.ts < b.ts; });
  std::vector<std::pair<int64_t, int32_t>> step_by_corr;  // sorted below
  if (!windows.empty()) {
    for (Track& tr : rank_->tracks) {
      if (tr.kind != TrackKind::kHostThread) continue;
      EventTable& t = tr.events;
      size_t w = 0;
      for (size_t i = 0; i < t.size(); ++i) {  // events sorted by ts
        if (t.flags[i] & kFlagStepMarker) continue;
        while (w + 1 < windows.size() && windows[w + 1].ts <= t.ts[i]) ++w;
        if (t.ts[i] >= windows[w].ts && t.ts[i] < windows[w].end) {
          t.step[i] = windows[w].step;
          if (t.category[i] == Category::kLaunch && t.correlation[i] >= 0) {
            step_by_corr.emplace_back(t.correlation[i], t.step[i]);
          }
        }
      }
    }
  }
  if (step_by_corr.empty()) return;
  std::stable_sort(step_by_corr.begin(), step_by_corr.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (Track& tr : rank_->tracks) {
    if (tr.kind != TrackKind::kDeviceStream) continue;
    EventTable& t = tr.events;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t.correlation[i] < 0) continue;
      auto it = std::lower_bound(
          step_by_corr.begin(), step_by_corr.end(), t.correlation[i],
          [](const std::pair<int64_t, int32_t>& p, int64_t c) { return p.first < c; });
      if (it != step_by_corr.end() && it->first == t.correlation[i]) t.step[i] = it->second;
    }
  }
}

void KinetoBuilder::BuildCommRecords() {
  if (comm_refs_.empty()) return;
  // Launch call (host track, start) of the correlations of comm kernels.
  std::unordered_map<int64_t, std::pair<uint32_t, int64_t>> launch;
  for (const Track& tr : rank_->tracks) {
    for (size_t i = 0; i < tr.events.size(); ++i) {
      Category c = tr.events.category[i];
      if ((c == Category::kCollective || c == Category::kP2P) && tr.events.correlation[i] >= 0) {
        launch.emplace(tr.events.correlation[i], std::make_pair(UINT32_MAX, int64_t(0)));
      }
    }
  }
  for (uint32_t ti = 0; ti < rank_->tracks.size() && !launch.empty(); ++ti) {
    const Track& tr = rank_->tracks[ti];
    if (tr.kind != TrackKind::kHostThread) continue;
    for (size_t i = 0; i < tr.events.size(); ++i) {
      if (tr.events.category[i] != Category::kLaunch) continue;
      auto it = launch.find(tr.events.correlation[i]);
      if (it != launch.end() && it->second.first == UINT32_MAX) {
        it->second = std::make_pair(ti, tr.events.ts[i]);
      }
    }
  }
  std::sort(comm_ctx_.begin(), comm_ctx_.end(), [](const CommCtx& a, const CommCtx& b) {
    return a.track != b.track ? a.track < b.track : a.ts < b.ts;
  });
  struct Seq { StringId group; int64_t ts; uint32_t track; int32_t comm; };
  std::vector<Seq> seqs;
  for (uint32_t ti = 0; ti < rank_->tracks.size(); ++ti) {
    Track& tr = rank_->tracks[ti];
    EventTable& t = tr.events;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t.category[i] != Category::kCollective && t.category[i] != Category::kP2P) continue;
      if (t.comm[i] < 0) continue;
      const CommRef& ref = comm_refs_[size_t(t.comm[i])];
      const KinetoCommArgs* args = nullptr;
      CollectiveKind ctx_kind = CollectiveKind::kNone;
      if (ref.args >= 0) {
        args = &comm_args_[size_t(ref.args)];
        ++comm_from_kernel_args_;
      } else if (auto it = rpc_by_external_id_.find(ref.external_id);
                 ref.external_id >= 0 && it != rpc_by_external_id_.end()) {
        args = &comm_args_[size_t(it->second)];
        ++comm_from_external_id_;
      }
      if (t.correlation[i] >= 0) {
        auto l = launch.find(t.correlation[i]);
        if (l != launch.end() && l->second.first != UINT32_MAX) {
          // Host ops enclosing the launch on its thread, innermost last.
          uint32_t lt = l->second.first;
          int64_t lts = l->second.second;
          auto first = std::lower_bound(
              comm_ctx_.begin(), comm_ctx_.end(), lt,
              [](const CommCtx& c, uint32_t track) { return c.track < track; });
          auto hi = std::upper_bound(first, comm_ctx_.end(), std::make_pair(lt, lts),
                                     [](const std::pair<uint32_t, int64_t>& v, const CommCtx& c) {
                                       return v.first != c.track ? v.first < c.track
                                                                 : v.second < c.ts;
                                     });
          bool found = false;
          for (auto it = hi; it != first && hi - it < 64;) {
            --it;
            if (it->end < lts) continue;
            found = true;
            if (ctx_kind == CollectiveKind::kNone) ctx_kind = it->kind;
            if (!args && it->args >= 0) args = &comm_args_[size_t(it->args)];
          }
          if (found && ref.args < 0) ++comm_from_host_context_;
        }
      }
      CommRecord rec;
      if (args && !args->collective.empty()) rec.kind = CollectiveFromName(args->collective);
      if (rec.kind == CollectiveKind::kNone) rec.kind = ctx_kind;
      if (rec.kind == CollectiveKind::kNone) {
        rec.kind = ref.name_kind;
        if (rec.kind == CollectiveKind::kNone) rec.kind = CollectiveKind::kOther;
        ++comm_from_name_only_;
      }
      if (args) {
        if (rec.kind == CollectiveKind::kAllToAll &&
            (!args->in_splits.empty() || !args->out_splits.empty())) {
          rec.kind = CollectiveKind::kAllToAllV;
        }
        std::string group = args->pg_name;
        if (!args->pg_desc.empty() && args->pg_desc != "undefined") {
          group = group.empty() ? args->pg_desc : args->pg_desc + ":" + group;
        }
        rec.group = rank_->strings.Intern(group);
        rec.group_size = args->group_size > 0 && args->group_size <= INT32_MAX
                             ? int32_t(args->group_size) : 0;
        rec.group_ranks = tr.AddRanks(args->group_ranks);
        if (rec.group_ranks.empty() && args->rank_start >= 0 && rec.group_size > 0) {
          // "Global rank start" and "Global rank stride" spell out the
          // members; a few bytes of event can ask for a million of them, so
          // only plausible groups are expanded, within a budget per track.
          const int64_t stride = args->rank_stride > 0 ? args->rank_stride : 1;
          const bool fits = rec.group_size <= 1 << 20 && stride <= INT32_MAX &&
                            args->rank_start <= INT32_MAX &&
                            args->rank_start + (rec.group_size - 1) * stride <= INT32_MAX &&
                            tr.comm_ranks.size() + size_t(rec.group_size) <= kMaxExpandedRanks;
          if (fits) {
            std::vector<int32_t> ranks(size_t(rec.group_size));
            for (int32_t r = 0; r < rec.group_size; ++r) {
              ranks[size_t(r)] = int32_t(args->rank_start + r * stride);
            }
            rec.group_ranks = tr.AddRanks(ranks);
          } else {
            ++group_ranks_not_expanded_;
          }
        }
        int64_t n = std::max(args->in_nelems, args->out_nelems);
        int es = DtypeSize(args->dtype);
        if (n > 0 && es > 0) rec.bytes = uint64_t(n) * uint64_t(es);
        rec.send_splits = tr.AddSplits(args->in_splits);
        rec.recv_splits = tr.AddSplits(args->out_splits);
        if (rec.kind == CollectiveKind::kSend) rec.peer = int32_t(args->dst_rank);
        if (rec.kind == CollectiveKind::kRecv) rec.peer = int32_t(args->src_rank);
      }
      bool p2p = rec.kind == CollectiveKind::kSend || rec.kind == CollectiveKind::kRecv ||
                 (rec.kind == CollectiveKind::kOther && ref.name_p2p);
      t.category[i] = p2p ? Category::kP2P : Category::kCollective;
      t.bytes[i] = rec.bytes;
      t.comm[i] = int32_t(tr.comms.size());
      seqs.push_back(Seq{rec.group, t.ts[i], ti, t.comm[i]});
      tr.comms.push_back(std::move(rec));
    }
  }
  // Ops of one group are issued in the same order on every member.
  std::stable_sort(seqs.begin(), seqs.end(), [](const Seq& a, const Seq& b) {
    return a.group != b.group ? a.group < b.group : a.ts < b.ts;
  });
  int64_t n = 0;
  for (size_t i = 0; i < seqs.size(); ++i) {
    if (i > 0 && seqs[i].group != seqs[i - 1].group) n = 0;
    rank_->tracks[seqs[i].track].comms[size_t(seqs[i].comm)].sequence = n++;
  }
}

void KinetoBuilder::NameTracks() {
  std::unordered_set<int64_t> devices;
  for (const TrackInfo& ti : info_) {
    if (ti.device) devices.insert(ti.a);
  }
  std::unordered_map<int64_t, int64_t> device_ops;
  for (size_t i = 0; i < rank_->tracks.size(); ++i) {
    Track& t = rank_->tracks[i];
    const TrackInfo& ti = info_[i];
    if (t.kind == TrackKind::kHostThread) {
      auto it = thread_names_.find(Key{ti.a, ti.b});
      std::string name = it != thread_names_.end() ? it->second
                                                    : "thread " + std::to_string(ti.b);
      t.name = rank_->strings.Intern(name);
      t.role = (ti.has_step || ti.a == ti.b) ? TrackRole::kHostMain : TrackRole::kHostOther;
    } else if (t.kind == TrackKind::kDeviceStream) {
      std::string name = "stream " + std::to_string(ti.b);
      if (devices.size() > 1) name += " (device " + std::to_string(ti.a) + ")";
      t.name = rank_->strings.Intern(name);
      int64_t ops = ti.n_comm + ti.n_compute + ti.n_copy;
      device_ops[ti.a] += ops;
      if (ops == 0) {
        t.role = TrackRole::kDeviceOther;
      } else if (ti.n_comm * 2 >= ops) {
        t.role = TrackRole::kDeviceComm;
      } else if (ti.n_copy == ops) {
        t.role = TrackRole::kDeviceCopy;
      } else {
        t.role = TrackRole::kDeviceCompute;
      }
    }
  }
  int64_t best = -1;
  for (auto [d, n] : device_ops) {
    if (best < 0 || n > device_ops[best] || (n == device_ops[best] && d < best)) best = d;
  }
  if (best >= 0) rank_->device_id = int32_t(best);
  for (size_t i = 0; i < rank_->tracks.size(); ++i) {
    if (rank_->tracks[i].role == TrackRole::kHostMain) {
      rank_->pid = info_[i].a;
      break;
    }
  }
}

void KinetoBuilder::FinishCounters() {
  for (auto& [key, m] : mem_) {
    for (int32_t idx : {m.allocated, m.reserved}) {
      if (idx < 0) continue;
      Track& t = rank_->tracks[size_t(idx)];
      SortSamplesByTime(t);
      if (m.delta && idx == m.allocated) {
        double sum = 0;
        for (double& v : t.sample_value) v = (sum += v);
      }
    }
  }
}

void KinetoBuilder::FlushStats() {
  auto& s = rank_->import_stats;
  for (auto& [cat, n] : read_counts_) s.emplace_back("read." + cat, n);
  static const char* const kSkipNames[kSkipCount] = {
      "skipped.metadata", "skipped.trace_span", "skipped.overhead", "skipped.flow",
      "skipped.global_instant", "skipped.unknown_category", "skipped.no_category",
      "skipped.unknown_phase", "skipped.no_timestamp", "skipped.flow_before_uncorrelated_op",
      "skipped.time_out_of_range"};
  for (int i = 0; i < kSkipCount; ++i) {
    if (skipped_[i]) s.emplace_back(kSkipNames[i], skipped_[i]);
  }
  auto put = [&](const char* k, int64_t v) { if (v) s.emplace_back(k, v); };
  for (const auto& f : field_stats_.entries()) s.emplace_back(KinetoFieldStats::StatName(f), f.n);
  put("ts.non_integer", ts_non_integer_);
  put("ts.string", ts_strings_);
  put("clamped.negative_duration", negative_durations_);
  put("link.flow", flows_linked_);
  put("link.launch_by_correlation", launches_by_correlation_);
  put("comm.from_kernel_args", comm_from_kernel_args_);
  put("comm.from_external_id", comm_from_external_id_);
  put("comm.from_host_context", comm_from_host_context_);
  put("comm.from_kernel_name_only", comm_from_name_only_);
  put("skipped.group_ranks_expansion", group_ranks_not_expanded_);
  put("schema.legacy", legacy_schema_ ? 1 : 0);
  // Device ops and the cpu_op shapes of their launch (kineto_shapes.h).
  put("link.shape", shape_links_.linked);
  put("skipped.shape.no_launch", shape_links_.no_launch);
  put("skipped.shape.launch_outside_shaped_op", shape_links_.no_op);
  put("skipped.shape.no_correlation", shape_links_.no_correlation);
}

void KinetoBuilder::Finish(int64_t base_time_ns) {
  if (base_time_ns != 0) {
    for (Track& t : rank_->tracks) {
      for (TimeNs& ts : t.events.ts) ts += base_time_ns;
      for (TimeNs& ts : t.sample_ts) ts += base_time_ns;
    }
    for (Flow& f : flows_) f.ts += base_time_ns;
    for (CommCtx& c : comm_ctx_) {
      c.ts += base_time_ns;
      c.end += base_time_ns;
    }
  }
  for (Track& t : rank_->tracks) t.events.SortByTime();
  LinkFlows();
  LinkLaunches();
  StampSteps();
  if (any_shape_) shape_links_ = LinkLaunchShapes(rank_);
  BuildCommRecords();
  NameTracks();
  FinishCounters();
  // Comm kernels left without a record (none expected) must not point anywhere.
  for (Track& t : rank_->tracks) {
    for (size_t i = 0; i < t.events.size(); ++i) {
      if (t.events.comm[i] >= 0 && size_t(t.events.comm[i]) >= t.comms.size()) {
        t.events.comm[i] = kNone;
      }
    }
  }
  FlushStats();
}

}  // namespace moetrace
