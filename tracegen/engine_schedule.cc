// Blocks of ops per pipeline schedule item: a forward or backward task
// (its p2p sends/receives, embedding, layers, LM head and swap-ins), fused
// F&B items interleaved segment by segment, swap-in prefetch for the next
// item, the step prologue (EDPB expert migration), the optimizer
// (gradient reduce-scatter/all-reduce, AdamW, parameter all-gather), and
// Finalize, which numbers collectives and readies a block to run.
#include <algorithm>
#include <cmath>
#include <utility>

#include "tracegen/engine_internal.h"
#include "tracegen/overlap.h"
#include "tracegen/rng.h"

namespace moetrace::tracegen {

void EngineImpl::BuildTask(RankSim& r, const PipeTask& t, Block& b) const {
  int32_t chain = -1;
  const int ms = t.model_stage;
  const int first = shape.stage_first_layer[ms], count = shape.stage_layers[ms];
  const bool last_slice = t.down < 0;
  const double h = shape.hidden, Ns = shape.TokensSeqSplit();
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
    o.bytes = uint64_t(act_bytes * P2PScale(key_stage, grad));
    o.seq = ((int64_t(r.step) * shape.micro_batches + t.mb) * shape.model_stages + key_stage) * 2 + grad;
    o.xkey = Key(0x9e7, r.step, t.mb, key_stage, grad) ^ Key(std::min(r.rank, o.peer), std::max(r.rank, o.peer));
    o.dur = send ? P2PSendNs(shape.Node(r.rank) != shape.Node(o.peer), P2PScale(key_stage, grad)) : 0;
    return o;
  };
  if (!t.backward) {
    if (t.up >= 0) Add(b, chain, p2p(false, t.up, ms, false));
    if (ms == 0) AddEmbedding(b, chain, t.mb, false);
    for (int l = first; l < first + count; ++l) LayerForward(r, b, chain, l, t.mb, Phase::kForward);
    if (last_slice) AddMtpHeads(b, chain, t.mb, false);  // parallel.mtp_stage before the last
    if (last_slice) AddHead(b, chain, t.mb, false);
    // MTP modules (model.mtp_modelled): each predicts one more token ahead
    // from the previous depth's hidden states and the shifted tokens'
    // embedding, through its own layer and the shared LM head.
    for (int l = first + count; l < SliceEnd(ms); ++l) {
      AddMtpInput(b, chain, t.mb, l, false);
      LayerForward(r, b, chain, l, t.mb, Phase::kForward);
      if (!MtpApart()) AddHead(b, chain, t.mb, false);
    }
    if (t.down >= 0) Add(b, chain, p2p(true, t.down, ms + 1, false));
  } else {
    // Prefetch every swapped-out activation of this slice on the copy
    // stream, last layer first, so the copies overlap the backward compute.
    r.swap_ins.clear();
    if (cfg.memory().swap()) {
      for (int l = SliceEnd(ms) - 1; l >= first; --l) {
        auto it = r.acts.find(RankSim::ActKey(t.mb, l));
        if (it == r.acts.end() || it->second.swapped <= 0) continue;
        if (r.prefetch_end.count(RankSim::ActKey(t.mb, l))) continue;  // prefetched earlier
        b.ops.push_back(SwapIn(t.mb, l, it->second.swapped));
        int32_t idx = static_cast<int32_t>(b.ops.size() - 1);
        b.mem.push_back({idx, false, uint8_t(CounterKind::kMemActivations), it->second.swapped});
        r.swap_ins.emplace_back(l, idx);
      }
    }
    if (t.down >= 0) Add(b, chain, p2p(false, t.down, ms, true));
    for (int l = SliceEnd(ms) - 1; l >= first + count; --l) {
      if (!MtpApart()) AddHead(b, chain, t.mb, true);
      LayerBackward(r, b, chain, l, t.mb);
      AddMtpInput(b, chain, t.mb, l, true);
    }
    if (last_slice) AddHead(b, chain, t.mb, true);
    if (last_slice) AddMtpHeads(b, chain, t.mb, true);
    for (int l = first + count - 1; l >= first; --l) LayerBackward(r, b, chain, l, t.mb);
    if (ms == 0) AddEmbedding(b, chain, t.mb, true);
    // The task's last weight gradients; nothing waits for them. In a fused
    // pair adaptive pipe issues them after the whole pair (BuildItem).
    if (!r.defer_wgrads && !r.zb_wgrads) FlushWgrads(r, b);
    if (t.up >= 0) Add(b, chain, p2p(true, t.up, ms - 1, true));
  }
}

void EngineImpl::BuildItem(RankSim& r, const PipeItem& it, Block& b) const {
  if (!it.fused) {
    // Adaptive pipe's cooldown backwards run their input gradients only and
    // issue the chunk's weight gradients after its p2p send, as DualPipe's
    // cooldown steps do (`_backward_chunk(enable_zb=True)`, then
    // `_weight_chunk()` before the next backward): the upstream stage gets
    // its gradient sooner, and the weight gradients compute while this
    // stage waits for its next one (zero-bubble's W in the drain).
    const bool zb = it.halves && it.a.backward && SplitsA2A();
    r.zb_wgrads = zb;
    if (it.halves)
      BuildHalves(r, it.a, b);
    else
      BuildTask(r, it.a, b);
    r.zb_wgrads = false;
    if (zb && !r.pending_wgrads.empty()) {
      for (Op& w : r.pending_wgrads) w.dep = w.dep2 = -1;  // indices before the halving
      FlushWgrads(r, b);
    }
    return;
  }
  if (it.a.mb == it.b.mb && it.a.model_stage == it.b.model_stage && it.a.backward != it.b.backward) {
    // The last slice's forward and backward of one micro-batch (the adaptive
    // schedule pairs them at the last stage, where warmup is 0): the
    // backward starts from the loss, so after the forward; there is nothing
    // to interleave. Interleaved, the backward's first segment (LM head,
    // last layer) ran before its own forward.
    // Adaptive pipe cuts each of the two, as any chunk without a partner,
    // into two halves overlapping each other.
    const bool halves = it.halves;
    auto build = [&](const PipeTask& t) {
      if (halves)
        BuildHalves(r, t, b);
      else
        BuildTask(r, t, b);
    };
    build(it.a.backward ? it.b : it.a);
    int32_t fwd_last = -1;
    for (size_t i = 0; i < b.ops.size(); ++i)
      if (b.ops[i].stream != kSCopy) fwd_last = int32_t(i);
    const size_t nf = b.ops.size();
    build(it.a.backward ? it.a : it.b);
    for (size_t i = nf; i < b.ops.size(); ++i) {
      if (b.ops[i].stream == kSCopy) continue;
      if (halves) {
        // Each half starts from the loss: after the whole forward.
        if (b.ops[i].dep < 0) b.ops[i].dep = fwd_last;
        continue;
      }
      b.ops[i].dep2 = fwd_last;
      break;
    }
    return;
  }
  // Fine-grained F&B overlap: interleave the two tasks segment by segment,
  // a segment ending at a communication op, so that one task's all-to-all
  // runs while the other computes.
  const bool fb = it.a.backward != it.b.backward;
  r.defer_wgrads = fb && SplitsA2A();
  BuildTask(r, it.a, b);
  size_t na = b.ops.size();
  BuildTask(r, it.b, b);
  r.defer_wgrads = false;
  FuseChains(b, na, fb && it.b.backward, 0, fb && SplitsA2A() && shape.tp > 1);
  if (!r.pending_wgrads.empty()) {
    // Adaptive pipe: the backward chunk's last weight gradients go after
    // the whole pair, so the forward's tail and its output's p2p send do not
    // queue behind them on the compute stream (MindSpeed's fb-overlap pops
    // its WeightGradStore after the layer's forward output and p2p sends).
    // Their dependencies were indices before the fusion: the compute
    // stream's order already puts them after their input gradients.
    for (Op& w : r.pending_wgrads) w.dep = w.dep2 = -1;
    FlushWgrads(r, b);
  }
}

void EngineImpl::FlushWgrads(RankSim& r, Block& b) const {
  const int32_t base = int32_t(b.ops.size());
  for (const Op& w : r.pending_wgrads) b.ops.push_back(w);
  for (MemAction m : r.pending_wgrad_mem) {
    m.op += base;
    b.mem.push_back(m);
  }
  r.pending_wgrads.clear();
  r.pending_wgrad_mem.clear();
}

void EngineImpl::BuildHalves(RankSim& r, const PipeTask& t, Block& b) const {
  const size_t n0 = b.ops.size();  // ops already in the block stay as they are
  BuildTask(r, t, b);
  const size_t n = b.ops.size();
  // What is cut in two: the compute and the in-layer TP/EP collectives. The
  // p2p receive, swaps and the routing record stay whole (one per
  // micro-batch); the p2p send leaves after both halves.
  auto halved = [](const Op& o) {
    return o.cat == Category::kCompute ||
           (o.cat == Category::kCollective && (o.cclass == CommClass::kEP || o.cclass == CommClass::kTP));
  };
  const bool tp_inter = shape.SpansNodes(r.Members(2, shape));
  const bool ep_inter = shape.SpansNodes(r.Members(1, shape));
  // The fixed part of an op's time (kernel launch overhead, collective
  // latency terms), paid by each half; the rest scales with the tokens.
  auto fixed = [&](const Op& o) -> double {
    if (o.cat == Category::kCompute) return hw.kernel_overhead_ns();
    bool inter = o.cclass == CommClass::kTP ? tp_inter : ep_inter;
    if (o.name == kAllToAllVDispatchIntra || o.name == kAllToAllVCombineIntra) inter = false;
    double steps = (o.group_size - 1) * (o.ckind == CollectiveKind::kAllReduce ? 2 : 1);
    return steps * (inter ? hw.alpha_inter_ns() : hw.alpha_intra_ns());
  };
  std::vector<Op> out;
  out.reserve(2 * n);
  std::vector<int32_t> where_a(n, -1), where_b(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (i >= n0 && b.ops[i].cat == Category::kP2P && b.ops[i].ckind == CollectiveKind::kSend) continue;
    where_a[i] = int32_t(out.size());
    out.push_back(b.ops[i]);
  }
  const size_t na = out.size();
  std::vector<int32_t> a2a_b(b.a2a.size(), -1);  // the second half's split sizes
  for (size_t i = n0; i < n; ++i) {
    if (!halved(b.ops[i])) continue;
    Op& first = out[where_a[i]];
    Op second = first;
    const TimeNs f = std::min<TimeNs>(first.dur, TimeNs(fixed(first)));
    const TimeNs body = first.dur - f;
    first.dur = f + body / 2;
    second.dur = f + (body - body / 2);
    first.flops = b.ops[i].flops / 2;
    second.flops = b.ops[i].flops - first.flops;
    first.bytes = b.ops[i].bytes / 2;
    second.bytes = b.ops[i].bytes - first.bytes;
    second.routing = -1;  // the micro-batch's routing is recorded once
    if (second.a2a >= 0) {
      int32_t& nb = a2a_b[size_t(second.a2a)];
      if (nb < 0) {
        A2AInfo half = b.a2a[size_t(second.a2a)];
        A2AInfo& whole = b.a2a[size_t(second.a2a)];
        for (size_t k = 0; k < half.send.size(); ++k) {
          half.send[k] = whole.send[k] - whole.send[k] / 2;
          half.recv[k] = whole.recv[k] - whole.recv[k] / 2;
          whole.send[k] /= 2;
          whole.recv[k] /= 2;
        }
        half.local_counts.clear();
        b.a2a.push_back(std::move(half));
        nb = int32_t(b.a2a.size() - 1);
      }
      second.a2a = nb;
    }
    where_b[i] = int32_t(out.size());
    out.push_back(second);
  }
  // Dependencies of the second half: on its own copy of a halved op, else
  // on the whole op (the p2p receive, a swap-in).
  auto remap_b = [&](int32_t d) { return d < 0 ? d : where_b[d] >= 0 ? where_b[d] : where_a[d]; };
  for (size_t i = n0; i < n; ++i) {
    if (where_b[i] < 0) continue;
    Op& o = out[where_b[i]];
    o.dep = remap_b(b.ops[i].dep);
    o.dep2 = remap_b(b.ops[i].dep2);
    o.sync_on = remap_b(b.ops[i].sync_on);
  }
  for (size_t i = n0; i < na; ++i) {
    Op& o = out[i];
    for (int32_t* d : {&o.dep, &o.dep2, &o.sync_on})
      if (*d >= 0) *d = where_a[*d];
  }
  const int32_t last_b = int32_t(out.size()) - 1;
  for (size_t i = n0; i < n; ++i) {
    if (where_a[i] >= 0) continue;  // the p2p send: after both halves
    Op o = b.ops[i];
    o.dep = o.dep >= 0 ? where_a[o.dep] : o.dep;
    o.dep2 = last_b;
    where_a[i] = int32_t(out.size());
    out.push_back(o);
  }
  for (auto& m : b.mem) m.op = where_a[m.op];
  b.ops = std::move(out);
  FuseChains(b, na, false, n0);
}

void EngineImpl::FuseChains(Block& b, size_t na, bool second_first, size_t start, bool hook_on_attention) const {
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
  // Ops before `start` (already fused or built) keep their places.
  std::vector<OverlapOp> kinds(n - start);
  for (size_t i = start; i < n; ++i) {
    kinds[i - start].chain = i < na ? 0 : 1;
    kinds[i - start].boundary = b.ops[i].cat == Category::kCollective && (b.ops[i].cclass == CommClass::kEP);
  }
  std::vector<int32_t> order = AlternateSegments(kinds, second_first ? 1 : 0);
  for (auto& o : order) o += int32_t(start);
  if (hook_on_attention) LaunchCombineGradAfterTp(b, na, second_first ? 1 : 0, order);
  order.insert(order.begin(), start, 0);
  for (size_t k = 0; k < start; ++k) order[k] = int32_t(k);
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

void EngineImpl::LaunchCombineGradAfterTp(Block& b, size_t na, int bwd_chain, std::vector<int32_t>& order) const {
  // MindSpeed's fb-overlap with TP > 1 (`a2a_hooked_on_attention`) launches
  // the backward's combine-gradient all-to-all from inside the forward's
  // attention, once its TP all-gather has finished ("to avoid bandwidth
  // compete"): the all-to-all then flies during the attention's matmuls
  // instead of while the device waits for that all-gather (and for the
  // reduce-scatter before it). Here: the combine gradient's first step moves
  // in issue order to just after the forward chain's next TP all-gather and
  // waits for its end; it is issued no later than the backward chain's next
  // op, which depends on it, so each chain keeps its own order.
  auto backward = [&](int32_t i) { return (size_t(i) >= na) == (bwd_chain == 1); };
  std::vector<int32_t> out;
  out.reserve(order.size());
  int32_t held = -1;
  for (int32_t i : order) {
    const Op& o = b.ops[size_t(i)];
    if (backward(i)) {
      if (held >= 0) out.push_back(std::exchange(held, -1));
      if (o.cat == Category::kCollective && o.cclass == CommClass::kEP && o.dep2 < 0 &&
          (o.name == kAllToAllVCombineInter || o.name == kAllToAllVCombine)) {
        held = i;
        continue;
      }
      out.push_back(i);
      continue;
    }
    out.push_back(i);
    if (held >= 0 && o.name == kAllGatherTp && o.cat == Category::kCollective) {
      b.ops[size_t(held)].dep2 = i;
      out.push_back(std::exchange(held, -1));
    }
  }
  if (held >= 0) out.push_back(held);
  order = std::move(out);
}

void EngineImpl::AddEmbedding(Block& b, int32_t& chain, int mb, bool backward) const {
  const double Ns = shape.TokensSeqSplit(), h = shape.hidden;
  Add(b, chain, Compute(kEmbedding, kVector, 0, Ns * h * 4, backward ? Phase::kBackward : Phase::kForward,
                        mb, kNone, backward));
}

// LM head and cross-entropy (reversed in the backward, matmul x2).
void EngineImpl::AddHead(Block& b, int32_t& chain, int mb, bool backward) const {
  const double N = shape.TokensPerMicroBatch(), h = shape.hidden, V = shape.vocab;
  if (!backward) {
    Add(b, chain, Compute(kMatMulLmHead, kMatMul, 2 * N * h * V / shape.tp, (h * V / shape.tp + N * h) * 2, Phase::kForward, mb, kNone, false));
    Add(b, chain, Compute(kCrossEntropy, kVector, 0, N * V / shape.tp * 4 * 2, Phase::kForward, mb, kNone, false));
  } else {
    Add(b, chain, Compute(kCrossEntropy, kVector, 0, N * V / shape.tp * 4 * 2, Phase::kBackward, mb, kNone, true));
    Add(b, chain, Compute(kMatMulLmHead, kMatMul, 4 * N * h * V / shape.tp, (h * V / shape.tp + N * h) * 4, Phase::kBackward, mb, kNone, true));
  }
}

// One activation (a micro-batch's hidden states, SP-split) to the next stage.
TimeNs EngineImpl::P2PSendNs(bool inter) const {
  const double act_bytes = double(shape.TokensSeqSplit()) * shape.hidden * 2;
  return TimeNs((inter ? hw.alpha_inter_ns() : hw.alpha_intra_ns()) + TransferNs(act_bytes, inter));
}

// Swap-ins for the backward task(s) of the next item are issued during this
// item, so the host-link copies overlap compute instead of delaying the
// backward.
void EngineImpl::PrefetchSwapIns(RankSim& r, const PipeItem& next, Block& b) const {
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
    const int first = shape.stage_first_layer[ms];
    for (int l = SliceEnd(ms) - 1; l >= first; --l) {
      uint64_t key = RankSim::ActKey(t->mb, l);
      auto it = r.acts.find(key);
      if (it == r.acts.end() || it->second.swapped <= 0 || r.prefetch_end.count(key)) continue;
      Op si = SwapIn(t->mb, l, it->second.swapped);
      si.prefetch_key = int64_t(key);
      si.dep = trigger;
      b.ops.push_back(si);
      b.mem.push_back({int32_t(b.ops.size() - 1), false, uint8_t(CounterKind::kMemActivations),
                       it->second.swapped});
      r.prefetch_end[key] = kBaseTime;  // pending: filled in when the copy runs
    }
  }
}

void EngineImpl::BuildPrologue(RankSim& r, Block& b) const {
  const auto& rc = cfg.routing();
  if (!rc.edpb() || r.step == 0 || r.step % std::max(1, rc.edpb_interval()) != 0) return;
  // EDPB migration: experts whose predicted-load placement changed move
  // (weights + optimizer states) between EP ranks.
  const int g = shape.expert_group;
  std::vector<double> moved(g, 0);
  auto held = [&](int ms, int l) { (void)ms; return shape.IsMoe(l); };
  std::vector<int> layers;
  auto add_slice = [&](int ms) {
    for (int l = shape.stage_first_layer[ms]; l < SliceEnd(ms); ++l)
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

void EngineImpl::BuildOptimizer(RankSim& r, Block& b) const {
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
  if (cfg.routing().redundant_experts() > 0 && shape.expert_group > 1) {
    // Redundant copies: each copy's gradient joins its original's (4 B per
    // parameter) and the updated weights come back (2 B), over the EP group;
    // the position holding the most copies sets the time.
    std::vector<int32_t> members = shape.EpGroup(r.rank);
    int worst = 0;
    for (int pos = 0; pos < shape.expert_group; ++pos) worst = std::max(worst, CopiesHeld(st, pos));
    const double each = 6 * shape.ExpertParamsEach();
    Op o = Collective(r, kExpertCopySync, CollectiveKind::kAllToAllV, CommClass::kEP,
                      shape.EpGroupId(r.rank), members, CopiesHeld(st, shape.EpPosition(r.rank)) * each,
                      Phase::kOptimizer, kNone, kNone, false);
    const bool inter = shape.SpansNodes(members);
    o.dur = TimeNs((members.size() - 1) * (inter ? hw.alpha_inter_ns() : hw.alpha_intra_ns()) +
                   TransferNs(worst * each, inter));
    Add(b, chain, o);
  }
  const int emb = MtpEmbeddingStage();
  if (emb >= 0 && (st == 0 || st == emb)) {
    // The MTP stage's copy of the word embedding and stage 0's stay equal:
    // their fp32 gradients are summed over the pair after the DP reduction
    // and before the clipping (Megatron's finalize_model_grads, embedding
    // group = first stage and MTP stage, per DP and TP position).
    const std::vector<int32_t> pair = {shape.RankOf(0, dpi, tpi), shape.RankOf(emb, dpi, tpi)};
    Add(b, chain, Collective(r, kAllReduceEmbeddingGrads, CollectiveKind::kAllReduce, CommClass::kDP,
                             GroupUid(8, 0, dpi * shape.tp + tpi), pair,
                             4.0 * shape.vocab * shape.hidden / shape.tp, Phase::kOptimizer, kNone, kNone, false));
  }
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

void EngineImpl::Finalize(RankSim& r, Block& b) const {
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

}  // namespace moetrace::tracegen
