#include "formats/chrome/chrome_json_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "formats/atomic_file.h"
#include "formats/json_text.h"
#include "formats/errors.h"
#include "formats/export/launch_flows.h"
#include "formats/export/track_labels.h"

namespace moetrace {
namespace {

constexpr size_t kFlushBytes = 1 << 20;
constexpr int64_t kFirstSyntheticTid = 1'000'000'000;
// Blank space before "traceEvents", filled in by Finish() with the
// distributedInfo of a one-rank file: Kineto readers look for it before the
// events, but the rank count is only known at the end. Whitespace is valid
// JSON, so an unfilled slot costs nothing but these bytes.
constexpr size_t kHeaderSlot = 80;

// Kineto's "cat" for an event; args.category keeps ours.
std::string_view KinetoCategory(const Track& track, Category c, uint16_t flags) {
  switch (c) {
    case Category::kCompute:
    case Category::kCollective:
    case Category::kP2P:
      return "kernel";
    case Category::kCopy:
      return (flags & kFlagMemset) ? "gpu_memset" : "gpu_memcpy";
    case Category::kLaunch:
      return "cuda_runtime";
    case Category::kHostOp:
      return "cpu_op";
    case Category::kSync:
      return track.kind == TrackKind::kDeviceStream ? "cuda_sync" : "cuda_runtime";
    case Category::kMarker:
      return "user_annotation";
  }
  return "cpu_op";
}

class ChromeJsonSink final : public TraceSink {
 public:
  explicit ChromeJsonSink(const std::string& path) : file_(path) {
    out_.assign(1 + kHeaderSlot, ' ');
    out_[0] = '{';
    out_.append("\"traceEvents\":[");
  }

  void AddRank(const Rank& rank) override;
  void Finish(const Metadata& metadata) override;

 private:
  void BeginEvent() {
    out_ += first_event_ ? "\n" : ",\n";
    first_event_ = false;
    ++events_written_;
  }
  void EndEvent() {
    if (out_.size() >= kFlushBytes) Flush();
  }
  void Flush() {
    file_.Write(out_);
    out_.clear();
  }
  void Key(std::string_view key) {  // ,"key":  (keys are plain ASCII)
    out_ += ",\"";
    out_ += key;
    out_ += "\":";
  }
  void IntArg(std::string_view key, int64_t v) {
    Key(key);
    AppendInt(v, &out_);
  }
  void UintArg(std::string_view key, uint64_t v) {
    Key(key);
    AppendUint(v, &out_);
  }
  void StrArg(std::string_view key, std::string_view v) {
    Key(key);
    AppendJsonString(v, &out_);
  }
  template <typename T>
  void ListArg(std::string_view key, const std::vector<T>& v) {
    ListArg(key, std::span<const T>(v));
  }
  template <typename T>
  void ListArg(std::string_view key, std::span<const T> v) {
    Key(key);
    out_ += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out_ += ',';
      AppendInt(static_cast<int64_t>(v[i]), &out_);
    }
    out_ += ']';
  }
  // Names are escaped once per rank, then copied.
  void Name(const Rank& rank, StringId id) {
    if (!rank.strings.Contains(id)) id = 0;
    if (name_end_[id] == 0) {
      name_begin_[id] = name_cache_.size();
      AppendJsonString(rank.strings.Get(id), &name_cache_);
      name_end_[id] = name_cache_.size();
    }
    out_.append(name_cache_, name_begin_[id], name_end_[id] - name_begin_[id]);
  }
  void PidTid(int32_t pid, int64_t tid) {
    out_ += ",\"pid\":";
    AppendInt(pid, &out_);
    out_ += ",\"tid\":";
    AppendInt(tid, &out_);
  }

  void WriteMetadataEvents(const Rank& rank, const std::vector<int64_t>& tids);
  void WriteThreadMetadata(int32_t pid, int64_t tid, std::string_view name, int64_t sort_index);
  void WriteRouting(int32_t pid, int64_t tid, const RoutingRecord& rr);
  void WriteEvent(const Rank& rank, size_t t, size_t i, int64_t tid);
  void WriteFlow(char ph, int32_t pid, int64_t tid, TimeNs ts, uint64_t id);
  void WriteCounters(const Rank& rank, size_t t);
  void WriteOtherData(const Metadata& m);
  void WriteHeaderSlot(const std::string& text);

  AtomicFile file_;
  std::string out_;
  bool first_event_ = true;
  bool finished_ = false;
  uint64_t events_written_ = 0;
  size_t ranks_written_ = 0;
  int32_t last_rank_id_ = 0;
  // Per-rank escaped-name cache.
  std::string name_cache_;
  std::vector<size_t> name_begin_, name_end_;
};

void ChromeJsonSink::AddRank(const Rank& rank) {
  if (finished_) throw std::logic_error("ChromeJsonSink: AddRank after Finish");
  ++ranks_written_;
  last_rank_id_ = rank.rank;
  const int32_t pid = ExportPid(rank.rank);
  name_cache_.clear();
  name_begin_.assign(rank.strings.size(), 0);
  name_end_.assign(rank.strings.size(), 0);

  // tids: native ids, unless missing or already taken within the rank. tid 0
  // is avoided too: trace processors reserve it for the idle (swapper) thread.
  std::vector<int64_t> tids(rank.tracks.size(), -1);
  std::vector<int64_t> used;
  int64_t next_synthetic = kFirstSyntheticTid;
  for (size_t t = 0; t < rank.tracks.size(); ++t) {
    if (rank.tracks[t].kind == TrackKind::kCounter) continue;
    int64_t tid = TrackDisplayId(rank, t);
    if (tid == 0 || std::find(used.begin(), used.end(), tid) != used.end()) {
      while (std::find(used.begin(), used.end(), next_synthetic) != used.end()) ++next_synthetic;
      tid = next_synthetic++;
    }
    used.push_back(tid);
    tids[t] = tid;
  }
  WriteMetadataEvents(rank, tids);
  int64_t routing_tid = -1;
  if (!rank.routing.empty()) {
    while (std::find(used.begin(), used.end(), next_synthetic) != used.end()) ++next_synthetic;
    routing_tid = next_synthetic;
    WriteThreadMetadata(pid, routing_tid, "MoE routing",
                        static_cast<int64_t>(2 * rank.tracks.size()));
  }

  const LaunchFlows flows = FindLaunchFlows(rank);
  for (size_t t = 0; t < rank.tracks.size(); ++t) {
    const Track& track = rank.tracks[t];
    if (track.kind == TrackKind::kCounter) {
      WriteCounters(rank, t);
      continue;
    }
    const EventTable& ev = track.events;
    for (size_t i = 0; i < ev.size(); ++i) {
      WriteEvent(rank, t, i, tids[t]);
      if (uint64_t id = flows.StartOf(t, i)) WriteFlow('s', pid, tids[t], ev.ts[i], id);
      if (uint64_t id = flows.EndOf(t, i)) WriteFlow('f', pid, tids[t], ev.ts[i], id);
    }
  }
  for (const RoutingRecord& rr : rank.routing) WriteRouting(pid, routing_tid, rr);
  Flush();
}

void ChromeJsonSink::WriteMetadataEvents(const Rank& rank, const std::vector<int64_t>& tids) {
  BeginEvent();
  out_ += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":";
  AppendInt(ExportPid(rank.rank), &out_);
  out_ += ",\"args\":{\"name\":";
  AppendJsonString(ProcessLabel(rank), &out_);
  out_ += "}}";
  BeginEvent();
  out_ += "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":";
  AppendInt(ExportPid(rank.rank), &out_);
  out_ += ",\"args\":{\"sort_index\":";
  AppendInt(rank.rank, &out_);
  out_ += "}}";
  for (size_t t = 0; t < rank.tracks.size(); ++t) {
    if (rank.tracks[t].kind == TrackKind::kCounter) continue;
    // Host threads above device streams, each in model order.
    const bool host = rank.tracks[t].kind == TrackKind::kHostThread;
    WriteThreadMetadata(ExportPid(rank.rank), tids[t], TrackLabel(rank, t),
                        static_cast<int64_t>(host ? t : t + rank.tracks.size()));
  }
  EndEvent();
}

void ChromeJsonSink::WriteThreadMetadata(int32_t pid, int64_t tid, std::string_view name,
                                         int64_t sort_index) {
  BeginEvent();
  out_ += "{\"ph\":\"M\",\"name\":\"thread_name\"";
  PidTid(pid, tid);
  out_ += ",\"args\":{\"name\":";
  AppendJsonString(name, &out_);
  out_ += "}}";
  BeginEvent();
  out_ += "{\"ph\":\"M\",\"name\":\"thread_sort_index\"";
  PidTid(pid, tid);
  out_ += ",\"args\":{\"sort_index\":";
  AppendInt(sort_index, &out_);
  out_ += "}}";
}

// MoE routing records: instants on a "MoE routing" thread of the rank.
void ChromeJsonSink::WriteRouting(int32_t pid, int64_t tid, const RoutingRecord& rr) {
  BeginEvent();
  out_ += "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"moe_routing\",\"name\":\"routing layer ";
  AppendInt(rr.layer, &out_);
  out_ += '"';
  PidTid(pid, tid);
  out_ += ",\"ts\":";
  AppendMicros(rr.ts, &out_);
  out_ += ",\"args\":{\"ep_size\":";
  AppendInt(rr.ep_size, &out_);
  if (rr.step != kNone) IntArg("step", rr.step);
  if (rr.micro_batch != kNone) IntArg("micro_batch", rr.micro_batch);
  if (rr.layer != kNone) IntArg("layer", rr.layer);
  ListArg("tokens_per_expert", rr.tokens_per_expert);
  if (!rr.expert_to_ep_rank.empty()) ListArg("expert_to_ep_rank", rr.expert_to_ep_rank);
  if (!rr.copy_expert.empty()) {
    ListArg("copy_expert", rr.copy_expert);
    ListArg("copy_ep_rank", rr.copy_ep_rank);
    ListArg("copy_tokens", rr.copy_tokens);
  }
  out_ += "}}";
  EndEvent();
}

void ChromeJsonSink::WriteEvent(const Rank& rank, size_t t, size_t i, int64_t tid) {
  const Track& track = rank.tracks[t];
  const EventTable& ev = track.events;
  const Category cat = ev.category[i];
  const bool instant = ev.dur[i] <= 0 || (ev.flags[i] & kFlagInstant) != 0;
  BeginEvent();
  out_ += instant ? "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"" : "{\"ph\":\"X\",\"cat\":\"";
  out_ += KinetoCategory(track, cat, ev.flags[i]);
  out_ += "\",\"name\":";
  Name(rank, ev.name[i]);
  PidTid(ExportPid(rank.rank), tid);
  out_ += ",\"ts\":";
  AppendMicros(ev.ts[i], &out_);
  if (!instant) {
    out_ += ",\"dur\":";
    AppendMicros(ev.dur[i], &out_);
  }
  out_ += ",\"args\":{\"category\":\"";
  out_ += CategoryName(cat);
  out_ += '"';
  if (ev.phase[i] != Phase::kNone) StrArg("phase", PhaseName(ev.phase[i]));
  if (ev.step[i] != kNone) IntArg("step", ev.step[i]);
  if (ev.micro_batch[i] != kNone) IntArg("micro_batch", ev.micro_batch[i]);
  if (ev.layer[i] != kNone) IntArg("layer", ev.layer[i]);
  if (ev.correlation[i] >= 0) IntArg("correlation", ev.correlation[i]);
  if (ev.flops[i] != 0) UintArg("flops", ev.flops[i]);
  if (ev.bytes[i] != 0) UintArg("bytes", ev.bytes[i]);
  // As recorded ("[[4096, 1024], [1024]]", "8192,512;512"): a string, as
  // the text need not be JSON.
  if (const StringId shape = ev.ShapeAt(i); shape != 0 && rank.strings.Contains(shape)) {
    Key("input_shapes");
    Name(rank, shape);
  }
  if (ev.flags[i] != 0) UintArg("flags", ev.flags[i]);
  if (track.kind == TrackKind::kDeviceStream) {
    if (rank.device_id != kNone) IntArg("device", rank.device_id);
    IntArg("stream", TrackDisplayId(rank, t));
  }
  const int32_t comm = ev.comm[i];
  if (comm >= 0 && static_cast<size_t>(comm) < track.comms.size()) {
    const CommRecord& c = track.comms[comm];
    StrArg("comm_kind", CollectiveKindName(c.kind));
    StrArg("comm_class", CommClassName(c.comm_class));
    if (c.group != 0 && rank.strings.Contains(c.group)) {
      Key("group");
      Name(rank, c.group);
    }
    if (c.sequence >= 0) IntArg("sequence", c.sequence);
    if (c.group_size != 0) IntArg("group_size", c.group_size);
    if (c.peer != kNone) IntArg("peer", c.peer);
    if (c.bytes != 0) UintArg("comm_bytes", c.bytes);
    if (!c.group_ranks.empty()) ListArg("group_ranks", track.Ranks(c.group_ranks));
    if (!c.send_splits.empty()) ListArg("send_splits", track.Splits(c.send_splits));
    if (!c.recv_splits.empty()) ListArg("recv_splits", track.Splits(c.recv_splits));
  }
  out_ += "}}";
  EndEvent();
}

void ChromeJsonSink::WriteFlow(char ph, int32_t pid, int64_t tid, TimeNs ts, uint64_t id) {
  BeginEvent();
  out_ += "{\"ph\":\"";
  out_ += ph;
  out_ += "\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":";
  AppendUint(id, &out_);
  PidTid(pid, tid);
  out_ += ",\"ts\":";
  AppendMicros(ts, &out_);
  // The flow ends on the slice that encloses ts (the device op itself).
  if (ph == 'f') out_ += ",\"bp\":\"e\"";
  out_ += '}';
  EndEvent();
}

void ChromeJsonSink::WriteCounters(const Rank& rank, size_t t) {
  const Track& track = rank.tracks[t];
  const std::string label = TrackLabel(rank, t);
  std::string name;
  AppendJsonString(label, &name);
  const std::string_view key = track.counter != CounterKind::kOther ? "bytes" : "value";
  const size_t n = std::min(track.sample_ts.size(), track.sample_value.size());
  for (size_t i = 0; i < n; ++i) {
    BeginEvent();
    out_ += "{\"ph\":\"C\",\"name\":";
    out_ += name;
    out_ += ",\"pid\":";
    AppendInt(ExportPid(rank.rank), &out_);
    out_ += ",\"ts\":";
    AppendMicros(track.sample_ts[i], &out_);
    out_ += ",\"args\":{\"";
    out_ += key;
    out_ += "\":";
    AppendDouble(track.sample_value[i], &out_);
    out_ += "}}";
    EndEvent();
  }
}

void ChromeJsonSink::WriteOtherData(const Metadata& m) {
  out_ += ",\n\"otherData\":{\"source\":";
  AppendJsonString(m.source, &out_);
  StrArg("origin", m.origin);
  StrArg("producer", m.producer);
  StrArg("device", m.device);
  Key("device_peak_flops");
  AppendDouble(m.device_peak_flops, &out_);
  UintArg("device_memory_bytes", m.device_memory_bytes);
  Key("model_flops_per_step");
  AppendDouble(m.model_flops_per_step, &out_);
  IntArg("tokens_per_step", m.tokens_per_step);
  const WorldLayout& l = m.layout;
  out_ += ",\"layout\":{\"world_size\":";
  AppendInt(l.world_size, &out_);
  IntArg("dp", l.dp);
  IntArg("tp", l.tp);
  IntArg("pp", l.pp);
  IntArg("vpp", l.vpp);
  IntArg("ep", l.ep);
  IntArg("cp", l.cp);
  IntArg("devices_per_node", l.devices_per_node);
  out_ += '}';
  UintArg("ranks", ranks_written_);
  if (!m.config_json.empty()) StrArg("config_json", m.config_json);
  out_ += ",\"attributes\":{";
  for (size_t i = 0; i < m.attributes.size(); ++i) {
    if (i) out_ += ',';
    AppendJsonString(m.attributes[i].first, &out_);
    out_ += ':';
    AppendJsonString(m.attributes[i].second, &out_);
  }
  out_ += '}';
  auto labeled = [&](std::string_view key, const std::vector<LabeledValue>& values) {
    Key(key);
    out_ += '[';
    for (size_t i = 0; i < values.size(); ++i) {
      const LabeledValue& v = values[i];
      out_ += i ? ",{\"rank\":" : "{\"rank\":";
      AppendInt(v.rank, &out_);
      IntArg("step", v.step);
      StrArg("key", v.key);
      Key("value");
      AppendDouble(v.value, &out_);
      out_ += '}';
    }
    out_ += ']';
  };
  labeled("ground_truth", m.ground_truth);
  labeled("reference", m.reference);
  out_ += '}';
}

void ChromeJsonSink::Finish(const Metadata& metadata) {
  if (finished_) throw std::logic_error("ChromeJsonSink: Finish called twice");
  finished_ = true;
  out_ += "\n],\n\"displayTimeUnit\":\"ns\"";
  WriteOtherData(metadata);
  out_ += "}\n";
  Flush();
  // Kineto files name their rank in distributedInfo; only meaningful for a
  // one-rank file.
  if (ranks_written_ == 1) {
    // `"rank": N` with the space: HTA finds a file's rank with the regular
    // expression "rank":\s+(\d+) and takes rank 0 without it.
    std::string info = "\"distributedInfo\":{\"rank\": ";
    AppendInt(last_rank_id_, &info);
    info += ", \"world_size\": ";
    AppendInt(metadata.layout.world_size > 0 ? metadata.layout.world_size : 1, &info);
    info += "},";
    WriteHeaderSlot(info);  // at most 11 + 11 + 38 bytes: always fits
  }
  file_.Commit();
}

void ChromeJsonSink::WriteHeaderSlot(const std::string& text) {
  std::FILE* f = file_.file();
  if (text.size() > kHeaderSlot || std::fflush(f) != 0 || std::fseek(f, 1, SEEK_SET) != 0 ||
      std::fwrite(text.data(), 1, text.size(), f) != text.size() ||
      std::fseek(f, 0, SEEK_END) != 0) {
    ThrowInputError(file_.path(), "", std::string("write failed: ") + std::strerror(errno));
  }
}

}  // namespace

std::unique_ptr<TraceSink> CreateChromeJsonSink(const std::string& path) {
  return std::make_unique<ChromeJsonSink>(path);
}

}  // namespace moetrace
