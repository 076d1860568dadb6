#include "formats/perfetto/rank_packets.h"

#include <string_view>

#include "formats/export/launch_flows.h"
#include "formats/export/track_labels.h"
#include "formats/export/utf8.h"

namespace moetrace {
namespace {

// Field numbers of formats/proto/perfetto_trace.proto (Perfetto's public ones).
constexpr uint32_t kTracePacket = 1;
// TracePacket
constexpr uint32_t kTimestamp = 8;
constexpr uint32_t kSequenceId = 10;
constexpr uint32_t kTrackEvent = 11;
constexpr uint32_t kInternedData = 12;
constexpr uint32_t kSequenceFlags = 13;
constexpr uint32_t kTrackDescriptor = 60;
constexpr uint32_t kFirstPacketOnSequence = 87;
constexpr uint32_t kSeqIncrementalStateCleared = 1;
constexpr uint32_t kSeqNeedsIncrementalState = 2;
// TrackDescriptor
constexpr uint32_t kUuid = 1;
constexpr uint32_t kTrackName = 2;
constexpr uint32_t kProcess = 3;
constexpr uint32_t kThread = 4;
constexpr uint32_t kParentUuid = 5;
constexpr uint32_t kCounter = 8;
// ProcessDescriptor / ThreadDescriptor / CounterDescriptor
constexpr uint32_t kPid = 1;
constexpr uint32_t kProcessName = 6;
constexpr uint32_t kTid = 2;
constexpr uint32_t kThreadName = 5;
constexpr uint32_t kUnit = 3;
constexpr uint32_t kUnitSizeBytes = 3;
// TrackEvent
constexpr uint32_t kCategoryIids = 3;
constexpr uint32_t kDebugAnnotations = 4;
constexpr uint32_t kType = 9;
constexpr uint32_t kNameIid = 10;
constexpr uint32_t kName = 23;
constexpr uint32_t kTrackUuid = 11;
constexpr uint32_t kDoubleCounterValue = 44;
constexpr uint32_t kFlowIds = 47;
constexpr uint32_t kTerminatingFlowIds = 48;
constexpr uint32_t kTypeSliceBegin = 1;
constexpr uint32_t kTypeSliceEnd = 2;
constexpr uint32_t kTypeInstant = 3;
constexpr uint32_t kTypeCounter = 4;
// DebugAnnotation
constexpr uint32_t kArgNameIid = 1;
constexpr uint32_t kArgUint = 3;
constexpr uint32_t kArgInt = 4;
constexpr uint32_t kArgString = 6;
// InternedData and its entries
constexpr uint32_t kEventCategories = 1;
constexpr uint32_t kEventNames = 2;
constexpr uint32_t kDebugAnnotationNames = 3;
constexpr uint32_t kIid = 1;
constexpr uint32_t kInternedName = 2;

// Debug annotation names, interned once per sequence: iid = enum value.
enum Arg : uint32_t {
  kArgPhase = 1, kArgStep, kArgMicroBatch, kArgLayer, kArgCorrelation, kArgFlops,
  kArgBytes, kArgFlags, kArgCommKind, kArgCommClass, kArgGroup, kArgSequence,
  kArgGroupSize, kArgPeer, kArgCommBytes, kArgEpSize, kArgTokensPerExpert,
  kArgExpertToEpRank, kArgInputShapes, kArgEnd,
};
constexpr std::string_view kArgNames[kArgEnd] = {
    "", "phase", "step", "micro_batch", "layer", "correlation", "flops", "bytes", "flags",
    "comm_kind", "comm_class", "group", "sequence", "group_size", "peer", "comm_bytes",
    "ep_size", "tokens_per_expert", "expert_to_ep_rank", "input_shapes",
};

constexpr size_t kFlushBytes = 1 << 20;

bool IsMemoryCounter(CounterKind k) { return k != CounterKind::kOther; }

// Strings must be UTF-8 for the viewer; sources do not promise it.
void PutStr(ProtoBuffer* out, uint32_t field, std::string_view s, std::string* scratch) {
  if (IsValidUtf8(s)) {
    out->StringField(field, s);
  } else {
    scratch->clear();
    AppendSanitizedUtf8(s, scratch);
    out->StringField(field, *scratch);
  }
}

void BeginSequencePacket(ProtoBuffer* out, bool has_ts, TimeNs ts, uint32_t seq, uint32_t flags) {
  if (has_ts) out->UintField(kTimestamp, static_cast<uint64_t>(ts));
  out->UintField(kSequenceId, seq);
  if (flags != 0) out->UintField(kSequenceFlags, flags);
}

}  // namespace

size_t RankPackets::BeginPacket(bool has_ts, TimeNs ts, uint32_t flags) {
  size_t p = out_.BeginNested(kTracePacket);
  BeginSequencePacket(&out_, has_ts, ts, seq_, flags);
  return p;
}

void RankPackets::EndPacket(size_t p) {
  out_.EndNested(p);
  if (drain_ != nullptr && out_.size() >= kFlushBytes) (*drain_)(*this);
}

void RankPackets::Str(uint32_t field, std::string_view s) { PutStr(&out_, field, s, &scratch_); }

void RankPackets::InternedEntry(uint32_t field, uint64_t iid, std::string_view name) {
  size_t e = out_.BeginNested(field);
  out_.UintField(kIid, iid);
  Str(kInternedName, name);
  out_.EndNested(e);
}

void RankPackets::IntArg(uint32_t a, int64_t v) {
  size_t d = out_.BeginNested(kDebugAnnotations);
  out_.UintField(kArgNameIid, a);
  out_.IntField(kArgInt, v);
  out_.EndNested(d);
}

void RankPackets::UintArg(uint32_t a, uint64_t v) {
  size_t d = out_.BeginNested(kDebugAnnotations);
  out_.UintField(kArgNameIid, a);
  out_.UintField(kArgUint, v);
  out_.EndNested(d);
}

void RankPackets::StringArg(uint32_t a, std::string_view v) {
  size_t d = out_.BeginNested(kDebugAnnotations);
  out_.UintField(kArgNameIid, a);
  Str(kArgString, v);
  out_.EndNested(d);
}

void RankPackets::Write(const Rank& rank, uint32_t seq, const Drain* drain) {
  // A failed write (a throwing drain) leaves nothing behind for the next.
  struct Reset {
    RankPackets* p;
    bool done = false;
    ~Reset() {
      p->drain_ = nullptr;
      if (!done) p->Clear();
    }
  } reset{this};
  drain_ = drain;
  seq_ = seq;
  next_local_uuid_ = 0;
  name_emitted_.assign(rank.strings.size(), 0);
  WriteProcess(rank);
  const LaunchFlows flows = FindLaunchFlows(rank);
  for (size_t t = 0; t < rank.tracks.size(); ++t) {
    if (rank.tracks[t].kind == TrackKind::kCounter) {
      WriteCounterTrack(rank, t);
    } else {
      WriteEventTrack(rank, t, flows);
    }
  }
  if (!rank.routing.empty()) WriteRouting(rank);
  reset.done = true;
}

void RankPackets::AppendThreadDescriptor(const ThreadHole& hole, int32_t tid, uint32_t seq,
                                         ProtoBuffer* out) {
  std::string scratch;
  size_t p = out->BeginNested(kTracePacket);
  BeginSequencePacket(out, false, 0, seq, 0);
  size_t td = out->BeginNested(kTrackDescriptor);
  out->UintField(kUuid, hole.uuid);
  PutStr(out, kTrackName, hole.label, &scratch);
  size_t thd = out->BeginNested(kThread);
  out->IntField(kPid, hole.pid);
  out->IntField(kTid, tid);
  PutStr(out, kThreadName, hole.label, &scratch);
  out->EndNested(thd);
  out->EndNested(td);
  out->EndNested(p);
}

// MoE routing records: instants on a "MoE routing" track of the process, the
// token counts as a "[n0, n1, ...]" argument.
void RankPackets::WriteRouting(const Rank& rank) {
  const uint64_t uuid = NewUuid();
  size_t p = BeginPacket(false, 0, 0);
  size_t td = out_.BeginNested(kTrackDescriptor);
  out_.UintField(kUuid, uuid);
  out_.UintField(kParentUuid, process_uuid_);
  Str(kTrackName, "MoE routing");
  out_.EndNested(td);
  EndPacket(p);
  std::string list;
  auto join = [&list](const auto& v) -> const std::string& {
    list = "[";
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) list += ", ";
      list += std::to_string(v[i]);
    }
    list += "]";
    return list;
  };
  for (const RoutingRecord& rr : rank.routing) {
    size_t q = BeginPacket(true, rr.ts, kSeqNeedsIncrementalState);
    size_t te = out_.BeginNested(kTrackEvent);
    out_.UintField(kType, kTypeInstant);
    out_.UintField(kTrackUuid, uuid);
    out_.StringField(kName, "routing layer " + std::to_string(rr.layer));
    if (rr.step != kNone) IntArg(kArgStep, rr.step);
    if (rr.micro_batch != kNone) IntArg(kArgMicroBatch, rr.micro_batch);
    if (rr.layer != kNone) IntArg(kArgLayer, rr.layer);
    IntArg(kArgEpSize, rr.ep_size);
    StringArg(kArgTokensPerExpert, join(rr.tokens_per_expert));
    if (!rr.expert_to_ep_rank.empty()) StringArg(kArgExpertToEpRank, join(rr.expert_to_ep_rank));
    out_.EndNested(te);
    EndPacket(q);
  }
}

void RankPackets::WriteProcess(const Rank& rank) {
  // The first packet of the sequence: clears incremental state and interns
  // the categories and argument names every later packet refers to.
  size_t p = BeginPacket(false, 0, kSeqIncrementalStateCleared);
  out_.BoolField(kFirstPacketOnSequence, true);
  size_t d = out_.BeginNested(kInternedData);
  for (int c = 0; c < kCategoryCount; ++c) {
    InternedEntry(kEventCategories, c + 1, CategoryName(static_cast<Category>(c)));
  }
  for (uint32_t a = 1; a < kArgEnd; ++a) InternedEntry(kDebugAnnotationNames, a, kArgNames[a]);
  out_.EndNested(d);
  process_uuid_ = NewUuid();
  size_t td = out_.BeginNested(kTrackDescriptor);
  out_.UintField(kUuid, process_uuid_);
  size_t pd = out_.BeginNested(kProcess);
  out_.IntField(kPid, ExportPid(rank.rank));
  Str(kProcessName, ProcessLabel(rank));
  out_.EndNested(pd);
  out_.EndNested(td);
  EndPacket(p);
}

void RankPackets::WriteCounterTrack(const Rank& rank, size_t t) {
  const Track& track = rank.tracks[t];
  const uint64_t uuid = NewUuid();
  size_t p = BeginPacket(false, 0, 0);
  size_t td = out_.BeginNested(kTrackDescriptor);
  out_.UintField(kUuid, uuid);
  out_.UintField(kParentUuid, process_uuid_);
  Str(kTrackName, TrackLabel(rank, t));
  size_t cd = out_.BeginNested(kCounter);
  if (IsMemoryCounter(track.counter)) out_.UintField(kUnit, kUnitSizeBytes);
  out_.EndNested(cd);
  out_.EndNested(td);
  EndPacket(p);

  const size_t n = std::min(track.sample_ts.size(), track.sample_value.size());
  for (size_t i = 0; i < n; ++i) {
    size_t q = BeginPacket(true, track.sample_ts[i], 0);
    size_t te = out_.BeginNested(kTrackEvent);
    out_.UintField(kType, kTypeCounter);
    out_.UintField(kTrackUuid, uuid);
    out_.DoubleField(kDoubleCounterValue, track.sample_value[i]);
    out_.EndNested(te);
    EndPacket(q);
  }
}

void RankPackets::WriteEventTrack(const Rank& rank, size_t t, const LaunchFlows& flows) {
  const Track& track = rank.tracks[t];
  const EventTable& ev = track.events;
  const std::string label = TrackLabel(rank, t);
  const uint64_t thread_uuid = NewUuid();
  holes_.push_back({out_.size(), thread_uuid, track.native_id, track.kind == TrackKind::kHostThread,
                    ExportPid(rank.rank), label});

  AssignLanes(ev, &lanes_);
  for (uint32_t lane = 0; lane < lanes_.lane_count; ++lane) {
    uint64_t uuid = thread_uuid;
    if (lane > 0) {
      // Overlapping, non-nesting events: a child track of the thread.
      uuid = NewUuid();
      size_t q = BeginPacket(false, 0, 0);
      size_t d = out_.BeginNested(kTrackDescriptor);
      out_.UintField(kUuid, uuid);
      out_.UintField(kParentUuid, thread_uuid);
      Str(kTrackName, label + " (overlap " + std::to_string(lane) + ")");
      out_.EndNested(d);
      EndPacket(q);
    }
    open_ends_.clear();
    for (uint32_t k = lanes_.lane_begin[lane]; k < lanes_.lane_begin[lane + 1]; ++k) {
      const uint32_t i = lanes_.order[k];
      const TimeNs ts = ev.ts[i];
      while (!open_ends_.empty() && open_ends_.back() <= ts) {
        WriteSliceEnd(open_ends_.back(), uuid);
        open_ends_.pop_back();
      }
      const bool instant = IsInstantEvent(ev, i);
      WriteSliceStart(rank, track, i, uuid, instant, flows.StartOf(t, i), flows.EndOf(t, i));
      if (!instant) open_ends_.push_back(ev.End(i));
    }
    while (!open_ends_.empty()) {
      WriteSliceEnd(open_ends_.back(), uuid);
      open_ends_.pop_back();
    }
  }
}

void RankPackets::WriteSliceStart(const Rank& rank, const Track& track, size_t i,
                                   uint64_t uuid, bool instant, uint64_t flow_out,
                                   uint64_t flow_in) {
  const EventTable& ev = track.events;
  StringId name = ev.name[i];
  if (!rank.strings.Contains(name)) name = 0;
  size_t p = BeginPacket(true, ev.ts[i], kSeqNeedsIncrementalState);
  if (!name_emitted_[name]) {
    name_emitted_[name] = 1;
    size_t d = out_.BeginNested(kInternedData);
    InternedEntry(kEventNames, uint64_t{name} + 1, rank.strings.Get(name));
    out_.EndNested(d);
  }
  size_t te = out_.BeginNested(kTrackEvent);
  out_.UintField(kType, instant ? kTypeInstant : kTypeSliceBegin);
  out_.UintField(kTrackUuid, uuid);
  out_.UintField(kNameIid, uint64_t{name} + 1);
  out_.UintField(kCategoryIids, static_cast<uint64_t>(ev.category[i]) + 1);
  if (flow_out != 0) out_.Fixed64Field(kFlowIds, flow_out);
  if (flow_in != 0) out_.Fixed64Field(kTerminatingFlowIds, flow_in);

  if (ev.phase[i] != Phase::kNone) StringArg(kArgPhase, PhaseName(ev.phase[i]));
  if (ev.step[i] != kNone) IntArg(kArgStep, ev.step[i]);
  if (ev.micro_batch[i] != kNone) IntArg(kArgMicroBatch, ev.micro_batch[i]);
  if (ev.layer[i] != kNone) IntArg(kArgLayer, ev.layer[i]);
  if (ev.correlation[i] >= 0) IntArg(kArgCorrelation, ev.correlation[i]);
  if (ev.flops[i] != 0) UintArg(kArgFlops, ev.flops[i]);
  if (ev.bytes[i] != 0) UintArg(kArgBytes, ev.bytes[i]);
  if (const StringId shape = ev.ShapeAt(i); shape != 0 && rank.strings.Contains(shape)) {
    StringArg(kArgInputShapes, rank.strings.Get(shape));
  }
  if (ev.flags[i] != 0) UintArg(kArgFlags, ev.flags[i]);
  const int32_t comm = ev.comm[i];
  if (comm >= 0 && static_cast<size_t>(comm) < track.comms.size()) {
    const CommRecord& c = track.comms[comm];
    StringArg(kArgCommKind, CollectiveKindName(c.kind));
    StringArg(kArgCommClass, CommClassName(c.comm_class));
    if (c.group != 0 && rank.strings.Contains(c.group)) {
      StringArg(kArgGroup, rank.strings.Get(c.group));
    }
    if (c.sequence >= 0) IntArg(kArgSequence, c.sequence);
    if (c.group_size != 0) IntArg(kArgGroupSize, c.group_size);
    if (c.peer != kNone) IntArg(kArgPeer, c.peer);
    if (c.bytes != 0) UintArg(kArgCommBytes, c.bytes);
  }
  out_.EndNested(te);
  EndPacket(p);
}

void RankPackets::WriteSliceEnd(TimeNs ts, uint64_t uuid) {
  size_t p = BeginPacket(true, ts, 0);
  size_t te = out_.BeginNested(kTrackEvent);
  out_.UintField(kType, kTypeSliceEnd);
  out_.UintField(kTrackUuid, uuid);
  out_.EndNested(te);
  EndPacket(p);
}

}  // namespace moetrace
