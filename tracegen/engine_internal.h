// Internals of the tracegen engine (engine.h), shared by its source files:
// the op model (Op and the blocks of ops a rank runs), the per-rank
// simulation state (RankSim), and EngineImpl, whose members are defined by
// concern in engine.cc (simulation loop, public API), engine_routing.cc
// (expert routing and placement), engine_ops.cc (op costs and sizes),
// engine_layers.cc (a layer's forward and backward ops), engine_schedule.cc
// (pipeline tasks, prologue, optimizer) and engine_emit.cc (trace output).
// Only the engine includes this header.
#pragma once

#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "formats/trace.h"
#include "tracegen/documents.h"
#include "tracegen/model.h"
#include "tracegen/proto/run_config.pb.h"
#include "tracegen/routing.h"
#include "tracegen/schedule.h"

namespace moetrace::tracegen {

constexpr TimeNs kBaseTime = 1'000'000'000;  // traces start at 1 s
constexpr TimeNs kNever = std::numeric_limits<TimeNs>::min();

enum StreamId : uint8_t { kSCompute = 0, kSComm = 1, kSSend = 2, kSRecv = 3, kSCopy = 4, kSComm2 = 5, kStreams = 6 };
enum OpClass : uint8_t { kMatMul, kFlashFwd, kFlashBwd, kVector, kGrouped };

// Operator names; the backward variant of name n is n + "Grad".
#define MT_OP_NAMES(X)                                                                     \
  X(RMSNorm) X(AllGatherTp) X(MatMulQProj) X(MatMulKvProj) X(MatMulQkvProj)                \
  X(FlashAttentionScore) X(MatMulOProj) X(ReduceScatterTp) X(AllReduceTp) X(AddRMSNorm)    \
  X(MatMulGateUp) X(SwiGlu) X(MatMulDown) X(MoeGatingTopK) X(MoeInitRouting)               \
  X(AllToAllVDispatch) X(MatMulSharedGateUp) X(SwiGluShared) X(MatMulSharedDown)           \
  X(GroupedMatmulGateUp) X(SwiGluExperts) X(GroupedMatmulDown) X(AllToAllVCombine)         \
  X(MoeFinalizeRouting) X(Embedding) X(MatMulLmHead) X(CrossEntropy) X(Send) X(Recv)       \
  X(SwapOut) X(SwapIn) X(ReduceScatterGradsDp) X(ReduceScatterGradsEdp)                    \
  X(AllReduceGradNorm) X(AdamW) X(AllGatherParamsDp) X(AllGatherParamsEdp) X(ExpertMigration) X(AllGatherTokenCounts) \
  X(ExpertCopySync) X(MatMulMtpProj) X(AllToAllVDispatchInter) X(AllToAllVDispatchIntra)           \
  X(AllToAllVCombineIntra) X(AllToAllVCombineInter)  \
  X(CastRouterLogits) X(ReduceSumTopkProbs) X(DivTopkProbs)                \
  X(ReduceMeanAuxProbs) X(HistcTokensPerExpert) X(MulAuxLoss) X(ReduceSumAuxLoss)          \
  X(CumsumGroupList) X(AddSharedExpert)                                                    \
  X(ArgSortTopkIndices) X(FloorDivTokenIndices) X(RepeatInterleaveExpertIds)             \
  X(SumTokensPerLocalExpert) X(SumRepeats) X(AllReduceEmbeddingGrads)
enum OpName : uint16_t {
#define MT_ENUM(n) k##n,
  MT_OP_NAMES(MT_ENUM)
#undef MT_ENUM
  kOpNameCount
};
#undef MT_OP_NAMES

struct Op {
  // Fields grouped by size (no padding holes): blocks hold thousands of ops
  // and every op is copied into the block and again for the backward.
  TimeNs dur = 0;
  uint64_t flops = 0, bytes = 0;
  TimeNs host_work = 0;   // host CPU work after the sync, before issuing (e.g. token-count lists)
  int64_t wait_prefetch = -1;  // waits for the prefetched swap-in of this ActKey
  int64_t prefetch_key = -1;   // this op is a prefetched swap-in of that ActKey
  // communication
  uint64_t group = 0;     // group uid (collectives)
  uint64_t xkey = 0;      // cross-rank key (collective: group+seq, p2p: transfer id)
  int64_t seq = -1;
  int32_t mb = kNone, layer = kNone;
  int32_t dep = -1, dep2 = -1;
  int32_t sync_on = -1;   // op whose end the host waits for (host_sync; and dep2's, when set)
  int32_t group_size = 0;
  int32_t peer = kNone;   // p2p
  int32_t a2a = -1;       // index into Block::a2a
  int32_t routing = -1;   // index into Block::a2a whose counts are recorded here
  uint16_t name = 0;
  uint16_t flags = 0;
  bool grad = false;
  uint8_t stream = kSCompute;
  Category cat = Category::kCompute;
  Phase phase = Phase::kNone;
  bool host_sync = false;  // host blocks until `sync_on` (and `dep2`, when set) ends before issuing this op
  bool after_all = false; // starts after every earlier device op (gradients ready)
  CollectiveKind ckind = CollectiveKind::kNone;
  CommClass cclass = CommClass::kOther;
};
static_assert(sizeof(Op) == 120);

struct MemAction {
  int32_t op;
  bool at_end;
  uint8_t cat;  // CounterKind
  int64_t delta;
};

struct A2AInfo {
  std::vector<uint64_t> send, recv;  // bytes per member
  std::vector<int64_t> local_counts;  // routing record (tokens per expert)
  std::vector<int32_t> placement;
  // Redundant copies: expert, EP position, this rank's tokens sent to it.
  std::vector<int32_t> copy_expert, copy_pos;
  std::vector<int64_t> copy_tokens;
  int32_t group_pos = 0;
};

// The ops of one schedule item (or of the step prologue / optimizer).
struct Block {
  std::vector<Op> ops;
  std::vector<MemAction> mem;
  std::vector<A2AInfo> a2a;
  void Clear() {
    ops.clear();
    mem.clear();
    a2a.clear();
  }
};

// Routing of one (step, micro-batch, layer) in one EP group.
struct GroupRouting {
  int members = 0;
  // Physical experts: the experts, then their redundant copies (copy_of:
  // the expert of each copy); counts and placement cover all of them.
  std::vector<int32_t> counts;     // members x physical experts
  std::vector<int32_t> placement;  // physical expert -> position
  std::vector<int32_t> copy_of;
  TimeNs a2a_dur = 0;
  // Hierarchical all-to-all: its inter-node (RoCE) and intra-node (HCCS)
  // steps; they sum to a2a_dur (0 when flat or within one node).
  TimeNs a2a_inter_dur = 0, a2a_intra_dur = 0;
  // Each step run as its own collective (adaptive pipe) lasts as long as its
  // own members need: by node position (inter-node step) and by node (intra).
  std::vector<TimeNs> inter_by_pos, intra_by_node;
  int uses_left = 0;
};

struct CrossEntry {
  int32_t arrived = 0;
  int32_t expected = 0;
  TimeNs max_arrival = kNever;
  TimeNs dur = 0;
  TimeNs done = kNever;  // p2p: send end
};

// Uid of a communication group: kind (1 EP, 2 TP, 3 DP, 4 EDP, 5 world,
// 6/7 a hierarchical all-to-all's inter/intra step, 8 the embedding group of
// the first stage and the MTP's), pipeline stage, index of the group within
// its kind and stage.
inline uint64_t GroupUid(int kind, int stage, int index) {
  return (uint64_t(kind) << 56) | (uint64_t(stage) << 36) | uint64_t(index);
}

using CrossMap = std::unordered_map<uint64_t, CrossEntry>;
// A stage's collectives: per group uid, the entries by sequence number.
// Members look up the same entries in sequence, so this stays in cache where
// one hash node per collective (millions) would miss on every lookup.
struct StageCross {
  std::unordered_map<uint64_t, std::vector<CrossEntry>> groups;
  CrossEntry& At(const Op& op);  // grows
  const CrossEntry* Find(const Op& op) const;
};
using RoutingCache = std::unordered_map<uint64_t, GroupRouting>;

// Pass 1 runs pipeline stages on several threads (engine_pass1.cc). Every
// collective but the world all-reduce stays within a stage, so its entry
// lives in the stage's map, touched by one thread; p2p transfers and the
// world all-reduce cross stages and live here, under `mu`.
struct SharedCross {
  std::mutex mu;
  std::condition_variable cv;
  CrossMap* map = nullptr;
  uint64_t gen = 0;  // bumped by every change: a blocked thread waits for it
  int finished = 0;
  bool stop = false;  // a thread failed or every thread is blocked
  // Per thread: the gen it waits to move past, or kRunning / kDone.
  static constexpr uint64_t kRunning = ~uint64_t{0}, kDone = kRunning - 1;
  std::vector<uint64_t> blocked_at;
  // True when no other thread can change anything: each is done or waits
  // for a change that has not come.
  bool OthersStuck(int self) const {
    for (size_t t = 0; t < blocked_at.size(); ++t)
      if (int(t) != self && blocked_at[t] != kDone && blocked_at[t] != gen) return false;
    return true;
  }
  bool AnyWaiting() const {
    for (uint64_t b : blocked_at)
      if (b < kDone) return true;
    return false;
  }
  // After a change (under mu). Waiting threads are woken at the end of the
  // changer's round, not per change: one round of theirs then takes in a
  // whole round's sends instead of one.
  void Changed() { ++gen; }
};

// One rank's simulation state.
struct RankSim {
  int rank = 0, stage = 0;
  // What the run writes outside the rank: pass 1 records arrivals and send
  // ends in the engine's map (`cross`) and shares the engine's routing
  // cache; pass 2 only reads the map (cross == nullptr) and uses its
  // emitter's cache, keeping a group's routing for its next members, so
  // emitters on different threads share nothing mutable.
  StageCross* cross = nullptr;   // the stage's collectives (pass 1)
  SharedCross* shared = nullptr;  // the cross-stage one (pass 1)
  RoutingCache* routing = nullptr;
  std::mutex* routing_mu = nullptr;  // pass 2: the cache is shared by emitters
  bool keep_routing = false;
  // A cost probe (probe.cc): collectives end at this rank's own arrival +
  // their duration and receives at once, as if every peer were in step.
  bool solo = false;
  int64_t events = 0;  // device events emitted
  int step = 0;
  int phase = 0;  // 0 prologue, 1 items, 2 optimizer, 3 step end, 4 done
  size_t item = 0;
  Block block;
  size_t op = 0;
  std::vector<TimeNs> launch, end;
  std::vector<uint8_t> state;  // 0 new, 1 host issued, 2 arrived
  TimeNs ready[kStreams] = {kBaseTime, kBaseTime, kBaseTime, kBaseTime, kBaseTime, kBaseTime};
  TimeNs t_py = kBaseTime, t_deq = kBaseTime;
  TimeNs last_dev_end = kBaseTime;
  std::vector<std::pair<uint64_t, int64_t>> seq;  // group uid -> next sequence
  // Built once per rank instead of per layer and micro-batch.
  std::vector<int32_t> tp_members, ep_members;
  std::vector<Op> bwd_scratch;  // LayerBackward's copy of the forward ops
  // The engine's attention factors of step `attention_step` (every DP rank's;
  // entries of a node-based map, never erased): one lookup under the lock
  // per step instead of one per layer and micro-batch.
  int attention_step = -1;
  const std::vector<double>* attention = nullptr;
  std::vector<int32_t> dp_members, edp_members;
  // The two steps of a hierarchical all-to-all (adaptive pipe): the EP
  // members at this rank's position in their node (inter-node step) and the
  // EP members of this rank's node (intra-node step).
  std::vector<int32_t> ep_inter_members, ep_intra_members;
  int ep_node_index = 0;  // this rank's node among its EP group's nodes
  // Adaptive pipe: weight-gradient halves of backward matmuls waiting to be
  // issued after the chain's next expert all-to-all (EngineImpl::FlushWgrads).
  std::vector<Op> pending_wgrads;
  // Releases that wait for a pending weight gradient (op: its index in
  // pending_wgrads): x^T dy reads the layer's activations, so they stay
  // until it has run. FlushWgrads moves them to the block with the ops.
  std::vector<MemAction> pending_wgrad_mem;
  // While a fused F&B pair is built (adaptive pipe): the backward task's last
  // weight gradients stay pending, issued after the fused pair.
  bool defer_wgrads = false;
  // While a cooldown backward is built (adaptive pipe): every weight
  // gradient of the chunk stays pending, issued after its p2p send.
  bool zb_wgrads = false;
  // Members of this rank's group of kind 1 EP, 2 TP, 3 DP, 4 EDP.
  const std::vector<int32_t>& Members(int kind, const ModelShape& shape) {
    std::vector<int32_t>& m = kind == 1 ? ep_members : kind == 2 ? tp_members : kind == 3 ? dp_members : edp_members;
    if (m.empty())
      m = kind == 1 ? shape.EpGroup(rank) : kind == 2 ? shape.TpGroup(rank) : kind == 3 ? shape.DpGroup(rank) : shape.EdpGroup(rank);
    return m;
  }
  // emission
  Rank* out = nullptr;
  size_t marker_index = 0;
  TimeNs step_host_start = 0;
  std::vector<std::tuple<TimeNs, int, uint8_t, int64_t>> mem_events;  // time, order, cat, delta
  static constexpr StringId kUninterned = ~StringId{0};
  StringId dev_name[kOpNameCount][2] = {};
  StringId launch_name[kOpNameCount][2] = {};
  StringId enqueue_name[kOpNameCount][2] = {};
  // kind 0 = device op, 1 = aclnn launch, 2 = task-queue enqueue; the
  // strings are built once per engine (op_names), interned once per rank.
  const std::string (*op_names)[kOpNameCount][2] = nullptr;
  StringId OpNameId(int kind, int n, bool grad) {
    StringId& id = (kind == 0 ? dev_name : kind == 1 ? launch_name : enqueue_name)[n][grad];
    if (id == kUninterned) id = out->strings.Intern(op_names[kind][n][grad]);
    return id;
  }
  // Fixed host-event names, interned on first use.
  StringId sync_stream_name = kUninterned, split_lists_name = kUninterned,
           sync_device_name = kUninterned, sync_h2d_name = kUninterned, sync_item_name = kUninterned;
  StringId Fixed(StringId& id, std::string_view s) {
    if (id == kUninterned) id = out->strings.Intern(s);
    return id;
  }
  std::vector<std::pair<uint64_t, StringId>> group_names;  // uid (or ~peer) -> name
  template <typename F>
  StringId GroupName(uint64_t key, F make) {
    for (auto& [k, id] : group_names)
      if (k == key) return id;
    StringId id = out->strings.Intern(make());
    group_names.emplace_back(key, id);
    return id;
  }
  int64_t correlation = 0;
  std::vector<int64_t> corr;  // per op of the block
  size_t mem_ptr = 0;
  // Per (micro-batch, layer): activation bytes kept, swapped out, and the
  // extra bytes a recompute rebuilds; `tokens`: the swap reaches the
  // dispatched tokens (saved after the attention module's tensors), so the
  // backward's first reader of a swapped tensor is the expert GEMM's.
  struct Act {
    int64_t kept = 0, swapped = 0, extra = 0;
    bool tokens = false;
  };
  std::unordered_map<uint64_t, Act> acts;
  std::vector<std::pair<int, int32_t>> swap_ins;  // layer -> swap-in op of this block
  std::unordered_map<uint64_t, TimeNs> prefetch_end;  // ActKey -> swap-in end (or pending)
  static uint64_t ActKey(int mb, int layer) { return (uint64_t(uint32_t(mb)) << 32) | uint32_t(layer); }

  int64_t NextSeq(uint64_t group) {
    for (auto& [g, s] : seq)
      if (g == group) return s++;
    seq.emplace_back(group, 1);
    return 0;
  }
};

// The routing of one EP group in pass 2, sampled once for all its members
// and shared by the emitters emitting them (its members are contiguous, so
// concurrent emitters mostly work in the same group).
struct GroupRoutingStore {
  std::mutex mu;
  RoutingCache cache;
};

// One emitter's pass-2 state (RankEmitter in engine.h), reused from one
// rank to the next.
struct EmitScratch {
  std::shared_ptr<GroupRoutingStore> routing;  // of EP group `group`
  uint64_t group = 0;
  bool has_group = false;
  std::vector<size_t> track_events, track_comms;  // of the last emitted rank
  int64_t events = 0;
};

struct Prober;

class EngineImpl {
 public:
  // `probe_only`: no pipeline schedules or op names (probe.cc needs
  // neither; they are most of the construction cost).
  explicit EngineImpl(const RunConfig& c, bool probe_only = false);
  // Pass 1 on up to `threads` threads (by pipeline stage).
  void Simulate(int threads = 1);
  // Pass 1's results as bytes, and back instead of Simulate (engine_pass1_io.cc).
  std::string SavePass1() const;
  void LoadPass1(std::string_view bytes);
  // Pass 2; after Simulate(), callable concurrently with distinct scratches.
  void EmitRank(int r, Rank* out, EmitScratch& s) const;
  Metadata BaseMetadata() const;

  RunConfig cfg;
  ModelShape shape;
  HardwareConfig hw;
  std::vector<std::vector<PipeItem>> schedules;  // per pp stage
  RoutingModel routing;
  bool simulated = false;
  // Pass 1's end of each rank's last step (host after the loss read).
  std::vector<TimeNs> rank_end;

  // Constant memory of a rank of pipeline stage `stage`: bf16 weights, fp32
  // gradients, Adam states (sharded with the distributed optimizer).
  // ep_pos >= 0 adds the redundant expert copies that EP position holds.
  void StaticMemory(int stage, double* weights, double* grads, double* opt, int ep_pos = -1) const;

 private:
  friend struct Prober;  // probe.cc
  friend struct RankSim;
  // --- building ---
  void BuildPrologue(RankSim& r, Block& b) const;
  void BuildItem(RankSim& r, const PipeItem& it, Block& b) const;
  void BuildTask(RankSim& r, const PipeTask& t, Block& b) const;
  void BuildOptimizer(RankSim& r, Block& b) const;
  void PrefetchSwapIns(RankSim& r, const PipeItem& next, Block& b) const;
  // Interleaves the fused item's two chains already in b (the first `na`
  // ops, then the rest): see BuildItem.
  // `hook_on_attention` (adaptive pipe, F&B pair, TP > 1): the backward's
  // combine gradient is launched after the forward's attention TP
  // all-gather (LaunchCombineGradAfterTp).
  void FuseChains(Block& b, size_t na, bool second_first, size_t start = 0, bool hook_on_attention = false) const;
  void LaunchCombineGradAfterTp(Block& b, size_t na, int bwd_chain, std::vector<int32_t>& order) const;
  // A task cut into two halves of its micro-batch whose segments alternate
  // (adaptive pipe's chunks without an opposite-direction partner).
  void BuildHalves(RankSim& r, const PipeTask& t, Block& b) const;
  // schedule.kind=adaptive_pipe: Adaptive Pipe's published mechanisms (the
  // hierarchical all-to-all as its two steps, weight gradients off the
  // backward chain; the halves come with the schedule's items).
  bool SplitsA2A() const { return shape.schedule == "adaptive_pipe"; }
  void FlushWgrads(RankSim& r, Block& b) const;
  void AddEmbedding(Block& b, int32_t& chain, int mb, bool backward) const;
  void AddHead(Block& b, int32_t& chain, int mb, bool backward) const;
  TimeNs P2PSendNs(bool inter) const;
  // The same for `scale` micro-batches' hidden states (P2PScale).
  TimeNs P2PSendNs(bool inter, double scale) const;
  void LayerForward(RankSim& r, Block& b, int32_t& chain, int layer, int mb, Phase ph) const;
  void LayerBackward(RankSim& r, Block& b, int32_t& chain, int layer, int mb) const;
  // The MoE layer's small routing operators (engine_moe_small_ops.cc): the
  // router's bookkeeping before the token counts, the grouped GEMM's group
  // list, the shared-expert add after the combine.
  void AddRouterSmallOps(Block& b, int32_t& chain, int mb, int layer, Phase ph) const;
  void AddGroupList(Block& b, int32_t& chain, int mb, int layer, Phase ph) const;
  void AddSharedExpertAdd(Block& b, int32_t& chain, int mb, int layer, Phase ph) const;
  // The permutation's index ops, issued once the token counts are known
  // (without the repeat_interleave when AddCountCopySyncs issued it).
  void AddPermuteIndexOps(Block& b, int32_t& chain, int mb, int layer, Phase ph, bool repeat_interleave) const;
  // host.count_copy_syncs: the dispatcher's preprocess after the output_splits
  // read, with its two stream syncs (the expert ids' H2D copy, the
  // repeat_interleave's output size).
  void AddCountCopySyncs(Block& b, int32_t& chain, int mb, int layer, Phase ph, int ep) const;
  int32_t Add(Block& b, int32_t& chain, const Op& op, bool depend = true) const;
  // Chains the op just appended to b.ops (as Add does).
  int32_t Chain(Block& b, int32_t& chain, bool depend = true) const;
  Op Compute(OpName n, OpClass cls, double flops, double bytes, Phase ph, int mb, int layer,
             bool grad, double tokens_per_expert = 0) const;
  Op Collective(RankSim& r, OpName n, CollectiveKind k, CommClass cc, uint64_t group,
                const std::vector<int32_t>& members, double bytes, Phase ph, int mb, int layer,
                bool grad) const;
  void Finalize(RankSim& r, Block& b) const;
  GroupRouting& Routing(RankSim& r, int mb, int layer) const;
  const std::vector<double>& Popularity(int layer, int step) const;
  std::vector<int32_t> Placement(int layer, int step) const;
  // routing.redundant_experts copies of `layer` at `step` (none when 0).
  ExpertCopies Copies(int layer, int step) const;
  // Copies the EP position holds over the layers of `stage` (step 0's).
  int CopiesHeld(int stage, int ep_pos) const;
  void ComputeA2ADuration(GroupRouting& g, const std::vector<int32_t>& members,
                          const std::vector<double>& pop, int64_t tokens) const;
  struct ActBytes {
    double kept = 0, full = 0;
    double extra = 0;       // rebuilt by recompute during the backward (transient)
    double attention = 0;   // the attention module's kept tensors (swap-attention)
    double permuted = 0;    // tokens the dispatch all-to-all delivered
    double act_fn_out = 0;  // SwiGLU outputs (experts + shared)
  };
  ActBytes LayerActivation(int layer, double recv_tokens) const;
  double HostFactor() const { return cfg.host().numa_affinity() ? 1.0 : hw.cross_numa_factor(); }

  // --- running ---
  bool Advance(RankSim& r, bool pass2) const;
  bool NextBlock(RankSim& r) const;
  void Emit(RankSim& r, const Op& op, size_t i, TimeNs start, TimeNs end) const;
  void EmitHost(RankSim& r, const Op& op, TimeNs py0, TimeNs py1, TimeNs dq0, TimeNs dq1,
                TimeNs sync0, TimeNs sync1) const;
  void InitRankOutput(RankSim& r, const EmitScratch& s) const;
  void FinishRankOutput(RankSim& r) const;

  // The GEMM whose forward saves the last swapped tensor of a layer and
  // whose backward reads the first one: the expert gate/up projection when
  // the swap reaches the dispatched tokens (its input), else the attention
  // output projection (the attention module's tensors). The swap-out
  // starts after it, the backward waits for the swap-in there.
  static uint16_t SwapGemm(const RankSim::Act& a) { return a.tokens ? kGroupedMatmulGateUp : kMatMulOProj; }
  // The host-to-device copy that brings back a swapped-out activation.
  Op SwapIn(int mb, int layer, int64_t bytes) const {
    Op si;
    si.name = kSwapIn;
    si.stream = kSCopy;
    si.cat = Category::kCopy;
    si.phase = Phase::kBackward;
    si.flags = kFlagSwapIn | kFlagHostToDevice;
    si.mb = mb;
    si.layer = layer;
    si.bytes = uint64_t(bytes);
    si.dur = TransferNsHost(double(bytes));
    return si;
  }
  TimeNs TransferNsHost(double bytes) const {
    return static_cast<TimeNs>(std::ceil(bytes / hw.host_link_bandwidth() * 1e9 + hw.kernel_overhead_ns()));
  }
  TimeNs TransferNs(double bytes, bool inter) const {
    double bw = (inter ? hw.inter_node_bandwidth() : hw.intra_node_bandwidth()) *
                hw.comm_efficiency();
    return static_cast<TimeNs>(std::ceil(bytes / bw * 1e9));
  }

  // Pass 1's results, read by pass 2: collectives per pipeline stage, then
  // p2p transfers and the world all-reduce (see SharedCross).
  std::vector<StageCross> stage_cross_;
  CrossMap shared_cross_;
  static bool CrossesStages(const Op& op) {
    return op.cat == Category::kP2P ||
           (op.cat == Category::kCollective && ((op.group >> 56) == 5 || (op.group >> 56) == 8));
  }
  const CrossEntry* FindCross(int stage, const Op& op) const {
    if (!CrossesStages(op)) return stage_cross_[stage].Find(op);
    auto it = shared_cross_.find(op.xkey);
    return it == shared_cross_.end() ? nullptr : &it->second;
  }
  void SimulateStages(int thread, std::vector<RankSim>& sims, SharedCross& sh,
                      RoutingCache& routing);
  bool task_queue_ = false;
  TimeNs py_cost_ = 0, dq_cost_ = 0;
  // The issuing thread's own time before each op (host.python_op_ns for
  // forward, recompute and optimizer ops, host.autograd_op_ns for backward
  // ops), x cross-NUMA factor: the thread is busy but issues nothing.
  TimeNs gap_fwd_ = 0, gap_bwd_ = 0;
  TimeNs IssueGap(Phase p) const { return p == Phase::kBackward ? gap_bwd_ : gap_fwd_; }
  std::string op_names_[3][kOpNameCount][2];  // see RankSim::OpNameId
  // A cache filled on demand by pass 1 and by concurrent pass-2 emitters
  // (node-based: references stay valid as it grows).
  mutable std::mutex popularity_mu_;
  // Pass 2's group routings, alive while an emitter works in the group.
  mutable std::mutex groups_mu_;
  mutable std::unordered_map<uint64_t, std::weak_ptr<GroupRoutingStore>> groups_;
  mutable std::unordered_map<uint64_t, std::vector<double>> popularity_;
  // EDPB's placement by (layer, migration point): each one depends on the
  // one before it (KeepInPlace), so it is computed once (placement_mu_).
  mutable std::mutex placement_mu_;
  mutable std::unordered_map<uint64_t, std::vector<int32_t>> placement_;
  // Redundant copies by (layer, step) and copies held per EP position by
  // stage: asked for by every rank, computed once (copies_mu_).
  mutable std::mutex copies_mu_;
  mutable std::unordered_map<uint64_t, ExpertCopies> copies_;
  mutable std::unordered_map<int, std::vector<int>> held_;
  std::vector<std::vector<int32_t>> ep_groups_;  // cached per rank (small worlds) or empty
  // Document lengths (RunConfig.data): attention work per (DP rank,
  // micro-batch) relative to one document per sequence, per step, computed
  // once per step for every rank (docs_mu_).
  DocumentModel docs_;
  mutable std::mutex docs_mu_;
  mutable std::unordered_map<int, std::vector<double>> attention_;
  double AttentionFactor(RankSim& r, int mb) const;
  // MTP modules simulated (model.mtp_modelled): their layers on model
  // stage shape.mtp_stage, their heads and losses on the last.
  int mtp_ = 0;
  // One past the last layer index a model stage runs: its transformer
  // layers, then, on the MTP's stage, the MTP modules' layers (numbered
  // from shape.layers on; the slices after it hold no decoder layer).
  int SliceEnd(int ms) const {
    return shape.stage_first_layer[ms] + shape.stage_layers[ms] + (ms == shape.mtp_stage ? mtp_ : 0);
  }
  // The MTP layers run before the last stage (parallel.mtp_stage): the
  // last then runs their heads and losses after the main head's, and the
  // p2p between them carries the main and every MTP depth's hidden states
  // (Megatron's MTP block concatenates them, mtp_standalone).
  bool MtpApart() const { return mtp_ > 0 && shape.mtp_stage != shape.model_stages - 1; }
  // The pipeline rank (stage) whose slices hold the MTP layers but not the
  // embedding: it keeps its own copy of the word embedding for the MTP
  // input, whose gradient is all-reduced with the first stage's (Megatron's
  // embedding group, finalize_model_grads). -1: no MTP modelled, or the rank
  // holding the MTP also holds model stage 0 (PP 1, dualpipe).
  int MtpEmbeddingStage() const {
    if (mtp_ <= 0 || shape.schedule == "dualpipe") return -1;
    const int st = shape.mtp_stage % shape.pp;
    return st == 0 ? -1 : st;
  }
  // The hidden states a p2p of boundary `key_stage` carries, in units of one
  // micro-batch's (key_stage as BuildTask keys them: the receiver's slice
  // forward, the receiver's backward, i.e. the boundary below key_stage + 1).
  double P2PScale(int key_stage, bool grad) const {
    if (!MtpApart()) return 1.0;
    const int lower = grad ? key_stage : key_stage - 1;
    return lower >= shape.mtp_stage ? 1.0 + mtp_ : 1.0;
  }
  // The MTP module's input: the shifted tokens' embedding, the two norms and
  // the 2h -> h projection (reversed in the backward).
  void AddMtpInput(Block& b, int32_t& chain, int mb, int layer, bool backward) const;
  // The MTP modules' output heads and losses, on the last stage when their
  // layers run before it (MtpApart).
  void AddMtpHeads(Block& b, int32_t& chain, int mb, bool backward) const;
  // EDPB's stage-balancing split from probed layer costs, chosen by the
  // schedule's step end (stage_split.h, split_schedule.h).
  void BalanceStages();
  bool balanced_split_ = false;
  // per-rank constant memory
  double dense_params_ = 0, expert_params_ = 0;
  void ComputeParams(int stage, double* dense, double* expert) const;
};

}  // namespace moetrace::tracegen
