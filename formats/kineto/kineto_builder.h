// Builds a Rank from Kineto events as they are read (one call per event),
// then links launches, flows, steps and communication records in Finish().
// Internal to formats/kineto.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "formats/kineto/kineto_field_stats.h"
#include "formats/kineto/kineto_shapes.h"
#include "formats/trace.h"

namespace moetrace {

// One trace event as read from the file; string views live until the next event.
struct KinetoEvent {
  char ph = 0;
  bool has_cat = false;
  std::string_view cat;
  std::string_view name;
  int64_t pid = 0;
  int64_t tid = 0;
  // pid / tid came from KinetoEventSink::SyntheticId (the last such key).
  bool pid_synthetic = false, tid_synthetic = false;
  bool has_ts = false, has_dur = false, has_flow_id = false;
  int64_t ts = 0;   // ns, relative to baseTimeNanoseconds when present
  int64_t dur = 0;  // ns
  int64_t flow_id = -1;
  // args
  int64_t correlation = -1;
  int64_t external_id = -1;
  int64_t stream = -1;   // args.stream / args.streamId
  int64_t device = -1;   // args.device
  int64_t bytes = -1;    // args.bytes
  int64_t mem_device_type = -1, mem_device_id = -1;
  bool has_mem_bytes = false;
  int64_t mem_bytes = 0, total_allocated = -1, total_reserved = -1;
  std::string_view meta_name;  // args.name of metadata events
  int32_t comm_args = -1;      // index from KinetoBuilder::NewCommArgs
  // args["Input Dims"] as its JSON text (an array), empty when absent.
  std::string_view input_dims;
  // A value the event cannot do without (ts, pid, tid) was unusable: the
  // event is counted (skipped.event.<key>) and dropped.
  bool rejected = false;
};

// record_param_comms arguments (also copied onto NCCL kernels by newer Kineto).
struct KinetoCommArgs {
  std::string collective, pg_name, pg_desc, dtype;
  int64_t in_nelems = -1, out_nelems = -1, group_size = -1;
  int64_t rank_start = -1, rank_stride = -1, src_rank = -1, dst_rank = -1;
  std::vector<int32_t> group_ranks;
  std::vector<uint64_t> in_splits, out_splits;
  void Clear() { *this = KinetoCommArgs(); }
};

// Where the event reader puts what it reads: the builder, or a recorder
// that keeps a part of the file read on another thread for the builder.
class KinetoEventSink {
 public:
  virtual void Add(const KinetoEvent& e) = 0;
  // A fresh record for the comm arguments of the event being read.
  virtual KinetoCommArgs& NewCommArgs(int32_t* index) = 0;
  virtual KinetoCommArgs& CommArgsAt(int32_t index) = 0;
  // Stable negative ids for non-numeric `key` ("pid" or "tid") strings
  // ("Spans", "Traces"), in order of first appearance.
  virtual int64_t SyntheticId(std::string_view key, std::string_view s) = 0;
  virtual void CountTimestamp(bool integral, bool from_string) = 0;
  virtual void CountField(FieldFix fix, std::string_view key, int64_t n) = 0;

 protected:
  ~KinetoEventSink() = default;
};

class KinetoBuilder final : public KinetoEventSink {
 public:
  explicit KinetoBuilder(Rank* rank);

  void Add(const KinetoEvent& e) override;
  KinetoCommArgs& NewCommArgs(int32_t* index) override;
  KinetoCommArgs& CommArgsAt(int32_t index) override { return comm_args_[size_t(index)]; }
  int64_t SyntheticId(std::string_view key, std::string_view s) override;
  void CountTimestamp(bool integral, bool from_string) override;
  void CountField(FieldFix fix, std::string_view key, int64_t n) override {
    field_stats_.Count(fix, key, n);
  }
  // Links everything and fills `rank`. `base_time_ns` is added to every time.
  void Finish(int64_t base_time_ns);

 private:
  struct Key {
    int64_t a, b;
    bool operator==(const Key& o) const { return a == o.a && b == o.b; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<int64_t>()(k.a * 0x9E3779B97F4A7C15ull ^ k.b);
    }
  };
  struct TrackInfo {
    bool device = false;
    int64_t a = 0, b = 0;  // pid,tid or device,stream
    bool has_step = false;
    int64_t n_comm = 0, n_compute = 0, n_copy = 0;
  };
  struct Flow {  // 24 bytes: CUDA traces hold one flow end per launch and per op
    int64_t id, ts;
    uint32_t key;  // index into flow_keys_ ((pid, tid) of the end)
    bool start;
  };
  struct CommCtx {  // a host op that carries or names a collective
    uint32_t track;
    int64_t ts, end;
    int32_t args;  // -1 when only the name says what it is
    CollectiveKind kind;
  };
  struct CommRef {  // a comm kernel waiting for its record (Event::comm until Finish)
    int32_t args = -1;
    int64_t external_id = -1;
    CollectiveKind name_kind = CollectiveKind::kNone;
    bool name_p2p = false;
  };
  struct MemTracks {
    int32_t allocated = -1, reserved = -1;
    bool delta = false;  // values are per-event deltas ("Bytes" only)
  };
  enum Skip {
    kSkipMetadata, kSkipTraceSpan, kSkipOverhead, kSkipFlow, kSkipGlobalInstant,
    kSkipUnknownCategory, kSkipNoCategory, kSkipUnknownPhase, kSkipNoTimestamp,
    kSkipFlowsDroppedEarly, kSkipTimeOutOfRange, kSkipCount
  };

  uint32_t HostTrack(int64_t pid, int64_t tid);
  uint32_t DeviceTrack(int64_t device, int64_t stream);
  void AddTo(uint32_t track, const Event& ev);
  void CountRead(std::string_view cat);
  void AddMemory(const KinetoEvent& e);
  void AddComplete(const KinetoEvent& e);

  void LinkFlows();
  void LinkLaunches();
  void StampSteps();
  void BuildCommRecords();
  void NameTracks();
  void FinishCounters();
  void FlushStats();
  int64_t FindEvent(uint32_t track, int64_t ts, bool device) const;

  Rank* rank_;
  std::vector<TrackInfo> info_;
  std::unordered_map<Key, uint32_t, KeyHash> host_, dev_;
  Key last_host_key_{INT64_MIN, INT64_MIN};
  uint32_t last_host_track_ = 0;
  std::unordered_map<Key, std::string, KeyHash> thread_names_;
  std::unordered_map<std::string, int64_t> synthetic_ids_;
  std::unordered_map<Key, MemTracks, KeyHash> mem_;
  std::vector<Flow> flows_;
  std::vector<Key> flow_keys_;
  std::unordered_map<Key, uint32_t, KeyHash> flow_key_index_;
  std::vector<CommCtx> comm_ctx_;
  std::vector<CommRef> comm_refs_;
  std::vector<KinetoCommArgs> comm_args_;
  std::unordered_map<int64_t, int32_t> rpc_by_external_id_;
  std::vector<std::pair<std::string, int64_t>> read_counts_;
  size_t last_read_ = 0;
  int64_t skipped_[kSkipCount] = {};
  int64_t device_ops_without_correlation_ = 0;
  // Flows are kept only while they may be needed: until the first device op
  // shows it carries a correlation (CUDA, ROCm: every flow repeats one), or
  // from the first device op without one (torch_npu: flows are the only link).
  enum class FlowMode { kUndecided, kNeeded, kUnneeded } flow_mode_ = FlowMode::kUndecided;
  int64_t flows_dropped_ = 0;
  void SawDeviceOp(bool has_correlation);
  KinetoFieldStats field_stats_;
  int64_t ts_non_integer_ = 0, ts_strings_ = 0, negative_durations_ = 0;
  int64_t flows_linked_ = 0, launches_by_correlation_ = 0, comm_from_kernel_args_ = 0,
          comm_from_external_id_ = 0, comm_from_host_context_ = 0, comm_from_name_only_ = 0,
          group_ranks_not_expanded_ = 0;
  // Group members spelled out from a rank start and stride, per track.
  static constexpr size_t kMaxExpandedRanks = size_t{1} << 26;
  bool legacy_schema_ = false;
  std::string dims_scratch_;  // Input Dims being normalized
  bool any_shape_ = false;    // some host op carried Input Dims
  ShapeLinks shape_links_;
};

}  // namespace moetrace
