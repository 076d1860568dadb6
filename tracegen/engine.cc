#include "tracegen/engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_map>

#include <fmt/core.h>

#include "tracegen/config.h"
#include "tracegen/model.h"
#include "tracegen/overlap.h"
#include "tracegen/rng.h"
#include "tracegen/routing.h"
#include "tracegen/schedule.h"

namespace moetrace::tracegen {
namespace {

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
  X(AllReduceGradNorm) X(AdamW) X(AllGatherParamsDp) X(AllGatherParamsEdp) X(ExpertMigration) X(AllGatherTokenCounts)
enum OpName : uint16_t {
#define MT_ENUM(n) k##n,
  MT_OP_NAMES(MT_ENUM)
#undef MT_ENUM
  kOpNameCount
};
constexpr const char* kOpNames[] = {
#define MT_STR(n) #n,
    MT_OP_NAMES(MT_STR)
#undef MT_STR
};
const char* DeviceName(int n) {
  static const char* names[] = {
      "RmsNorm", "HcomAllGather_tp", "MatMul_q_proj", "MatMul_kv_proj", "MatMul_qkv_proj",
      "FlashAttentionScore", "MatMul_o_proj", "HcomReduceScatter_tp", "HcomAllReduce_tp",
      "AddRmsNorm", "MatMul_gate_up", "SwiGlu", "MatMul_down", "MoeGatingTopK",
      "MoeInitRouting", "HcomAllToAllV_dispatch", "MatMul_shared_gate_up", "SwiGlu_shared",
      "MatMul_shared_down", "GroupedMatmul_gate_up", "SwiGlu_experts", "GroupedMatmul_down",
      "HcomAllToAllV_combine", "MoeFinalizeRouting", "Embedding", "MatMul_lm_head",
      "CrossEntropyLoss", "HcomSend", "HcomReceive", "MemcpyD2H_swap_out", "MemcpyH2D_swap_in",
      "HcomReduceScatter_grads_dp", "HcomReduceScatter_grads_edp", "HcomAllReduce_grad_norm",
      "AdamW", "HcomAllGather_params_dp", "HcomAllGather_params_edp", "ExpertMigration",
      "HcomAllGather_token_counts"};
  static_assert(sizeof(names) / sizeof(names[0]) == kOpNameCount);
  return names[n];
}

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
  int32_t sync_on = -1;   // op whose end the host waits for (host_sync)
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
  bool host_sync = false;  // host blocks until `dep` ends before issuing this op
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
  std::vector<int32_t> counts;     // members x experts
  std::vector<int32_t> placement;  // expert -> position
  TimeNs a2a_dur = 0;
  int uses_left = 0;
};

struct CrossEntry {
  int32_t arrived = 0;
  int32_t expected = 0;
  TimeNs max_arrival = kNever;
  TimeNs dur = 0;
  TimeNs done = kNever;  // p2p: send end
};

}  // namespace

class EngineImpl;

// One rank's simulation state.
struct RankSim {
  int rank = 0, stage = 0;
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
  std::vector<int32_t> dp_members, edp_members;
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
           sync_device_name = kUninterned;
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
  // extra bytes a recompute rebuilds.
  struct Act {
    int64_t kept = 0, swapped = 0, extra = 0;
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

class EngineImpl {
 public:
  explicit EngineImpl(const RunConfig& c);
  void Simulate();
  void EmitRank(int r, Rank* out);
  Metadata BaseMetadata() const;

  RunConfig cfg;
  ModelShape shape;
  HardwareConfig hw;
  std::vector<std::vector<PipeItem>> schedules;  // per pp stage
  RoutingModel routing;
  bool simulated = false;
  int64_t events = 0;

 private:
  friend struct RankSim;
  // --- building ---
  void BuildPrologue(RankSim& r, Block& b);
  void BuildItem(RankSim& r, const PipeItem& it, Block& b);
  void BuildTask(RankSim& r, const PipeTask& t, Block& b);
  void BuildOptimizer(RankSim& r, Block& b);
  void PrefetchSwapIns(RankSim& r, const PipeItem& next, Block& b);
  void LayerForward(RankSim& r, Block& b, int32_t& chain, int layer, int mb, Phase ph);
  void LayerBackward(RankSim& r, Block& b, int32_t& chain, int layer, int mb);
  int32_t Add(Block& b, int32_t& chain, const Op& op, bool depend = true);
  // Chains the op just appended to b.ops (as Add does).
  int32_t Chain(Block& b, int32_t& chain, bool depend = true);
  Op Compute(OpName n, OpClass cls, double flops, double bytes, Phase ph, int mb, int layer,
             bool grad, double tokens_per_expert = 0) const;
  Op Collective(RankSim& r, OpName n, CollectiveKind k, CommClass cc, uint64_t group,
                const std::vector<int32_t>& members, double bytes, Phase ph, int mb, int layer,
                bool grad) const;
  void Finalize(RankSim& r, Block& b);
  GroupRouting& Routing(RankSim& r, int mb, int layer);
  const std::vector<double>& Popularity(int layer, int step);
  std::vector<int32_t> Placement(int layer, int step);
  void ComputeA2ADuration(GroupRouting& g, const std::vector<int32_t>& members,
                          const std::vector<double>& pop, int64_t tokens);
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
  bool Advance(RankSim& r, bool pass2);
  bool NextBlock(RankSim& r);
  void Emit(RankSim& r, const Op& op, size_t i, TimeNs start, TimeNs end);
  void EmitHost(RankSim& r, const Op& op, TimeNs py0, TimeNs py1, TimeNs dq0, TimeNs dq1,
                TimeNs sync0, TimeNs sync1);
  void InitRankOutput(RankSim& r);
  void FinishRankOutput(RankSim& r);

  TimeNs TransferNsHost(double bytes) const {
    return static_cast<TimeNs>(std::ceil(bytes / hw.host_link_bandwidth() * 1e9 + hw.kernel_overhead_ns()));
  }
  TimeNs TransferNs(double bytes, bool inter) const {
    double bw = (inter ? hw.inter_node_bandwidth() : hw.intra_node_bandwidth()) *
                hw.comm_efficiency();
    return static_cast<TimeNs>(std::ceil(bytes / bw * 1e9));
  }

  std::unordered_map<uint64_t, CrossEntry> cross_;
  std::unordered_map<uint64_t, GroupRouting> routing_cache_;
  bool pass2_cache_ = false;
  uint64_t pass2_group_ = 0;
  std::vector<size_t> last_track_events_;  // per track, of the last emitted rank
  std::vector<size_t> last_track_comms_;
  bool task_queue_ = false;
  TimeNs py_cost_ = 0, dq_cost_ = 0;
  std::string op_names_[3][kOpNameCount][2];  // see RankSim::OpNameId
  std::unordered_map<uint64_t, std::vector<double>> popularity_;
  std::vector<std::vector<int32_t>> ep_groups_;  // cached per rank (small worlds) or empty
  // per-rank constant memory
  double dense_params_ = 0, expert_params_ = 0;
  void ComputeParams(int stage, double* dense, double* expert) const;
};

// ---------------------------------------------------------------------------

EngineImpl::EngineImpl(const RunConfig& c) : cfg(c), shape(c), hw(c.hardware()) {
  ScheduleShape sh{shape.schedule, shape.pp, shape.vpp, shape.micro_batches};
  for (int s = 0; s < shape.pp; ++s) schedules.push_back(StageSchedule(sh, s));
  routing.seed = c.seed();
  routing.experts = shape.experts;
  routing.top_k = shape.top_k;
  routing.skew = c.routing().skew();
  routing.drift = c.routing().drift();
  // Host costs per op, read by every Advance call (pass 1 calls it per rank
  // each time a collective blocks).
  task_queue_ = cfg.host().task_queue();
  const double f = HostFactor();
  py_cost_ = TimeNs(std::llround((hw.framework_op_ns() + (task_queue_ ? hw.enqueue_ns() : hw.launch_ns())) * f));
  dq_cost_ = TimeNs(std::llround(hw.launch_ns() * f));
  for (int n = 0; n < kOpNameCount; ++n)
    for (int grad = 0; grad < 2; ++grad) {
      std::string dev = std::string(DeviceName(n)) + (grad ? "Grad" : "");
      op_names_[1][n][grad] = "aclnn" + dev;
      op_names_[2][n][grad] = "enqueue " + dev;
      op_names_[0][n][grad] = std::move(dev);
    }
}

const std::vector<double>& EngineImpl::Popularity(int layer, int step) {
  uint64_t key = (uint64_t(layer) << 32) | uint32_t(step);
  auto it = popularity_.find(key);
  if (it != popularity_.end()) return it->second;
  return popularity_[key] = routing.Popularity(layer, step);
}

std::vector<int32_t> EngineImpl::Placement(int layer, int step) {
  const int g = shape.expert_group;
  if (!cfg.routing().edpb() || step == 0) return ContiguousPlacement(shape.experts, g);
  // EDPB predicts loads from the last migration point's observed popularity.
  int interval = std::max(1, cfg.routing().edpb_interval());
  int at = (step / interval) * interval;
  if (at == 0) return ContiguousPlacement(shape.experts, g);
  return BalancedPlacement(Popularity(layer, at - 1), g);
}

void EngineImpl::ComputeA2ADuration(GroupRouting& g, const std::vector<int32_t>& members,
                                    const std::vector<double>& pop, int64_t tokens) {
  const int n = g.members, E = shape.experts, k = shape.top_k;
  const double tok_bytes = 2.0 * shape.hidden;
  if (n <= 1) {
    g.a2a_dur = 0;
    return;
  }
  bool spans = shape.SpansNodes(members);
  // send[i][j] token copies from member i to member j
  std::vector<double> send_intra(n, 0), send_inter(n, 0), recv_intra(n, 0), recv_inter(n, 0),
      recv_total(n, 0);
  for (int i = 0; i < n; ++i) {
    const int32_t* c = &g.counts[size_t(i) * E];
    for (int e = 0; e < E; ++e) {
      int j = g.placement[e];
      if (j == i) {
        recv_total[j] += c[e];
        continue;
      }
      bool inter = shape.Node(members[i]) != shape.Node(members[j]);
      (inter ? send_inter[i] : send_intra[i]) += c[e];
      (inter ? recv_inter[j] : recv_intra[j]) += c[e];
      recv_total[j] += c[e];
    }
  }
  double alpha_intra = hw.alpha_intra_ns(), alpha_inter = hw.alpha_inter_ns();
  if (!spans || cfg.comm().a2a() == "flat") {
    double worst = 0;
    for (int i = 0; i < n; ++i) {
      double t = std::max(TransferNs(std::max(send_intra[i], recv_intra[i]) * tok_bytes, false),
                          TransferNs(std::max(send_inter[i], recv_inter[i]) * tok_bytes, true));
      worst = std::max(worst, t);
    }
    g.a2a_dur = static_cast<TimeNs>((n - 1) * (spans ? alpha_inter : alpha_intra) + worst);
    return;
  }
  // Hierarchical (two-level): (1) inter-node, each token sent once per
  // destination node that holds any of its experts (expected distinct nodes
  // of k draws); (2) intra-node redistribution of every copy over HCCS.
  std::vector<int> node_of(n);
  std::vector<int> nodes;
  for (int i = 0; i < n; ++i) {
    node_of[i] = shape.Node(members[i]);
    if (std::find(nodes.begin(), nodes.end(), node_of[i]) == nodes.end()) nodes.push_back(node_of[i]);
  }
  const int q = static_cast<int>(nodes.size());
  std::vector<double> p_node(q, 0);
  for (int e = 0; e < E; ++e) {
    int nd = node_of[g.placement[e]];
    p_node[std::find(nodes.begin(), nodes.end(), nd) - nodes.begin()] += pop[e];
  }
  const double ranks_per_node = double(n) / q;
  double inter_worst = 0;
  for (int i = 0; i < n; ++i) {
    double bytes = 0;
    for (int a = 0; a < q; ++a) {
      if (nodes[a] == node_of[i]) continue;
      bytes += tokens * (1 - std::pow(1 - p_node[a], k)) * tok_bytes;
    }
    inter_worst = std::max(inter_worst, double(TransferNs(bytes, true)));
  }
  double intra_worst = 0;
  for (int j = 0; j < n; ++j)
    intra_worst = std::max(intra_worst, double(TransferNs(recv_total[j] * tok_bytes *
                                                              (ranks_per_node - 1) / ranks_per_node,
                                                          false)));
  g.a2a_dur = static_cast<TimeNs>((q - 1) * alpha_inter + inter_worst +
                                  (ranks_per_node - 1) * alpha_intra + intra_worst);
}

GroupRouting& EngineImpl::Routing(RankSim& r, int mb, int layer) {
  uint64_t gid = shape.EpGroupId(r.rank);
  uint64_t key = Key(gid, r.step, mb, layer);
  auto it = routing_cache_.find(key);
  if (it != routing_cache_.end()) return it->second;
  GroupRouting& g = routing_cache_[key];
  std::vector<int32_t> members = shape.EpGroup(r.rank);
  g.members = static_cast<int>(members.size());
  g.uses_left = 2 * g.members;
  const auto& pop = Popularity(layer, r.step);
  g.counts.assign(size_t(g.members) * shape.experts, 0);
  int64_t tokens = shape.TokensMoe();
  for (int i = 0; i < g.members; ++i)
    routing.SampleCounts(pop, tokens, r.step, mb, layer, members[i], &g.counts[size_t(i) * shape.experts]);
  g.placement = Placement(layer, r.step);
  ComputeA2ADuration(g, members, pop, tokens);
  return g;
}

EngineImpl::ActBytes EngineImpl::LayerActivation(int layer, double recv_tokens) const {
  // Korthikanti et al.: per layer s*b*h*(34 + 5*a*s/h) bytes; 15 sbh + 5as^2b
  // of it in attention+norms, 3 sbh + 4 sb*ffn in the MLP; with SP all of it
  // divided by t; without SP 7 + 3 sbh stay whole.
  const double t = shape.tp;
  const double sbh = double(shape.TokensPerMicroBatch()) * shape.hidden;
  const double s = shape.seq, a = shape.heads, bsz = shape.mbs;
  const bool split_all = shape.sp || shape.tp == 1;
  const std::string& rc = cfg.memory().recompute();
  double score = 5 * a * s * s * bsz / t;
  double attn = split_all ? 15 * sbh / t : 7 * sbh + 8 * sbh / t;
  double mlp;
  ActBytes out;
  if (shape.IsMoe(layer)) {
    // Per tensor: router probabilities, the tokens the dispatch all-to-all
    // delivered (the grouped GEMM's input), each expert's SwiGLU input
    // (2*ffn values) and output (ffn values, the down projection's input),
    // and the shared expert's.
    double tok = double(shape.TokensMoe());
    const double shard = shape.ExpertShard(), div = shape.extend ? 1 : t;
    const double fe = double(shape.expert_ffn), fs = fe * shape.shared;
    out.permuted = recv_tokens * 2.0 * shape.hidden;
    out.act_fn_out = recv_tokens * 2.0 * fe / shard + tok * 2.0 * fs / div;
    mlp = (split_all ? 3 * sbh / t : 3 * sbh) + tok * shape.experts * 4.0 + out.permuted +
          recv_tokens * 4.0 * fe / shard + tok * 4.0 * fs / div + out.act_fn_out;
  } else {
    double sbf = double(shape.TokensPerMicroBatch()) * shape.dense_ffn;
    mlp = (split_all ? 3 * sbh / t : 3 * sbh) + 4 * sbf / t;
  }
  out.full = attn + score + mlp;
  out.attention = attn;
  // FlashAttention never materialises the s x s scores: recomputing the
  // attention core (selective) rebuilds them tile by tile on chip, so no
  // transient.
  if (rc == "none") {
    out.kept = out.full;
  } else if (rc == "selective") {
    // Selective: attention core (Korthikanti) and, per tensor, the MoE
    // activation function (SwiGLU output rebuilt before the down
    // projection's backward, a cheap vector op).
    out.kept = attn + mlp - out.act_fn_out;
    out.extra = out.act_fn_out;
  } else {
    // Full: the re-run forward rebuilds what `none` keeps (the memory model
    // of `none` is Korthikanti's, scores included).
    out.kept = 2 * sbh / (split_all ? t : 1);
    out.extra = out.full - out.kept;
    out.attention = out.kept;  // the checkpointed layer input is what can be swapped
    out.permuted = 0;
  }
  return out;
}

void EngineImpl::ComputeParams(int stage, double* dense, double* expert) const {
  *dense = *expert = 0;
  auto add_slice = [&](int ms) {
    for (int l = shape.stage_first_layer[ms]; l < shape.stage_first_layer[ms] + shape.stage_layers[ms]; ++l) {
      *dense += shape.AttentionParams();
      if (shape.IsMoe(l)) {
        *dense += shape.RouterParams() + shape.SharedParams();
        *expert += shape.ExpertParamsEach() * shape.ExpertsPerRank();
      } else {
        *dense += shape.DenseMlpParams();
      }
    }
    if (ms == 0) *dense += double(shape.vocab) * shape.hidden / shape.tp;
    if (ms == shape.model_stages - 1) *dense += double(shape.vocab) * shape.hidden / shape.tp;
  };
  if (shape.schedule == "dualpipe") {
    add_slice(stage);
    if (shape.pp - 1 - stage != stage) add_slice(shape.pp - 1 - stage);
  } else {
    for (int c = 0; c < shape.vpp; ++c) add_slice(c * shape.pp + stage);
  }
}

Op EngineImpl::Compute(OpName n, OpClass cls, double flops, double bytes, Phase ph, int mb,
                       int layer, bool grad, double tpe) const {
  bool opt = cfg.compute().optimized_kernels();
  double eff = 1, mem_eff = opt ? hw.eff_vector_opt() : hw.eff_vector();
  switch (cls) {
    case kMatMul: eff = opt ? hw.eff_matmul_opt() : hw.eff_matmul(); break;
    case kFlashFwd: eff = opt ? hw.eff_flash_fwd_opt() : hw.eff_flash_fwd(); break;
    case kFlashBwd: eff = opt ? hw.eff_flash_bwd_opt() : hw.eff_flash_bwd(); break;
    case kGrouped: {
      // Tiles of the grouped GEMM go idle when an expert has few tokens.
      double half = hw.grouped_gemm_half_tokens();
      eff = hw.eff_grouped_gemm() * (opt ? hw.eff_matmul_opt() / hw.eff_matmul() : 1.0) *
            (half > 0 ? tpe / (tpe + half) : 1.0);
      eff = std::max(eff, 1e-3);
      break;
    }
    case kVector: eff = 1; flops = 0; break;
  }
  double t = std::max(flops / (hw.peak_flops() * eff), bytes / (hw.hbm_bandwidth() * mem_eff));
  Op op;
  op.name = n;
  op.grad = grad;
  op.stream = kSCompute;
  op.cat = Category::kCompute;
  op.phase = ph;
  op.mb = mb;
  op.layer = layer;
  op.dur = static_cast<TimeNs>(std::ceil(t * 1e9 + hw.kernel_overhead_ns()));
  op.flops = static_cast<uint64_t>(flops);
  op.bytes = static_cast<uint64_t>(bytes);
  return op;
}

Op EngineImpl::Collective(RankSim& r, OpName n, CollectiveKind k, CommClass cc, uint64_t group,
                          const std::vector<int32_t>& members, double bytes, Phase ph, int mb,
                          int layer, bool grad) const {
  Op op;
  op.name = n;
  op.grad = grad;
  op.stream = kSComm;
  op.cat = Category::kCollective;
  op.phase = ph;
  op.mb = mb;
  op.layer = layer;
  op.ckind = k;
  op.cclass = cc;
  op.group = group;
  op.group_size = static_cast<int32_t>(members.size());
  op.bytes = static_cast<uint64_t>(bytes);
  const double nn = members.size();
  const bool inter = shape.SpansNodes(members);
  const double alpha = inter ? hw.alpha_inter_ns() : hw.alpha_intra_ns();
  double t = 0;
  switch (k) {
    case CollectiveKind::kAllReduce:
      t = 2 * (nn - 1) * alpha + TransferNs(2 * (nn - 1) / nn * bytes, inter);
      break;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      t = (nn - 1) * alpha + TransferNs((nn - 1) / nn * bytes, inter);
      break;
    default:
      t = (nn - 1) * alpha + TransferNs(bytes, inter);
  }
  op.dur = static_cast<TimeNs>(t);
  return op;
}

int32_t EngineImpl::Add(Block& b, int32_t& chain, const Op& op, bool depend) {
  b.ops.push_back(op);  // one copy: Op is ~150 bytes and ops are built by the million
  return Chain(b, chain, depend);
}

int32_t EngineImpl::Chain(Block& b, int32_t& chain, bool depend) {
  Op& op = b.ops.back();
  if (depend && op.dep < 0) op.dep = chain;
  chain = static_cast<int32_t>(b.ops.size() - 1);
  return chain;
}

namespace {
uint64_t GroupUid(int kind, int stage, int index) {
  return (uint64_t(kind) << 56) | (uint64_t(stage) << 36) | uint64_t(index);
}
}  // namespace

void EngineImpl::LayerForward(RankSim& r, Block& b, int32_t& chain, int layer, int mb, Phase ph) {
  const double N = shape.TokensPerMicroBatch(), Ns = shape.TokensSeqSplit(), t = shape.tp;
  const double h = shape.hidden, H = shape.heads;
  const bool bw = false;
  if (r.tp_members.empty()) r.tp_members = shape.TpGroup(r.rank);
  const std::vector<int32_t>& tp_members = r.tp_members;
  uint64_t tp_gid = GroupUid(2, shape.Stage(r.rank), shape.DpIndex(r.rank));
  const int32_t first = static_cast<int32_t>(b.ops.size());
  Add(b, chain, Compute(kRMSNorm, kVector, 0, Ns * h * 4, ph, mb, layer, bw));
  if (t > 1 && shape.sp)
    Add(b, chain, Collective(r, kAllGatherTp, CollectiveKind::kAllGather, CommClass::kTP, tp_gid,
                             tp_members, N * h * 2, ph, mb, layer, bw));
  if (shape.mla) {
    double qp = shape.q_lora > 0 ? h * shape.q_lora + double(shape.q_lora) * H * (shape.nope + shape.rope)
                                 : h * H * (shape.nope + shape.rope);
    double kvp = h * (shape.kv_lora + shape.rope) + double(shape.kv_lora) * H * (shape.nope + shape.v_dim);
    Add(b, chain, Compute(kMatMulQProj, kMatMul, 2 * N * qp / t, (qp / t + N * h) * 2, ph, mb, layer, bw));
    Add(b, chain, Compute(kMatMulKvProj, kMatMul, 2 * N * kvp / t, (kvp / t + N * h) * 2, ph, mb, layer, bw));
  } else {
    Add(b, chain, Compute(kMatMulQkvProj, kMatMul, 2 * N * 3 * h * h / t, (3 * h * h / t + 4 * N * h) * 2, ph, mb, layer, bw));
  }
  double fa_flops = 2.0 * shape.mbs * double(shape.seq) * shape.seq * H *
                    (shape.nope + shape.rope + shape.v_dim) * 0.5 / t;
  double fa_bytes = N * H * (2.0 * (shape.nope + shape.rope) + 2.0 * shape.v_dim) * 2 / t;
  Add(b, chain, Compute(kFlashAttentionScore, kFlashFwd, fa_flops, fa_bytes, ph, mb, layer, bw));
  Add(b, chain, Compute(kMatMulOProj, kMatMul, 2 * N * H * shape.v_dim * h / t,
                        (H * shape.v_dim * h / t + N * h) * 2, ph, mb, layer, bw));
  if (t > 1)
    Add(b, chain, Collective(r, shape.sp ? kReduceScatterTp : kAllReduceTp,
                             shape.sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
                             CommClass::kTP, tp_gid, tp_members, N * h * 2, ph, mb, layer, bw));
  Add(b, chain, Compute(kAddRMSNorm, kVector, 0, Ns * h * 6, ph, mb, layer, bw));
  double recv_tokens = 0;
  if (!shape.IsMoe(layer)) {
    double F = shape.dense_ffn;
    if (t > 1 && shape.sp)
      Add(b, chain, Collective(r, kAllGatherTp, CollectiveKind::kAllGather, CommClass::kTP, tp_gid,
                               tp_members, N * h * 2, ph, mb, layer, bw));
    Add(b, chain, Compute(kMatMulGateUp, kMatMul, 2 * N * h * 2 * F / t, (2 * h * F / t + N * h) * 2, ph, mb, layer, bw));
    Add(b, chain, Compute(kSwiGlu, kVector, 0, N * F / t * 2 * 3, ph, mb, layer, bw));
    Add(b, chain, Compute(kMatMulDown, kMatMul, 2 * N * F * h / t, (F * h / t + N * h) * 2, ph, mb, layer, bw));
    if (t > 1)
      Add(b, chain, Collective(r, shape.sp ? kReduceScatterTp : kAllReduceTp,
                               shape.sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
                               CommClass::kTP, tp_gid, tp_members, N * h * 2, ph, mb, layer, bw));
  } else {
    GroupRouting& g = Routing(r, mb, layer);
    const int E = shape.experts, pos = shape.EpPosition(r.rank);
    const double Nm = shape.TokensMoe(), Fe = shape.expert_ffn, shard = shape.ExpertShard();
    if (r.ep_members.empty()) r.ep_members = shape.EpGroup(r.rank);
    const std::vector<int32_t>& members = r.ep_members;
    A2AInfo info;
    info.group_pos = pos;
    if (cfg.routing().edpb()) info.placement = g.placement;  // recorded only with EDPB
    info.send.assign(g.members, 0);
    info.recv.assign(g.members, 0);
    info.local_counts.assign(E, 0);
    const int32_t* mine = &g.counts[size_t(pos) * E];
    const uint64_t tok_bytes = uint64_t(2 * shape.hidden);
    for (int e = 0; e < E; ++e) {
      info.local_counts[e] = mine[e];
      info.send[g.placement[e]] += uint64_t(mine[e]) * tok_bytes;
      if (g.placement[e] != pos) continue;
      // Only this rank's experts: what every member sends to it.
      for (int i = 0; i < g.members; ++i) {
        const int32_t c = g.counts[size_t(i) * E + e];
        info.recv[i] += uint64_t(c) * tok_bytes;
        recv_tokens += c;
      }
    }
    TimeNs a2a_dur = g.a2a_dur;
    if (ph != Phase::kRecompute && --g.uses_left == 0 && !pass2_cache_)
      routing_cache_.erase(Key(shape.EpGroupId(r.rank), r.step, mb, layer));
    b.a2a.push_back(std::move(info));
    int32_t a2a_idx = static_cast<int32_t>(b.a2a.size() - 1);
    uint64_t ep_gid = shape.EpGroupId(r.rank);
    if (t > 1 && !shape.extend && shape.sp)
      Add(b, chain, Collective(r, kAllGatherTp, CollectiveKind::kAllGather, CommClass::kTP, tp_gid,
                               tp_members, N * h * 2, ph, mb, layer, bw));
    int32_t router = Add(b, chain, Compute(kMoeGatingTopK, kMatMul, 2 * Nm * h * E, (h * E + Nm * h) * 2, ph, mb, layer, bw));
    if (ph == Phase::kForward) b.ops[router].routing = a2a_idx;
    // With sync_before_a2a the dispatcher reads the token counts on the host
    // before permuting (Megatron/MindSpeed alltoall preprocess): the counts
    // are all-gathered over the EP group, copied to the host (blocking), and
    // turned into split lists in Python, one element at a time, before the
    // host can issue the permutation and the all-to-all. The device runs out
    // of work meanwhile.
    int32_t counts_ready = router;
    const bool sync = cfg.host().sync_before_a2a() && ph != Phase::kBackward;
    if (sync && g.members > 1)
      counts_ready = Add(b, chain, Collective(r, kAllGatherTokenCounts, CollectiveKind::kAllGather,
                                              CommClass::kEP, ep_gid, members,
                                              double(E) * 4 * g.members, ph, mb, layer, bw));
    Op perm = Compute(kMoeInitRouting, kVector, 0, Nm * shape.top_k * h * 4, ph, mb, layer, bw);
    if (sync) {
      perm.host_sync = true;
      perm.sync_on = counts_ready;
      perm.host_work = TimeNs(std::llround(hw.token_count_host_ns() * E * g.members * HostFactor()));
    }
    int32_t permute = Add(b, chain, perm);
    auto shared_ops = [&](int32_t dep) {
      if (shape.shared <= 0) return;
      double Fs = Fe * shape.shared, div = shape.extend ? 1 : t;
      Op o = Compute(kMatMulSharedGateUp, kMatMul, 2 * Nm * h * 2 * Fs / div, (2 * h * Fs / div + Nm * h) * 2, ph, mb, layer, bw);
      o.dep = dep;
      Add(b, chain, o);
      Add(b, chain, Compute(kSwiGluShared, kVector, 0, Nm * Fs / div * 6, ph, mb, layer, bw));
      Add(b, chain, Compute(kMatMulSharedDown, kMatMul, 2 * Nm * Fs * h / div, (Fs * h / div + Nm * h) * 2, ph, mb, layer, bw));
    };
    bool overlap = cfg.comm().shared_expert_overlap();
    if (!overlap) shared_ops(chain);
    Op disp = Collective(r, kAllToAllVDispatch, CollectiveKind::kAllToAllV, CommClass::kEP, ep_gid,
                         members, 0, ph, mb, layer, bw);
    disp.dur = a2a_dur;
    disp.bytes = 0;
    for (auto v : b.a2a[a2a_idx].send) disp.bytes += v;
    disp.a2a = a2a_idx;
    disp.dep = permute;
    int32_t dispatch = Add(b, chain, disp);
    if (overlap) shared_ops(permute);
    double local_experts = shape.ExpertsPerRank();
    double tpe = recv_tokens / std::max(1.0, local_experts);
    Op gg1 = Compute(kGroupedMatmulGateUp, kGrouped, 2 * recv_tokens * h * 2 * Fe / shard,
                     (local_experts * 2 * h * Fe / shard + recv_tokens * h) * 2, ph, mb, layer, bw, tpe);
    gg1.dep = dispatch;
    Add(b, chain, gg1);
    Op sw = Compute(kSwiGluExperts, kVector, 0, recv_tokens * Fe / shard * 6, ph, mb, layer, bw);
    Add(b, chain, sw);
    Op gg2 = Compute(kGroupedMatmulDown, kGrouped, 2 * recv_tokens * Fe * h / shard,
                     (local_experts * Fe * h / shard + recv_tokens * h) * 2, ph, mb, layer, bw, tpe);
    Add(b, chain, gg2);
    Op comb = Collective(r, kAllToAllVCombine, CollectiveKind::kAllToAllV, CommClass::kEP, ep_gid,
                         members, 0, ph, mb, layer, bw);
    comb.dur = a2a_dur;
    comb.a2a = a2a_idx;
    for (auto v : b.a2a[a2a_idx].recv) comb.bytes += v;
    Add(b, chain, comb);
    Add(b, chain, Compute(kMoeFinalizeRouting, kVector, 0, Nm * shape.top_k * h * 4, ph, mb, layer, bw));
    if (t > 1 && !shape.extend)
      Add(b, chain, Collective(r, shape.sp ? kReduceScatterTp : kAllReduceTp,
                               shape.sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
                               CommClass::kTP, tp_gid, tp_members, N * h * 2, ph, mb, layer, bw));
  }
  if (ph != Phase::kForward) return;
  // Activation memory of this layer and micro-batch, held until its backward.
  ActBytes act = LayerActivation(layer, recv_tokens);
  b.mem.push_back({first, false, uint8_t(CounterKind::kMemActivations), int64_t(act.kept)});
  RankSim::Act& rec = r.acts[RankSim::ActKey(mb, layer)];
  rec.kept = int64_t(act.kept);
  rec.extra = int64_t(act.extra);
  rec.swapped = 0;
  if (cfg.memory().swap()) {
    // Swap of named tensors (MindSpeed --swap-attention plus the MoE
    // dispatcher's received tokens): both are needed only by the backward,
    // and re-creating the received tokens would re-run the all-to-all, so
    // they go to the host instead. What is swapped is bounded by what the
    // host link moves while this layer's forward runs (its operators run one
    // after another on the device, communication included); the rest stays.
    TimeNs fwd = 0;
    for (size_t i = first; i < b.ops.size(); ++i)
      if (b.ops[i].cat == Category::kCompute || b.ops[i].cat == Category::kCollective) fwd += b.ops[i].dur;
    double movable = fwd * 1e-9 * hw.host_link_bandwidth();
    double bytes = std::min({act.kept, act.attention + act.permuted, movable});
    if (bytes > 0) {
      Op so;
      so.name = kSwapOut;
      so.stream = kSCopy;
      so.cat = Category::kCopy;
      so.phase = ph;
      so.flags = kFlagSwapOut | kFlagDeviceToHost;
      so.mb = mb;
      so.layer = layer;
      so.bytes = uint64_t(bytes);
      so.dur = TransferNsHost(bytes);
      so.dep = chain;
      b.ops.push_back(so);
      int32_t idx = int32_t(b.ops.size() - 1);
      b.mem.push_back({idx, true, uint8_t(CounterKind::kMemActivations), -int64_t(bytes)});
      rec.swapped = int64_t(bytes);
    }
  }
}

namespace {
bool IsShared(uint16_t n) {
  return n == kMatMulSharedGateUp || n == kSwiGluShared || n == kMatMulSharedDown;
}
}  // namespace

void EngineImpl::LayerBackward(RankSim& r, Block& b, int32_t& chain, int layer, int mb) {
  const std::string& rc = cfg.memory().recompute();
  RankSim::Act rec = r.acts[RankSim::ActKey(mb, layer)];
  int32_t first_bwd = static_cast<int32_t>(b.ops.size());
  // Swap-in was issued (prefetched) at the start of the backward task.
  int32_t swap_in = -1;
  for (auto [l, idx] : r.swap_ins)
    if (l == layer) swap_in = idx;
  int64_t prefetched = -1;
  if (r.prefetch_end.count(RankSim::ActKey(mb, layer))) prefetched = int64_t(RankSim::ActKey(mb, layer));
  int32_t recompute_first = -1;
  if (rc == "full") {
    // Full recompute re-runs the layer's forward (communication included).
    recompute_first = static_cast<int32_t>(b.ops.size());
    int32_t c = chain;
    LayerForward(r, b, c, layer, mb, Phase::kRecompute);
    chain = c;
    if (swap_in >= 0) b.ops[recompute_first].dep2 = swap_in;
  }
  // The backward is the forward's operator list reversed: build it into the
  // block, cut it out, and re-add it transformed.
  // The forward is built into the scratch list (swapped in as b.ops): its
  // op indices are dropped by the transform, its a2a records stay in b.
  int32_t scratch = -1;
  std::vector<Op>& fwd = r.bwd_scratch;
  fwd.clear();
  std::swap(b.ops, fwd);
  LayerForward(r, b, scratch, layer, mb, Phase::kBackward);
  std::swap(b.ops, fwd);
  const bool overlap = cfg.comm().shared_expert_overlap();
  auto transform = [&](Op& o) {  // in place, on the copy appended to b.ops
    o.grad = true;
    o.phase = Phase::kBackward;
    o.dep = o.dep2 = -1;
    o.host_sync = false;
    o.routing = -1;
    if (o.cat == Category::kCompute) {
      double mult = o.name == kFlashAttentionScore ? 2.5 : (o.flops > 0 ? 2.0 : 1.5);
      o.flops = uint64_t(o.flops * (o.name == kFlashAttentionScore ? 2.5 : 2.0));
      o.bytes = uint64_t(o.bytes * 1.5);
      TimeNs base = o.dur - TimeNs(hw.kernel_overhead_ns());
      o.dur = TimeNs(std::ceil(base * mult + hw.kernel_overhead_ns()));
      if (o.name == kFlashAttentionScore) {
        // backward efficiency differs from forward
        bool opt = cfg.compute().optimized_kernels();
        double ef = opt ? hw.eff_flash_fwd_opt() : hw.eff_flash_fwd();
        double eb = opt ? hw.eff_flash_bwd_opt() : hw.eff_flash_bwd();
        o.dur = TimeNs(std::ceil(base * 2.5 * ef / eb + hw.kernel_overhead_ns()));
      }
    } else if (o.ckind == CollectiveKind::kAllGather) {
      o.ckind = CollectiveKind::kReduceScatter;
      o.name = kReduceScatterTp;
    } else if (o.ckind == CollectiveKind::kReduceScatter) {
      o.ckind = CollectiveKind::kAllGather;
      o.name = kAllGatherTp;
    }
  };
  bool selective_done = false;
  bool first = true;
  // Selective recompute: before the backward of the op that consumed it,
  // re-run the forward op that produced a dropped tensor (the attention
  // core; the SwiGLU outputs that fed the down projections).
  auto recompute_before = [&](uint16_t consumer) {
    if (rc != "selective") return;
    uint16_t producer = consumer == kFlashAttentionScore ? kFlashAttentionScore
                        : consumer == kGroupedMatmulDown ? kSwiGluExperts
                        : consumer == kMatMulSharedDown  ? kSwiGluShared
                                                         : kOpNameCount;
    if (producer == kOpNameCount) return;
    for (const Op& f : fwd) {
      if (f.name != producer) continue;
      Op re = f;
      re.phase = Phase::kRecompute;
      re.dep = re.dep2 = -1;
      re.host_sync = false;
      re.routing = -1;
      int32_t idx = Add(b, chain, re);
      if (recompute_first < 0) recompute_first = idx;
      return;
    }
  };
  for (int i = static_cast<int>(fwd.size()) - 1; i >= 0; --i) {
    if (overlap && IsShared(fwd[i].name)) continue;
    if (fwd[i].name == kFlashAttentionScore && !selective_done) {
      recompute_before(kFlashAttentionScore);
      selective_done = true;
    }
    if (fwd[i].name == kGroupedMatmulDown) recompute_before(kGroupedMatmulDown);
    if (fwd[i].name == kMatMulSharedDown) recompute_before(kMatMulSharedDown);
    b.ops.push_back(fwd[i]);
    Op& o = b.ops.back();
    transform(o);
    if (first && swap_in >= 0) o.dep2 = swap_in;
    if (first && prefetched >= 0) o.wait_prefetch = prefetched;
    first = false;
    int32_t pre = chain;
    int32_t idx = Chain(b, chain);
    if (overlap && fwd[i].ckind == CollectiveKind::kAllToAllV && fwd[i].name == kAllToAllVCombine) {
      // Shared expert backward overlaps the combine-gradient all-to-all.
      bool first_shared = true;
      for (int j = static_cast<int>(fwd.size()) - 1; j >= 0; --j) {
        if (!IsShared(fwd[j].name)) continue;
        if (fwd[j].name == kMatMulSharedDown && first_shared) {
          // The shared branch starts from the op before the combine.
          int32_t c = pre;
          std::swap(c, chain);
          recompute_before(kMatMulSharedDown);
          std::swap(c, chain);
          if (c != pre) {
            // recompute op added: chain the shared backward after it
            b.ops.push_back(fwd[j]);
            transform(b.ops.back());
            b.ops.back().dep = c;
            first_shared = false;
            Chain(b, chain);
            continue;
          }
        }
        b.ops.push_back(fwd[j]);
        transform(b.ops.back());
        if (first_shared) b.ops.back().dep = pre;
        first_shared = false;
        Chain(b, chain);
      }
      chain = idx;
    }
  }
  int32_t last = chain;
  b.mem.push_back({last, true, uint8_t(CounterKind::kMemActivations), -rec.kept});
  if (recompute_first >= 0 && rec.extra > 0) {
    b.mem.push_back({recompute_first, false, uint8_t(CounterKind::kMemRecompute), rec.extra});
    b.mem.push_back({last, true, uint8_t(CounterKind::kMemRecompute), -rec.extra});
  }
  (void)first_bwd;
  r.acts.erase(RankSim::ActKey(mb, layer));
  if (prefetched >= 0) r.prefetch_end.erase(uint64_t(prefetched));
}

void EngineImpl::BuildTask(RankSim& r, const PipeTask& t, Block& b) {
  int32_t chain = -1;
  const int ms = t.model_stage;
  const int first = shape.stage_first_layer[ms], count = shape.stage_layers[ms];
  const bool last_slice = t.down < 0;
  const double h = shape.hidden, Ns = shape.TokensSeqSplit(), N = shape.TokensPerMicroBatch();
  const double act_bytes = Ns * h * 2;
  const int dpi = shape.DpIndex(r.rank), tpi = shape.TpIndex(r.rank);
  auto p2p = [&](bool send, int peer_stage, int key_stage, bool grad) {
    Op o;
    o.name = send ? kSend : kRecv;
    o.stream = send ? kSSend : kSRecv;
    o.cat = Category::kP2P;
    o.phase = grad ? Phase::kBackward : Phase::kForward;
    o.mb = t.mb;
    o.ckind = send ? CollectiveKind::kSend : CollectiveKind::kRecv;
    o.cclass = CommClass::kPP;
    o.peer = shape.RankOf(peer_stage, dpi, tpi);
    o.group_size = 2;
    o.bytes = uint64_t(act_bytes);
    o.seq = ((int64_t(r.step) * shape.micro_batches + t.mb) * shape.model_stages + key_stage) * 2 + grad;
    o.xkey = Key(0x9e7, r.step, t.mb, key_stage, grad) ^ Key(std::min(r.rank, o.peer), std::max(r.rank, o.peer));
    bool inter = shape.Node(r.rank) != shape.Node(o.peer);
    o.dur = send ? TimeNs((inter ? hw.alpha_inter_ns() : hw.alpha_intra_ns()) + TransferNs(act_bytes, inter)) : 0;
    return o;
  };
  if (!t.backward) {
    if (t.up >= 0) Add(b, chain, p2p(false, t.up, ms, false));
    if (ms == 0) Add(b, chain, Compute(kEmbedding, kVector, 0, Ns * h * 4, Phase::kForward, t.mb, kNone, false));
    for (int l = first; l < first + count; ++l) LayerForward(r, b, chain, l, t.mb, Phase::kForward);
    if (last_slice) {
      double V = shape.vocab;
      Add(b, chain, Compute(kMatMulLmHead, kMatMul, 2 * N * h * V / shape.tp, (h * V / shape.tp + N * h) * 2, Phase::kForward, t.mb, kNone, false));
      Add(b, chain, Compute(kCrossEntropy, kVector, 0, N * V / shape.tp * 4 * 2, Phase::kForward, t.mb, kNone, false));
    }
    if (t.down >= 0) Add(b, chain, p2p(true, t.down, ms + 1, false));
  } else {
    // Prefetch every swapped-out activation of this slice on the copy
    // stream, last layer first, so the copies overlap the backward compute.
    r.swap_ins.clear();
    if (cfg.memory().swap()) {
      for (int l = first + count - 1; l >= first; --l) {
        auto it = r.acts.find(RankSim::ActKey(t.mb, l));
        if (it == r.acts.end() || it->second.swapped <= 0) continue;
        if (r.prefetch_end.count(RankSim::ActKey(t.mb, l))) continue;  // prefetched earlier
        Op si;
        si.name = kSwapIn;
        si.stream = kSCopy;
        si.cat = Category::kCopy;
        si.phase = Phase::kBackward;
        si.flags = kFlagSwapIn | kFlagHostToDevice;
        si.mb = t.mb;
        si.layer = l;
        si.bytes = uint64_t(it->second.swapped);
        si.dur = TransferNsHost(double(it->second.swapped));
        b.ops.push_back(si);
        int32_t idx = static_cast<int32_t>(b.ops.size() - 1);
        b.mem.push_back({idx, false, uint8_t(CounterKind::kMemActivations), it->second.swapped});
        r.swap_ins.emplace_back(l, idx);
      }
    }
    if (t.down >= 0) Add(b, chain, p2p(false, t.down, ms, true));
    if (last_slice) {
      double V = shape.vocab;
      Add(b, chain, Compute(kCrossEntropy, kVector, 0, N * V / shape.tp * 4 * 2, Phase::kBackward, t.mb, kNone, true));
      Add(b, chain, Compute(kMatMulLmHead, kMatMul, 4 * N * h * V / shape.tp, (h * V / shape.tp + N * h) * 4, Phase::kBackward, t.mb, kNone, true));
    }
    for (int l = first + count - 1; l >= first; --l) LayerBackward(r, b, chain, l, t.mb);
    if (ms == 0) Add(b, chain, Compute(kEmbedding, kVector, 0, Ns * h * 4, Phase::kBackward, t.mb, kNone, true));
    if (t.up >= 0) Add(b, chain, p2p(true, t.up, ms - 1, true));
  }
}

void EngineImpl::BuildItem(RankSim& r, const PipeItem& it, Block& b) {
  if (!it.fused) {
    BuildTask(r, it.a, b);
    return;
  }
  // Fine-grained F&B overlap: interleave the two tasks segment by segment,
  // a segment ending at a communication op, so that one task's all-to-all
  // runs while the other computes.
  BuildTask(r, it.a, b);
  size_t na = b.ops.size();
  BuildTask(r, it.b, b);
  size_t n = b.ops.size();
  // The backward task communicates on its own HCCL stream, so the two
  // tasks' all-to-alls do not queue behind each other.
  for (size_t i = na; i < n; ++i)
    if (b.ops[i].stream == kSComm) b.ops[i].stream = kSComm2;
  // Issue order: DualPipe's fixed pattern. Each chain is cut into segments
  // ending at an expert all-to-all and the segments alternate, so every
  // all-to-all is in flight while the other chain computes its next
  // segment (F&B: the backward first, its combine gradient overlapping the
  // forward's attention; the forward's dispatch the backward's experts; ...).
  std::vector<OverlapOp> kinds(n);
  for (size_t i = 0; i < n; ++i) {
    kinds[i].chain = i < na ? 0 : 1;
    kinds[i].boundary = b.ops[i].cat == Category::kCollective && (b.ops[i].cclass == CommClass::kEP);
  }
  const bool fb = it.a.backward != it.b.backward;
  std::vector<int32_t> order = AlternateSegments(kinds, fb && it.b.backward ? 1 : 0);
  std::vector<int32_t> where(n);
  for (size_t k = 0; k < n; ++k) where[order[k]] = int32_t(k);
  std::vector<Op> ops(n);
  for (size_t k = 0; k < n; ++k) {
    Op o = b.ops[order[k]];
    if (o.dep >= 0) o.dep = where[o.dep];
    if (o.dep2 >= 0) o.dep2 = where[o.dep2];
    if (o.sync_on >= 0) o.sync_on = where[o.sync_on];
    ops[k] = o;
  }
  b.ops = std::move(ops);
  for (auto& m : b.mem) m.op = where[m.op];
}

// Swap-ins for the backward task(s) of the next item are issued during this
// item, so the host-link copies overlap compute instead of delaying the
// backward.
void EngineImpl::PrefetchSwapIns(RankSim& r, const PipeItem& next, Block& b) {
  // The prefetch is triggered from the device side (an event recorded when
  // this item's compute begins, as the swap hooks do), not when the host
  // builds the item: the host runs far ahead and would otherwise bring every
  // activation back long before its backward.
  int32_t trigger = -1;
  for (size_t i = 0; i < b.ops.size(); ++i)
    if (b.ops[i].cat == Category::kCompute) {
      trigger = int32_t(i);
      break;
    }
  for (const PipeTask* t : {&next.a, next.fused ? &next.b : nullptr}) {
    if (!t || !t->backward) continue;
    const int ms = t->model_stage;
    const int first = shape.stage_first_layer[ms], count = shape.stage_layers[ms];
    for (int l = first + count - 1; l >= first; --l) {
      uint64_t key = RankSim::ActKey(t->mb, l);
      auto it = r.acts.find(key);
      if (it == r.acts.end() || it->second.swapped <= 0 || r.prefetch_end.count(key)) continue;
      Op si;
      si.name = kSwapIn;
      si.stream = kSCopy;
      si.cat = Category::kCopy;
      si.phase = Phase::kBackward;
      si.flags = kFlagSwapIn | kFlagHostToDevice;
      si.mb = t->mb;
      si.layer = l;
      si.bytes = uint64_t(it->second.swapped);
      si.dur = TransferNsHost(double(it->second.swapped));
      si.prefetch_key = int64_t(key);
      si.dep = trigger;
      b.ops.push_back(si);
      b.mem.push_back({int32_t(b.ops.size() - 1), false, uint8_t(CounterKind::kMemActivations),
                       it->second.swapped});
      r.prefetch_end[key] = kBaseTime;  // pending: filled in when the copy runs
    }
  }
}

void EngineImpl::BuildPrologue(RankSim& r, Block& b) {
  const auto& rc = cfg.routing();
  if (!rc.edpb() || r.step == 0 || r.step % std::max(1, rc.edpb_interval()) != 0) return;
  // EDPB migration: experts whose predicted-load placement changed move
  // (weights + optimizer states) between EP ranks.
  const int g = shape.expert_group;
  std::vector<double> moved(g, 0);
  auto held = [&](int ms, int l) { (void)ms; return shape.IsMoe(l); };
  std::vector<int> layers;
  auto add_slice = [&](int ms) {
    for (int l = shape.stage_first_layer[ms]; l < shape.stage_first_layer[ms] + shape.stage_layers[ms]; ++l)
      if (held(ms, l)) layers.push_back(l);
  };
  if (shape.schedule == "dualpipe") {
    add_slice(r.stage);
    if (shape.pp - 1 - r.stage != r.stage) add_slice(shape.pp - 1 - r.stage);
  } else {
    for (int c = 0; c < shape.vpp; ++c) add_slice(c * shape.pp + r.stage);
  }
  if (layers.empty() || g <= 1) return;
  const double bytes_per_expert = shape.ExpertParamsEach() * 14.0;  // bf16 weights + fp32 states
  int interval = std::max(1, rc.edpb_interval());
  for (int l : layers) {
    auto before = Placement(l, r.step - interval);
    auto after = Placement(l, r.step);
    for (size_t e = 0; e < before.size(); ++e)
      if (before[e] != after[e]) moved[before[e]] += bytes_per_expert;
  }
  double worst = *std::max_element(moved.begin(), moved.end());
  std::vector<int32_t> members = shape.EpGroup(r.rank);
  int32_t chain = -1;
  Op o = Collective(r, kExpertMigration, CollectiveKind::kAllToAllV, CommClass::kEP,
                    shape.EpGroupId(r.rank), members, moved[shape.EpPosition(r.rank)],
                    Phase::kOptimizer, kNone, kNone, false);
  bool inter = shape.SpansNodes(members);
  o.dur = TimeNs((members.size() - 1) * (inter ? hw.alpha_inter_ns() : hw.alpha_intra_ns()) +
                 TransferNs(worst, inter));
  Add(b, chain, o);
}

void EngineImpl::BuildOptimizer(RankSim& r, Block& b) {
  double dense = 0, expert = 0;
  ComputeParams(r.stage, &dense, &expert);
  const int st = r.stage, dpi = shape.DpIndex(r.rank), tpi = shape.TpIndex(r.rank);
  const int edp = shape.dp / shape.ep;
  const bool dist = cfg.memory().distributed_optimizer();
  int32_t chain = -1;
  const auto& dp_members = r.Members(3, shape);
  const auto& edp_members = r.Members(4, shape);
  uint64_t dp_gid = GroupUid(3, st, tpi);
  uint64_t edp_gid = GroupUid(4, st, (dpi % shape.ep) * shape.tp + tpi);
  auto grads = [&](OpName n, CollectiveKind k, uint64_t gid, const std::vector<int32_t>& m, double bytes) {
    if (m.size() <= 1 || bytes <= 0) return;
    Add(b, chain, Collective(r, n, k, CommClass::kDP, gid, m, bytes, Phase::kOptimizer, kNone, kNone, false));
  };
  grads(kReduceScatterGradsDp, dist ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
        dp_gid, dp_members, dense * 4);
  grads(kReduceScatterGradsEdp, dist ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
        edp_gid, edp_members, expert * 4);
  if (shape.world > 1) {
    // Gradient-norm clipping: one small all-reduce over every rank (tree).
    std::vector<int32_t> all;  // size only
    Op o;
    o.name = kAllReduceGradNorm;
    o.stream = kSComm;
    o.cat = Category::kCollective;
    o.phase = Phase::kOptimizer;
    o.ckind = CollectiveKind::kAllReduce;
    o.cclass = CommClass::kDP;
    o.group = GroupUid(5, 0, 0);
    o.group_size = shape.world;
    o.bytes = 4;
    double alpha = shape.world > shape.devices_per_node ? hw.alpha_inter_ns() : hw.alpha_intra_ns();
    o.dur = TimeNs(2 * std::ceil(std::log2(double(shape.world))) * alpha);
    Add(b, chain, o);
  }
  double local = dist ? dense / shape.dp + expert / std::max(1, edp) : dense + expert;
  Add(b, chain, Compute(kAdamW, kVector, 0, local * 32, Phase::kOptimizer, kNone, kNone, false));
  // The optimizer starts once every gradient of the step is computed.
  b.ops.front().after_all = true;
  if (dist) {
    grads(kAllGatherParamsDp, CollectiveKind::kAllGather, dp_gid, dp_members, dense * 2);
    grads(kAllGatherParamsEdp, CollectiveKind::kAllGather, edp_gid, edp_members, expert * 2);
  }
}

void EngineImpl::Finalize(RankSim& r, Block& b) {
  for (Op& o : b.ops) {
    if (o.cat != Category::kCollective) continue;
    o.seq = r.NextSeq(o.group);
    o.xkey = Key(o.group, uint64_t(o.seq), 0xc011);
  }
  std::stable_sort(b.mem.begin(), b.mem.end(),
                   [](const MemAction& x, const MemAction& y) { return x.op < y.op; });
  size_t n = b.ops.size();
  r.launch.assign(n, 0);
  r.end.assign(n, 0);
  r.state.assign(n, 0);
  r.corr.assign(n, 0);
  r.op = 0;
  r.mem_ptr = 0;
}

// ---------------------------------------------------------------------------
// Running

bool EngineImpl::NextBlock(RankSim& r) {
  Block& b = r.block;
  while (true) {
    b.Clear();
    switch (r.phase) {
      case 0: {  // step start
        r.step_host_start = r.t_py;
        if (r.out) {
          Track& py = r.out->tracks[0];
          r.marker_index = py.events.size();
          Event m;
          m.ts = r.t_py;
          m.name = r.out->strings.Intern(fmt::format("ProfilerStep#{}", r.step));
          m.category = Category::kMarker;
          m.flags = kFlagStepMarker;
          m.step = r.step;
          py.events.Append(m);
        }
        BuildPrologue(r, b);
        r.phase = 1;
        r.item = 0;
        break;
      }
      case 1: {
        const auto& items = schedules[r.stage];
        if (r.item < items.size()) {
          BuildItem(r, items[r.item++], b);
          if (cfg.memory().swap() && r.item < items.size()) PrefetchSwapIns(r, items[r.item], b);
        } else {
          BuildOptimizer(r, b);
          r.phase = 2;
        }
        break;
      }
      case 2: {  // step end: the host reads the loss (blocking)
        TimeNs s0 = r.t_py;
        r.t_py = std::max(r.t_py, r.last_dev_end);
        r.t_deq = std::max(r.t_deq, r.t_py);
        if (r.out) {
          Track& py = r.out->tracks[0];
          Event e;
          e.ts = s0;
          e.dur = r.t_py - s0;
          e.name = r.Fixed(r.sync_device_name, "aclrtSynchronizeDevice (loss.item)");
          e.category = Category::kSync;
          e.flags = kFlagBlocking;
          e.step = r.step;
          py.events.Append(e);
          py.events.dur[r.marker_index] = r.t_py - py.events.ts[r.marker_index];
        }
        ++r.step;
        r.phase = r.step >= cfg.steps() ? 4 : 0;
        if (r.phase == 4) return false;
        continue;
      }
      default:
        return false;
    }
    if (b.ops.empty()) continue;
    Finalize(r, b);
    return true;
  }
}

bool EngineImpl::Advance(RankSim& r, bool pass2) {
  bool progressed = false;
  const bool tq = task_queue_;
  const TimeNs py_cost = py_cost_, dq_cost = dq_cost_;
  while (r.phase != 4) {
    if (r.op >= r.block.ops.size()) {
      if (!NextBlock(r)) break;
      progressed = true;
      continue;
    }
    const size_t i = r.op;
    const Op& op = r.block.ops[i];
    if (r.state[i] == 0) {
      TimeNs s0 = 0, s1 = 0;
      if (op.host_sync && op.sync_on >= 0) {
        s0 = r.t_py;
        r.t_py = std::max(r.t_py, r.end[op.sync_on] + TimeNs(hw.d2h_sync_ns()));
        s1 = r.t_py;
        r.t_py += op.host_work;
      }
      TimeNs py0 = r.t_py, py1 = py0 + py_cost, dq0 = 0, dq1 = 0;
      r.t_py = py1;
      if (tq) {
        dq0 = std::max(r.t_deq, py1);
        dq1 = dq0 + dq_cost;
        r.t_deq = dq1;
        r.launch[i] = dq1;
      } else {
        r.launch[i] = py1;
      }
      r.corr[i] = ++r.correlation;
      r.state[i] = 1;
      if (r.out) EmitHost(r, op, py0, py1, dq0, dq1, s0, s1);
    }
    TimeNs ready = std::max(r.launch[i], r.ready[op.stream]);
    if (op.dep >= 0) ready = std::max(ready, r.end[op.dep]);
    if (op.dep2 >= 0) ready = std::max(ready, r.end[op.dep2]);
    if (op.after_all) ready = std::max(ready, r.last_dev_end);
    if (op.wait_prefetch >= 0) ready = std::max(ready, r.prefetch_end[uint64_t(op.wait_prefetch)]);
    TimeNs finish;
    if (op.cat == Category::kCollective) {
      CrossEntry& e = cross_[op.xkey];
      if (!pass2 && r.state[i] == 1) {
        e.expected = op.group_size;
        ++e.arrived;
        e.max_arrival = std::max(e.max_arrival, ready);
        e.dur = op.dur;
        r.state[i] = 2;
      }
      if (e.arrived < e.expected) return progressed;
      finish = std::max(ready, e.max_arrival + e.dur);
    } else if (op.stream == kSSend) {
      finish = ready + op.dur;
      if (!pass2) cross_[op.xkey].done = finish;
    } else if (op.stream == kSRecv) {
      auto it = cross_.find(op.xkey);
      if (it == cross_.end() || it->second.done == kNever) return progressed;
      finish = std::max(ready, it->second.done);
    } else {
      finish = ready + op.dur;
    }
    r.end[i] = finish;
    if (op.prefetch_key >= 0) r.prefetch_end[uint64_t(op.prefetch_key)] = finish;
    r.ready[op.stream] = finish;
    r.last_dev_end = std::max(r.last_dev_end, finish);
    if (r.out) Emit(r, op, i, ready, finish);
    ++r.op;
    progressed = true;
  }
  return progressed;
}

void EngineImpl::InitRankOutput(RankSim& r) {
  Rank& k = *r.out;
  std::vector<Track> recycled = std::move(k.tracks);
  k = Rank();
  k.rank = r.rank;
  k.device_id = r.rank % shape.devices_per_node;
  k.pid = 100000 + r.rank;
  k.host = fmt::format("node{}", shape.Node(r.rank));
  k.tracks.reserve(2 + kStreams + 6);
  k.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "python", 100000 + r.rank);
  k.AddTrack(TrackKind::kHostThread, TrackRole::kHostDispatch, "dequeue (task queue)", 200000 + r.rank);
  k.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "stream 0 (compute)", 0);
  k.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "stream 1 (hccl)", 1);
  k.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "stream 2 (pp send)", 2);
  k.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "stream 3 (pp recv)", 3);
  k.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCopy, "stream 4 (copy/swap)", 4);
  k.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "stream 5 (hccl, overlapped task)", 5);
  static const std::pair<CounterKind, const char*> counters[] = {
      {CounterKind::kMemAllocated, "memory.allocated"}, {CounterKind::kMemWeights, "memory.weights"},
      {CounterKind::kMemGradients, "memory.gradients"}, {CounterKind::kMemOptimizer, "memory.optimizer"},
      {CounterKind::kMemActivations, "memory.activations"},
      {CounterKind::kMemRecompute, "memory.recompute"}};
  for (auto [kind, name] : counters) k.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, name).counter = kind;
  // Ranks emit similar event counts: size each track like the last emitted
  // rank's so the columns grow without reallocation.
  // A recycled Rank lends its columns (emptied, capacity kept).
  for (size_t t = 0; t < k.tracks.size() && t < recycled.size(); ++t) {
    Track& from = recycled[t];
    Track& to = k.tracks[t];
    from.events.Clear();
    from.comms.clear();
    from.comm_ranks.clear();
    from.comm_splits.clear();
    from.sample_ts.clear();
    from.sample_value.clear();
    to.events = std::move(from.events);
    to.comms = std::move(from.comms);
    to.comm_ranks = std::move(from.comm_ranks);
    to.comm_splits = std::move(from.comm_splits);
    to.sample_ts = std::move(from.sample_ts);
    to.sample_value = std::move(from.sample_value);
  }
  for (size_t t = 0; t < k.tracks.size() && t < last_track_events_.size(); ++t) {
    k.tracks[t].events.Reserve(last_track_events_[t]);
    k.tracks[t].comms.reserve(last_track_comms_[t]);
  }
  r.op_names = op_names_;
  // Operator names are interned on first use (most ranks use a fraction).
  for (auto* table : {&r.dev_name, &r.launch_name, &r.enqueue_name})
    for (auto& row : *table) row[0] = row[1] = RankSim::kUninterned;
  // Constant memory: bf16 weights, fp32 gradients, Adam states (12 B/param,
  // sharded over DP with the distributed optimizer).
  double dense = 0, expert = 0;
  ComputeParams(r.stage, &dense, &expert);
  const int edp = std::max(1, shape.dp / shape.ep);
  double opt = cfg.memory().distributed_optimizer() ? 12 * (dense / shape.dp + expert / edp)
                                                     : 12 * (dense + expert);
  r.mem_events.emplace_back(kBaseTime, 0, uint8_t(CounterKind::kMemWeights), int64_t(2 * (dense + expert)));
  r.mem_events.emplace_back(kBaseTime, 1, uint8_t(CounterKind::kMemGradients), int64_t(4 * (dense + expert)));
  r.mem_events.emplace_back(kBaseTime, 2, uint8_t(CounterKind::kMemOptimizer), int64_t(opt));
}

void EngineImpl::EmitHost(RankSim& r, const Op& op, TimeNs py0, TimeNs py1, TimeNs dq0,
                          TimeNs dq1, TimeNs s0, TimeNs s1) {
  Track& py = r.out->tracks[0];
  Event e;
  e.step = r.step;
  e.micro_batch = op.mb;
  e.layer = op.layer;
  e.phase = op.phase;
  if (s1 > s0 || op.host_sync) {
    e.ts = s0;
    e.dur = s1 - s0;
    e.name = r.Fixed(r.sync_stream_name, "aclrtSynchronizeStream (token counts)");
    e.category = Category::kSync;
    e.flags = kFlagBlocking | kFlagDeviceToHost;
    py.events.Append(e);
    e.flags = 0;
    if (op.host_work > 0) {
      e.ts = s1;
      e.dur = op.host_work;
      e.name = r.Fixed(r.split_lists_name, "MoE token counts -> split lists (Python)");
      e.category = Category::kHostOp;
      py.events.Append(e);
    }
  }
  e.category = Category::kLaunch;
  e.correlation = r.corr[r.op];
  if (task_queue_) {
    e.ts = py0;
    e.dur = py1 - py0;
    e.name = r.OpNameId(2, op.name, op.grad);
    py.events.Append(e);
    e.ts = dq0;
    e.dur = dq1 - dq0;
    e.name = r.OpNameId(1, op.name, op.grad);
    r.out->tracks[1].events.Append(e);
  } else {
    e.ts = py0;
    e.dur = py1 - py0;
    e.name = r.OpNameId(1, op.name, op.grad);
    py.events.Append(e);
  }
}

void EngineImpl::Emit(RankSim& r, const Op& op, size_t i, TimeNs start, TimeNs finish) {
  Track& tr = r.out->tracks[2 + op.stream];
  Event e;
  e.ts = start;
  e.dur = finish - start;
  e.name = r.OpNameId(0, op.name, op.grad);
  e.category = op.cat;
  e.phase = op.phase;
  e.flags = op.flags;
  e.correlation = r.corr[i];
  e.step = r.step;
  e.micro_batch = op.mb;
  e.layer = op.layer;
  e.flops = op.flops;
  e.bytes = op.bytes;
  if (op.cat == Category::kCollective || op.cat == Category::kP2P) {
    CommRecord c;
    c.kind = op.ckind;
    c.comm_class = op.cclass;
    c.sequence = op.seq;
    c.group_size = op.group_size;
    c.bytes = op.bytes;
    if (op.cat == Category::kP2P) {
      c.peer = op.peer;
      c.group = r.GroupName(~uint64_t(op.peer), [&] {
        return fmt::format("pp_{}_{}", std::min(r.rank, op.peer), std::max(r.rank, op.peer));
      });
      const int32_t pair[2] = {std::min(r.rank, op.peer), std::max(r.rank, op.peer)};
      c.group_ranks = tr.AddRanks(pair);
    } else {
      static const char* prefix[] = {"?", "ep", "tp", "dp", "edp", "world"};
      int kind = int(op.group >> 56);
      c.group = r.GroupName(op.group, [&] {
        return fmt::format("{}_{:x}", prefix[kind < 6 ? kind : 0], op.group & ((uint64_t(1) << 56) - 1));
      });
      if (op.a2a >= 0) {
        const A2AInfo& a = r.block.a2a[op.a2a];
        c.group_ranks = tr.AddRanks(r.ep_members);
        bool combine = op.name == kAllToAllVCombine;
        bool reverse = combine != op.grad;  // combine, or dispatch's gradient
        c.send_splits = tr.AddSplits(reverse ? a.recv : a.send);
        c.recv_splits = tr.AddSplits(reverse ? a.send : a.recv);
      } else if (kind >= 1 && kind <= 4) {
        // Member lists are built once per rank (see RankSim::Members).
        c.group_ranks = tr.AddRanks(r.Members(kind, shape));
      }
    }
    e.comm = static_cast<int32_t>(tr.comms.size());
    tr.comms.push_back(std::move(c));
  }
  tr.events.Append(e);
  ++events;
  if (op.routing >= 0) {
    const A2AInfo& a = r.block.a2a[op.routing];
    RoutingRecord rr;
    rr.ts = start;
    rr.step = r.step;
    rr.micro_batch = op.mb;
    rr.layer = op.layer;
    rr.ep_size = shape.expert_group;
    rr.tokens_per_expert = a.local_counts;
    if (cfg.routing().edpb()) rr.expert_to_ep_rank = a.placement;
    r.out->routing.push_back(std::move(rr));
  }
  while (r.mem_ptr < r.block.mem.size() && r.block.mem[r.mem_ptr].op == int32_t(i)) {
    const MemAction& m = r.block.mem[r.mem_ptr++];
    r.mem_events.emplace_back(m.at_end ? finish : start, int(r.mem_events.size()), m.cat, m.delta);
  }
}

void EngineImpl::FinishRankOutput(RankSim& r) {
  std::sort(r.mem_events.begin(), r.mem_events.end());
  Rank& k = *r.out;
  // tracks: 8 = allocated, 9.. = weights, gradients, optimizer, activations, recompute
  constexpr size_t kAllocTrack = 2 + kStreams;
  auto track_of = [&](uint8_t cat) -> Track* {
    for (size_t t = kAllocTrack; t < k.tracks.size(); ++t)
      if (uint8_t(k.tracks[t].counter) == cat) return &k.tracks[t];
    return nullptr;
  };
  double total = 0;
  std::vector<double> value(kCounterKindCount, 0);
  for (size_t i = 0; i < r.mem_events.size(); ++i) {
    // Plain copies, not structured bindings: clang 14 cannot capture those.
    const auto ts = std::get<0>(r.mem_events[i]);
    const auto cat = std::get<2>(r.mem_events[i]);
    const auto delta = std::get<3>(r.mem_events[i]);
    value[cat] += double(delta);
    total += double(delta);
    bool last_at_ts = i + 1 == r.mem_events.size() || std::get<0>(r.mem_events[i + 1]) != ts;
    Track* t = track_of(cat);
    auto put = [&](Track* tr, double v) {
      if (!tr) return;
      if (!tr->sample_ts.empty() && tr->sample_ts.back() == ts) tr->sample_value.back() = v;
      else {
        tr->sample_ts.push_back(ts);
        tr->sample_value.push_back(v);
      }
    };
    put(t, value[cat]);
    if (last_at_ts) put(&k.tracks[kAllocTrack], total);
  }
  r.mem_events.clear();
}

void EngineImpl::Simulate() {
  if (simulated) return;
  std::vector<RankSim> sims(shape.world);
  for (int i = 0; i < shape.world; ++i) {
    sims[i].rank = i;
    sims[i].stage = shape.Stage(i);
  }
  int remaining = shape.world;
  std::vector<char> done(shape.world, 0);
  while (remaining > 0) {
    bool any = false;
    for (int i = 0; i < shape.world; ++i) {
      if (done[i]) continue;
      any |= Advance(sims[i], false);
      if (sims[i].phase == 4) {
        done[i] = 1;
        --remaining;
        sims[i].block = Block();
        sims[i].acts.clear();
      }
    }
    if (!any && remaining > 0) throw std::logic_error("tracegen: simulation deadlock (schedule bug)");
  }
  simulated = true;
}

void EngineImpl::EmitRank(int rank, Rank* out_rank) {
  Simulate();
  Rank& out = *out_rank;
  RankSim sim;
  sim.rank = rank;
  sim.stage = shape.Stage(rank);
  sim.out = &out;
  // Pass 2 keeps the routing of one EP group while its members are emitted
  // one after another (ranks of a group are contiguous), instead of
  // re-sampling every member's tokens for each emitted rank.
  const uint64_t group = shape.EpGroupId(rank);
  if (!pass2_cache_ || group != pass2_group_) routing_cache_.clear();
  pass2_cache_ = true;
  pass2_group_ = group;
  InitRankOutput(sim);
  Advance(sim, true);
  if (sim.phase != 4) throw std::logic_error("tracegen: pass 2 blocked (missing cross-rank result)");
  FinishRankOutput(sim);
  last_track_events_.resize(out.tracks.size());
  last_track_comms_.resize(out.tracks.size());
  for (size_t t = 0; t < out.tracks.size(); ++t) {
    last_track_events_[t] = out.tracks[t].events.size();
    last_track_comms_[t] = out.tracks[t].comms.size();
  }
  // The dequeue thread exists only with the task queue.
  if (!cfg.host().task_queue() && out.tracks[1].events.empty()) out.tracks[1].name = out.strings.Intern("dequeue (unused)");
}

Metadata EngineImpl::BaseMetadata() const {
  Metadata m;
  m.source = "tracegen";
  m.origin = cfg.preset().empty() ? "config" : "preset:" + cfg.preset();
  m.producer = "moetrace tracegen";
  m.layout.world_size = shape.world;
  m.layout.dp = shape.dp;
  m.layout.tp = shape.tp;
  m.layout.pp = shape.pp;
  m.layout.vpp = shape.vpp;
  m.layout.ep = shape.ep;
  m.layout.cp = 1;
  m.layout.devices_per_node = shape.devices_per_node;
  m.device = hw.device();
  m.device_peak_flops = hw.peak_flops();
  m.device_memory_bytes = uint64_t(hw.hbm_bytes());
  double per_mb = 0;
  for (int l = 0; l < shape.layers; ++l) per_mb += shape.LayerForwardFlops(l);
  per_mb += 2.0 * shape.TokensPerMicroBatch() * shape.hidden * shape.vocab;
  const double sequences = double(cfg.parallel().global_batch_size());
  m.model_flops_per_step = per_mb * 3 * sequences / shape.mbs;
  m.tokens_per_step = int64_t(sequences) * shape.seq;
  m.config_json = ConfigToJson(cfg);
  m.attributes.emplace_back("tracegen.expert_group", std::to_string(shape.expert_group));
  m.attributes.emplace_back("tracegen.micro_batches", std::to_string(shape.micro_batches));
  m.attributes.emplace_back("tracegen.schedule", shape.schedule);
  return m;
}

Engine::Engine(const RunConfig& config) : impl_(std::make_unique<EngineImpl>(config)) {}
Engine::~Engine() = default;
void Engine::Simulate() { impl_->Simulate(); }
Rank Engine::EmitRank(int r) {
  Rank out;
  impl_->EmitRank(r, &out);
  return out;
}
void Engine::EmitRank(int r, Rank* out) { impl_->EmitRank(r, out); }
Metadata Engine::BaseMetadata() const { return impl_->BaseMetadata(); }
int Engine::world_size() const { return impl_->shape.world; }
int64_t Engine::events_emitted() const { return impl_->events; }

}  // namespace moetrace::tracegen
