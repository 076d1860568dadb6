// The in-memory trace model shared by every part of moetrace.
//
// A trace is a set of ranks; a rank owns its tracks (host threads, device
// streams, counters), its interned strings and its MoE routing records.
// Events are stored column by column (struct of arrays) because every hot
// pass reads two or three fields of millions of events. Time is int64 ns.
//
// Absent optional integers are -1 (kNone); absent FLOPs/bytes are 0.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/string_table.h"

namespace moetrace {

using TimeNs = int64_t;

// What importers keep (an event outside is skipped and counted as
// skipped.time_out_of_range): no profiler records an op longer than a
// day, and starts within +-2^62 ns keep every end and every difference of
// two times inside int64.
constexpr TimeNs kMaxEventDurNs = TimeNs(86'400) * 1'000'000'000;
constexpr TimeNs kMaxAbsTimeNs = TimeNs(1) << 62;
constexpr bool EventTimesInRange(TimeNs ts, TimeNs dur) {
  return ts >= -kMaxAbsTimeNs && ts <= kMaxAbsTimeNs && dur <= kMaxEventDurNs;
}
inline constexpr int32_t kNone = -1;

// What an event is. Stable numeric values: they are stored in .mtrace files.
enum class Category : uint8_t {
  kCompute = 0,     // device kernel / AI Core / vector task
  kCollective = 1,  // device-side collective (all-to-all, all-reduce, ...)
  kP2P = 2,         // device-side pipeline send / recv
  kCopy = 3,        // memcpy / memset / DMA / swap
  kLaunch = 4,      // host call that issues device work (launch, enqueue)
  kHostOp = 5,      // framework operator or annotation on a host thread
  kSync = 6,        // host or device wait / synchronize
  kMarker = 7,      // step markers, instants, annotations with no cost
};
inline constexpr int kCategoryCount = 8;
std::string_view CategoryName(Category c);
bool ParseCategory(std::string_view name, Category* out);

enum class Phase : uint8_t {
  kNone = 0, kForward = 1, kBackward = 2, kRecompute = 3, kOptimizer = 4,
};
std::string_view PhaseName(Phase p);

// Communication class of METRICS.md.
enum class CommClass : uint8_t { kOther = 0, kEP = 1, kTP = 2, kPP = 3, kDP = 4 };
inline constexpr int kCommClassCount = 5;
std::string_view CommClassName(CommClass c);  // "other", "EP", "TP", "PP", "DP"

enum class CollectiveKind : uint8_t {
  kNone = 0, kAllToAll = 1, kAllToAllV = 2, kAllReduce = 3, kAllGather = 4,
  kReduceScatter = 5, kBroadcast = 6, kReduce = 7, kBarrier = 8, kSend = 9,
  kRecv = 10, kOther = 11,
};
std::string_view CollectiveKindName(CollectiveKind k);

enum class TrackKind : uint8_t { kHostThread = 0, kDeviceStream = 1, kCounter = 2 };
std::string_view TrackKindName(TrackKind k);  // "host_thread", "device_stream", "counter"

// What a track is used for, when known.
enum class TrackRole : uint8_t {
  kUnspecified = 0,
  kHostMain = 1,      // framework (Python) thread: ops, launches or enqueues
  kHostDispatch = 2,  // dequeue / dispatch thread of the task queue
  kHostOther = 3,
  kDeviceCompute = 4,
  kDeviceComm = 5,
  kDeviceCopy = 6,    // copies and swap
  kDeviceOther = 7,
};
std::string_view TrackRoleName(TrackRole r);

// What a counter track measures. Memory counters are in bytes.
enum class CounterKind : uint8_t {
  kOther = 0,
  kMemAllocated = 1,   // total allocated
  kMemReserved = 2,    // total reserved by the caching allocator
  kMemWeights = 3,
  kMemGradients = 4,
  kMemOptimizer = 5,
  kMemActivations = 6,
  kMemRecompute = 7,   // recompute buffers
  kMemSwap = 8,        // swap buffers
  kMemComm = 9,        // communication buffers
};
inline constexpr int kCounterKindCount = 10;
std::string_view CounterKindName(CounterKind k);  // "other", "allocated", ..., "comm"

// Event flags (bit set).
enum EventFlag : uint16_t {
  kFlagSwapOut = 1 << 0,       // device -> host swap
  kFlagSwapIn = 1 << 1,        // host -> device swap
  kFlagHostToDevice = 1 << 2,
  kFlagDeviceToHost = 1 << 3,
  kFlagDeviceToDevice = 1 << 4,
  kFlagMemset = 1 << 5,
  kFlagBlocking = 1 << 6,      // a host call that blocks until the device is done
  kFlagInstant = 1 << 7,       // instant event (duration 0 by definition)
  kFlagStepMarker = 1 << 8,    // marks a step window on a host thread (ProfilerStep#N)
};

// A run of elements in one of a track's flat arrays: T says which
// (int32_t: Track::comm_ranks, uint64_t: Track::comm_splits), so a range
// cannot be read from the other array.
template <typename T>
struct ElementRange {
  uint32_t begin = 0;
  uint32_t size = 0;
  bool empty() const { return size == 0; }
  bool operator==(const ElementRange&) const = default;
};
using RankList = ElementRange<int32_t>;
using SplitList = ElementRange<uint64_t>;

// One collective or p2p operation as seen by one rank. Its list fields are
// ranges of its track's flat arrays (Track::Ranks / Track::Splits read
// them): an MoE rank has millions of all-to-all records, and a vector each
// cost an allocation and a cache miss per record.
struct CommRecord {
  CollectiveKind kind = CollectiveKind::kNone;
  CommClass comm_class = CommClass::kOther;
  StringId group = 0;           // group / process-group name (interned)
  int64_t sequence = -1;        // sequence number within the group: matches ranks
  int32_t group_size = 0;
  int32_t peer = kNone;         // p2p peer rank
  uint64_t bytes = 0;           // this rank's message size
  RankList group_ranks;  // global ranks of the group, when known
  // Per-peer split sizes of an all-to-all(v), in the source's unit (bytes
  // for tracegen, elements for Kineto); only their ratios are used.
  SplitList send_splits;
  SplitList recv_splits;
  // Compares the ranges, not the elements: Track's == compares contents.
  bool operator==(const CommRecord&) const = default;
};

// Row view of one event; the storage is EventTable.
struct Event {
  TimeNs ts = 0;
  TimeNs dur = 0;
  StringId name = 0;
  Category category = Category::kCompute;
  Phase phase = Phase::kNone;
  uint16_t flags = 0;
  int64_t correlation = -1;     // links a host launch to its device op
  int32_t step = kNone;
  int32_t micro_batch = kNone;
  int32_t layer = kNone;
  int32_t comm = kNone;         // index into Track::comms
  uint64_t flops = 0;
  uint64_t bytes = 0;           // bytes moved / touched
  StringId shape = 0;           // input shapes as the trace records them (interned); 0 = none
  bool operator==(const Event&) const = default;
};

// Events of one track, one vector per field.
struct EventTable {
  std::vector<TimeNs> ts;
  std::vector<TimeNs> dur;
  std::vector<StringId> name;
  std::vector<Category> category;
  std::vector<Phase> phase;
  std::vector<uint16_t> flags;
  std::vector<int64_t> correlation;
  std::vector<int32_t> step;
  std::vector<int32_t> micro_batch;
  std::vector<int32_t> layer;
  std::vector<int32_t> comm;
  std::vector<uint64_t> flops;
  std::vector<uint64_t> bytes;
  // Lazy column: empty until an event with a shape is appended, then one
  // per event (most tracks record no shapes; they pay nothing). Code that
  // fills the columns directly must keep it empty or sized like `ts`.
  std::vector<StringId> shape;

  size_t size() const { return ts.size(); }
  StringId ShapeAt(size_t i) const { return shape.empty() ? 0 : shape[i]; }
  bool empty() const { return ts.empty(); }
  void Append(const Event& e);
  Event Get(size_t i) const;
  void Reserve(size_t n);
  void Resize(size_t n);  // new rows take the defaults of Event
  void Clear();
  // Reorders rows by (ts, original position); importers call it once.
  void SortByTime();
  bool IsSortedByTime() const;
  TimeNs End(size_t i) const { return ts[i] + dur[i]; }
  bool operator==(const EventTable&) const = default;
};

struct Track {
  TrackKind kind = TrackKind::kHostThread;
  TrackRole role = TrackRole::kUnspecified;
  CounterKind counter = CounterKind::kOther;  // counters only
  StringId name = 0;
  int64_t native_id = -1;  // thread id or stream id in the source
  // Streams of a trace cut by steps or time (trace_selection.h): the latest
  // end of the ops the cut dropped before its first kept op (INT64_MIN: none
  // was), and the earliest start of those it dropped after its last kept op
  // (INT64_MAX: none). The analyzer's host waits start at the previous op's
  // end and a step's window ends where the next step's first op starts, so
  // the cut's first wait and last window stay the whole trace's.
  TimeNs prior_end = INT64_MIN;
  TimeNs after_start = INT64_MAX;
  // The op that starts at after_start, whose host wait covers the time
  // after the last kept op: its launch end (INT64_MIN: not launched), the
  // last host sync that ended before that launch on its launch threads
  // (INT64_MIN: none), and its name, so that the wait is measured and told
  // sync-bound or dispatch-bound as in the whole trace.
  TimeNs after_launch = INT64_MIN;
  TimeNs after_sync = INT64_MIN;
  StringId after_name = 0;
  EventTable events;             // threads and streams
  std::vector<CommRecord> comms; // referenced by events.comm
  std::vector<int32_t> comm_ranks;    // elements of CommRecord::group_ranks
  std::vector<uint64_t> comm_splits;  // elements of CommRecord::{send,recv}_splits
  std::vector<TimeNs> sample_ts;      // counters: sample times
  std::vector<double> sample_value;   // counters: value from that time on

  // The elements of a list of one of this track's records (the range must
  // come from this track: importers and the native reader guarantee it).
  std::span<const int32_t> Ranks(RankList r) const {
    return {comm_ranks.data() + r.begin, r.size};
  }
  std::span<const uint64_t> Splits(SplitList r) const {
    return {comm_splits.data() + r.begin, r.size};
  }
  std::span<uint64_t> Splits(SplitList r) { return {comm_splits.data() + r.begin, r.size}; }
  // Appends elements (not a span of this track's own arrays) and returns
  // their range; throws std::length_error past 2^32 - 1 elements in a track.
  RankList AddRanks(std::span<const int32_t> v);
  SplitList AddSplits(std::span<const uint64_t> v);
  // Whether every record's lists lie inside the arrays.
  bool CommListsValid() const;
  // Equal fields, comm records equal in content (wherever their elements
  // lie in the flat arrays).
  bool operator==(const Track& o) const;
};

// Tokens each expert received in one MoE layer (one micro-batch of a step).
struct RoutingRecord {
  TimeNs ts = 0;
  int32_t step = kNone;
  int32_t micro_batch = kNone;
  int32_t layer = kNone;
  int32_t ep_size = 0;                   // EP ranks the experts are spread over
  std::vector<int64_t> tokens_per_expert;
  std::vector<int32_t> expert_to_ep_rank;  // placement; empty = contiguous blocks
  // Redundant copies of hot experts (parallel lists, one entry per copy):
  // the expert, the EP rank holding the copy, and how many of this record's
  // tokens of that expert went to the copy. tokens_per_expert still counts
  // every token of an expert; the copies say which EP rank received them.
  std::vector<int32_t> copy_expert;
  std::vector<int32_t> copy_ep_rank;
  std::vector<int64_t> copy_tokens;
  bool operator==(const RoutingRecord&) const = default;
};

struct Rank {
  int32_t rank = 0;
  int32_t device_id = kNone;
  int64_t pid = -1;
  std::string host;
  StringTable strings;
  std::vector<Track> tracks;
  std::vector<RoutingRecord> routing;
  // What the importer read and skipped, by kind ("read.kernel",
  // "skipped.unmatched_flow", ...): nothing is dropped silently.
  std::vector<std::pair<std::string, int64_t>> import_stats;
  bool operator==(const Rank&) const = default;

  Track& AddTrack(TrackKind kind, TrackRole role, std::string_view name,
                  int64_t native_id = -1);
  void AddStat(std::string_view key, int64_t n);  // adds to an existing key
  size_t EventCount() const;
};

// A labelled number: ground truth of tracegen or a profiler's own figure.
// step == -1 means summed over the steps of the trace. Keys follow the JSON
// paths of METRICS.md below ranks[i] ("breakdown.comm_exposed_ns",
// "comm_by_class.EP.exposed_ns", "memory.peak_allocated_bytes", ...).
struct LabeledValue {
  int32_t rank = 0;
  int32_t step = kNone;
  std::string key;
  double value = 0;
  bool operator==(const LabeledValue&) const = default;
};

struct WorldLayout {
  int32_t world_size = 0;  // 0 = unknown, for every field
  int32_t dp = 0, tp = 0, pp = 0, vpp = 0, ep = 0, cp = 0;
  int32_t devices_per_node = 0;
  bool operator==(const WorldLayout&) const = default;
};

struct Metadata {
  std::string source;        // "tracegen", "kineto", "ascend"; kept by convert
  std::string origin;        // where it came from (path, preset)
  std::string producer;      // tool and version that wrote it
  WorldLayout layout;
  std::string device;              // "Ascend 910B", "NVIDIA A100", ...
  double device_peak_flops = 0;    // per device, dense BF16
  uint64_t device_memory_bytes = 0;
  double model_flops_per_step = 0; // whole job, when the model is known
  int64_t tokens_per_step = 0;
  std::string config_json;         // generating configuration (RunConfig as JSON)
  std::vector<LabeledValue> ground_truth;
  std::vector<LabeledValue> reference;  // profiler's own figures
  std::vector<std::pair<std::string, std::string>> attributes;
  bool operator==(const Metadata&) const = default;
};

// A whole trace in memory: for tests and small traces. Large traces are
// streamed rank by rank through TraceSource / TraceSink (trace_io.h).
struct Trace {
  Metadata metadata;
  std::vector<Rank> ranks;
  bool operator==(const Trace&) const = default;
};

}  // namespace moetrace
