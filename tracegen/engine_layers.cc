// The ops of one transformer layer: LayerForward (attention, dense MLP or
// MoE with dispatch/combine all-to-alls, shared experts, the activation
// memory and the swap-out it leaves) and LayerBackward (the forward's ops
// reversed and transformed, with full or selective recompute and the
// shared-expert overlap of the combine gradient).
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "tracegen/engine_internal.h"
#include "tracegen/rng.h"

namespace moetrace::tracegen {

void EngineImpl::LayerForward(RankSim& r, Block& b, int32_t& chain, int layer, int mb, Phase ph) const {
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
  // Packed documents (RunConfig.data): causal attention within each
  // document, this DP rank's micro-batch's share of seq^2 (documents.h).
  if (docs_.Active()) fa_flops *= AttentionFactor(r, mb);
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
    if (cfg.routing().edpb())  // recorded only with EDPB; the experts' own, not the copies'
      info.placement.assign(g.placement.begin(), g.placement.begin() + E);
    info.send.assign(g.members, 0);
    info.recv.assign(g.members, 0);
    info.local_counts.assign(E, 0);
    // Physical experts: E, then the redundant copies (GroupRouting).
    const int P = static_cast<int>(g.placement.size());
    const int32_t* mine = &g.counts[size_t(pos) * P];
    const uint64_t tok_bytes = uint64_t(2 * shape.hidden);
    int local_physical = 0;
    for (int e = 0; e < P; ++e) {
      // The record counts every token of an expert, its copies' included.
      const int x = e < E ? e : g.copy_of[e - E];
      info.local_counts[x] += mine[e];
      if (e >= E) {
        info.copy_expert.push_back(x);
        info.copy_pos.push_back(g.placement[e]);
        info.copy_tokens.push_back(mine[e]);
      }
      info.send[g.placement[e]] += uint64_t(mine[e]) * tok_bytes;
      if (g.placement[e] != pos) continue;
      ++local_physical;
      // Only this rank's experts: what every member sends to it.
      for (int i = 0; i < g.members; ++i) {
        const int32_t c = g.counts[size_t(i) * P + e];
        info.recv[i] += uint64_t(c) * tok_bytes;
        recv_tokens += c;
      }
    }
    // What is used of `g` below is copied first: the last user erases it.
    const TimeNs a2a_dur = g.a2a_dur;
    // Adaptive Pipe's MLP split per bandwidth level: the hierarchical
    // all-to-all runs as its two steps, each its own collective over the
    // members that step connects (inter-node: one rank per node at this
    // rank's position; intra-node: this rank's node), so each step is a
    // segment boundary of the fused pair and waits only for its own members.
    const bool split = SplitsA2A() && !g.inter_by_pos.empty();
    const TimeNs inter_dur = split ? g.inter_by_pos[size_t(r.rank % shape.devices_per_node)] : 0;
    if (split && r.ep_inter_members.empty()) {
      std::vector<int> nodes;  // in order of first appearance, as ComputeA2ADuration numbers them
      for (int32_t m : members) {
        if (m % shape.devices_per_node == r.rank % shape.devices_per_node) r.ep_inter_members.push_back(m);
        if (shape.Node(m) == shape.Node(r.rank)) r.ep_intra_members.push_back(m);
        if (std::find(nodes.begin(), nodes.end(), shape.Node(m)) == nodes.end()) nodes.push_back(shape.Node(m));
      }
      r.ep_node_index = int(std::find(nodes.begin(), nodes.end(), shape.Node(r.rank)) - nodes.begin());
    }
    // Each step as its own collective lasts as long as its own members need
    // (their worst), not the whole EP group's worst.
    const TimeNs intra_dur = split ? g.intra_by_node[size_t(r.ep_node_index)] : 0;
    const int group_members = g.members;
    // The copies this rank holds are more weights for its grouped GEMMs to read.
    const double local_experts = g.copy_of.empty() ? shape.ExpertsPerRank() : local_physical;
    if (ph != Phase::kRecompute && !r.keep_routing && --g.uses_left == 0)
      r.routing->erase(Key(shape.EpGroupId(r.rank), r.step, mb, layer));
    b.a2a.push_back(std::move(info));
    int32_t a2a_idx = static_cast<int32_t>(b.a2a.size() - 1);
    uint64_t ep_gid = shape.EpGroupId(r.rank);
    if (t > 1 && !shape.extend && shape.sp)
      Add(b, chain, Collective(r, kAllGatherTp, CollectiveKind::kAllGather, CommClass::kTP, tp_gid,
                               tp_members, N * h * 2, ph, mb, layer, bw));
    int32_t router = Add(b, chain, Compute(kMoeGatingTopK, kMatMul, 2 * Nm * h * E, (h * E + Nm * h) * 2, ph, mb, layer, bw));
    if (ph == Phase::kForward) b.ops[router].routing = a2a_idx;
    AddRouterSmallOps(b, chain, mb, layer, ph);
    // With sync_before_a2a the dispatcher reads the token counts on the host
    // before permuting (MindSpeed's alltoall preprocess): two blocking reads.
    // First `input_splits` (tokens this rank sends to each EP rank) from the
    // local counts: the host waits for the router's last op + d2h, converts
    // one count per EP rank, and only then issues the counts' all-gather.
    // Then `output_splits` from the gathered counts: the host waits for the
    // gather (so for the EP rank that arrives last) + d2h and turns the
    // EP x experts matrix into split lists in Python, one element at a
    // time, before it can issue the permutation and the all-to-all. The
    // device runs out of work at each read.
    // A stream sync waits for every op issued before it: the router's last.
    int32_t counts_ready = chain;
    const bool sync = cfg.host().sync_before_a2a() && ph != Phase::kBackward;
    if (sync && group_members > 1) {
      Op gather = Collective(r, kAllGatherTokenCounts, CollectiveKind::kAllGather, CommClass::kEP, ep_gid, members,
                             double(E) * 4 * group_members, ph, mb, layer, bw);
      gather.host_sync = true;
      gather.sync_on = chain;
      gather.host_work = TimeNs(std::llround(hw.token_count_host_ns() * group_members * HostFactor()));
      counts_ready = Add(b, chain, gather);
    }
    // The permutation's index ops follow the read: with the sync the host
    // issues them (and the permutation) only after the split lists, so the
    // device runs out of work and then waits for each launch in turn.
    const size_t index_first = b.ops.size();
    // host.count_copy_syncs: the other blocking copies of the counts on the
    // host, two before the permutation and one before each grouped GEMM.
    const bool copy_syncs = sync && cfg.host().count_copy_syncs();
    if (copy_syncs) AddCountCopySyncs(b, chain, mb, layer, ph, group_members);
    AddPermuteIndexOps(b, chain, mb, layer, ph, !copy_syncs);
    Op perm = Compute(kMoeInitRouting, kVector, 0, Nm * shape.top_k * h * 4, ph, mb, layer, bw);
    int32_t permute = Add(b, chain, perm);
    if (sync) {
      // The host blocks before the first op issued after the read (the
      // permutation itself without the unfused index ops).
      Op& first_after = b.ops[index_first];
      first_after.host_sync = true;
      first_after.sync_on = counts_ready;
      first_after.host_work = TimeNs(std::llround(hw.token_count_host_ns() * E * group_members * HostFactor()));
    }
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
    // Bytes of a step: what this rank sends to (dispatch) or receives from
    // (combine) members on other nodes, or on its own node.
    auto node_bytes = [&](const std::vector<uint64_t>& v, bool off_node) {
      uint64_t sum = 0;
      for (int i = 0; i < group_members; ++i)
        if ((shape.Node(members[i]) != shape.Node(r.rank)) == off_node) sum += v[i];
      return sum;
    };
    auto step = [&](OpName n, bool inter_step, TimeNs dur, uint64_t bytes, bool record) {
      const std::vector<int32_t>& m = inter_step ? r.ep_inter_members : r.ep_intra_members;
      // Group uid: the EP group's, of kind 6 (inter) or 7 (intra), with the
      // node position or the node in bits 8..15 (the EP group's own low
      // bits hold a TP index < 256; its 4-node span has distinct nodes mod 256).
      const uint64_t sub = inter_step ? uint64_t(r.rank % shape.devices_per_node) : uint64_t(shape.Node(r.rank) % 256);
      const uint64_t gid = (ep_gid & ((uint64_t(1) << 56) - 1)) | (uint64_t(inter_step ? 6 : 7) << 56) | (sub << 8);
      Op o = Collective(r, n, CollectiveKind::kAllToAllV, CommClass::kEP, gid, m, 0, ph, mb, layer, bw);
      o.dur = dur;
      o.bytes = bytes;
      // The routing record's split sizes (over the whole EP group) go with
      // the step that completes the exchange.
      if (record) o.a2a = a2a_idx;
      return o;
    };
    int32_t dispatch;
    if (split) {
      const auto& send = b.a2a[a2a_idx].send;
      Op d1 = step(kAllToAllVDispatchInter, true, inter_dur, node_bytes(send, true), false);
      d1.dep = permute;
      Add(b, chain, d1);
      dispatch = Add(b, chain, step(kAllToAllVDispatchIntra, false, intra_dur, node_bytes(send, false), true));
    } else {
      Op disp = Collective(r, kAllToAllVDispatch, CollectiveKind::kAllToAllV, CommClass::kEP, ep_gid,
                           members, 0, ph, mb, layer, bw);
      disp.dur = a2a_dur;
      disp.bytes = 0;
      for (auto v : b.a2a[a2a_idx].send) disp.bytes += v;
      disp.a2a = a2a_idx;
      disp.dep = permute;
      dispatch = Add(b, chain, disp);
    }
    if (overlap) shared_ops(permute);
    const int32_t shared_end = chain;  // the shared expert's last op (else the dispatch)
    double tpe = recv_tokens / std::max(1.0, local_experts);
    // The group list, after the dispatch (the chain may be on the shared
    // expert meanwhile).
    int32_t group_list = dispatch;
    // With the counts on the host (copy_syncs) the group list is a cumsum on
    // the CPU, not a device op.
    if (!copy_syncs) AddGroupList(b, group_list, mb, layer, ph);
    chain = group_list;
    Op gg1 = Compute(kGroupedMatmulGateUp, kGrouped, 2 * recv_tokens * h * 2 * Fe / shard,
                     (local_experts * 2 * h * Fe / shard + recv_tokens * h) * 2, ph, mb, layer, bw, tpe);
    gg1.dep = group_list;
    // MindSpeed's grouped GEMM (grouped_gemm_util.py, Ops.gmm) copies each
    // call's group list to the device, cumsum(host counts).to('npu'): a
    // blocking copy, so a stream sync before each of the two GEMMs. The
    // first waits for what the compute stream holds: the dispatch (the
    // synchronous all-to-all made the stream wait for it) and the shared
    // expert issued beside it (comm.shared_expert_overlap; on the 718B
    // no-knobs trace it ends ~2.2 ms before the dispatch, bench/README.md
    // "Host-bound, session 13"); the second for the SwiGLU just issued. The
    // backward reuses the device copy.
    if (copy_syncs) {
      gg1.host_sync = true;
      gg1.sync_on = dispatch;
      if (overlap && shared_end != dispatch) gg1.dep2 = shared_end;  // its stream holds it
    }
    Add(b, chain, gg1);
    Op sw = Compute(kSwiGluExperts, kVector, 0, recv_tokens * Fe / shard * 6, ph, mb, layer, bw);
    const int32_t swiglu = Add(b, chain, sw);
    Op gg2 = Compute(kGroupedMatmulDown, kGrouped, 2 * recv_tokens * Fe * h / shard,
                     (local_experts * Fe * h / shard + recv_tokens * h) * 2, ph, mb, layer, bw, tpe);
    if (copy_syncs) {
      gg2.host_sync = true;
      gg2.sync_on = swiglu;
    }
    Add(b, chain, gg2);
    if (split) {
      const auto& recv = b.a2a[a2a_idx].recv;
      Add(b, chain, step(kAllToAllVCombineIntra, false, intra_dur, node_bytes(recv, false), false));
      Add(b, chain, step(kAllToAllVCombineInter, true, inter_dur, node_bytes(recv, true), true));
    } else {
      Op comb = Collective(r, kAllToAllVCombine, CollectiveKind::kAllToAllV, CommClass::kEP, ep_gid,
                           members, 0, ph, mb, layer, bw);
      comb.dur = a2a_dur;
      comb.a2a = a2a_idx;
      for (auto v : b.a2a[a2a_idx].recv) comb.bytes += v;
      Add(b, chain, comb);
    }
    Add(b, chain, Compute(kMoeFinalizeRouting, kVector, 0, Nm * shape.top_k * h * 4, ph, mb, layer, bw));
    AddSharedExpertAdd(b, chain, mb, layer, ph);
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
  rec.tokens = false;
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
      // The copy starts when the last swapped tensor is saved, as the
      // swap hooks launch each tensor's device-to-host copy when autograd
      // saves it (MindSpeed swap_attention/prefetch.py, pack_hook): the
      // dispatched tokens at the expert gate/up GEMM, the attention
      // module's tensors at the output projection. From the layer's last
      // op, the last layer's copy ran past the end of a forward item and
      // the next backward's swap-ins queued behind it. Full recompute keeps
      // the layer input, saved as the layer starts: its first op.
      rec.tokens = act.permuted > 0 && bytes > act.attention;
      so.dep = chain;
      if (cfg.memory().recompute() != "full") {
        const uint16_t saver = SwapGemm(rec);
        for (size_t i = first; i < b.ops.size(); ++i)
          if (b.ops[i].name == saver) so.dep = int32_t(i);
      } else {
        so.dep = first;
      }
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

void EngineImpl::LayerBackward(RankSim& r, Block& b, int32_t& chain, int layer, int mb) const {
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
    // The re-run forward reads the swapped (checkpointed) input first.
    if (swap_in >= 0) b.ops[recompute_first].dep2 = swap_in;
    if (prefetched >= 0) b.ops[recompute_first].wait_prefetch = prefetched;
    swap_in = prefetched = -1;
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
  // Adaptive pipe (as DualPipe's overlapped chunks do): a backward matmul
  // runs as its input gradient, on the chain, and its weight gradient, which
  // nothing in the chunk waits for and which is issued after the chain's
  // next expert all-to-all, so that it computes while that all-to-all flies.
  const bool wsplit = SplitsA2A();
  bool wgrad_pending = false;  // a weight gradient of this layer not yet in the block
  auto split_w = [&](int32_t dep) {
    Op& o = b.ops.back();
    const bool matmul = o.name == kMatMulQProj || o.name == kMatMulKvProj || o.name == kMatMulQkvProj ||
                        o.name == kMatMulOProj || o.name == kMatMulGateUp || o.name == kMatMulDown ||
                        o.name == kMatMulSharedGateUp || o.name == kMatMulSharedDown ||
                        o.name == kGroupedMatmulGateUp || o.name == kGroupedMatmulDown;
    if (!wsplit || !matmul || o.phase != Phase::kBackward) return;
    Op w = o;
    const TimeNs ovh = std::min<TimeNs>(o.dur, TimeNs(hw.kernel_overhead_ns()));
    const TimeNs body = o.dur - ovh;
    o.dur = ovh + body / 2;  // input gradient: half of the backward's FLOPs
    w.dur = ovh + (body - body / 2);
    w.flops = o.flops - o.flops / 2;
    o.flops /= 2;
    w.bytes = o.bytes - o.bytes / 2;
    o.bytes /= 2;
    w.dep = dep;
    w.dep2 = -1;
    w.wait_prefetch = -1;
    r.pending_wgrads.push_back(w);
    wgrad_pending = true;
  };
  bool selective_done = false;
  // The op that waits for the swap-in is the first one reading a swapped
  // tensor, not the layer's first backward op: the dispatched tokens are
  // read by the expert gate/up GEMM's weight gradient (x^T dy), the
  // attention module's tensors first by the output projection's. The ops
  // before it (the combine's gradient all-to-all, the down projection, the
  // SwiGLU) read only what stayed on the device, so they run while the
  // copy ends. Waiting at the first op, every backward item whose swap-in
  // queued behind the previous forward's last swap-out stalled for both
  // copies (21 ms per item at MBS 1 on the 718B preset: +14% step).
  uint16_t reader = SwapGemm(rec);
  if (std::none_of(fwd.begin(), fwd.end(), [&](const Op& o) { return o.name == reader; }))
    reader = fwd.empty() ? uint16_t(kOpNameCount) : fwd.back().name;  // no such op: the first one waits
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
    if (fwd[i].name == reader) {
      if (swap_in >= 0) o.dep2 = swap_in;
      if (prefetched >= 0) o.wait_prefetch = prefetched;
      swap_in = prefetched = -1;  // one reader: the first in backward order
    }
    int32_t pre = chain;
    split_w(pre);
    int32_t idx = Chain(b, chain);
    // Pending weight gradients are issued right after the next expert
    // all-to-all (issued just before it, measured on the 718B preset: 6.8%
    // instead of 4.7% of EP time unmasked with balanced routing).
    if (fwd[i].cat == Category::kCollective && fwd[i].cclass == CommClass::kEP && !r.zb_wgrads) {
      FlushWgrads(r, b);
      wgrad_pending = false;
    }
    if (overlap && fwd[i].ckind == CollectiveKind::kAllToAllV &&
        (fwd[i].name == kAllToAllVCombine || fwd[i].name == kAllToAllVCombineInter)) {
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
  // The layer's activations (kept and recomputed) are read by its weight
  // gradients too (x^T dy). Adaptive pipe issues some of them later (after
  // the next layer's expert all-to-all, after a fused pair, after a
  // cooldown chunk's p2p send): the release waits for the layer's last one,
  // as MindSpeed's WeightGradStore and DualPipe's weight chunk hold their
  // inputs. Those already in the block precede `last` on the compute stream.
  std::vector<MemAction>* rel = &b.mem;
  if (wgrad_pending) {
    rel = &r.pending_wgrad_mem;
    last = int32_t(r.pending_wgrads.size()) - 1;
  }
  rel->push_back({last, true, uint8_t(CounterKind::kMemActivations), -rec.kept});
  if (recompute_first >= 0 && rec.extra > 0) {
    b.mem.push_back({recompute_first, false, uint8_t(CounterKind::kMemRecompute), rec.extra});
    rel->push_back({last, true, uint8_t(CounterKind::kMemRecompute), -rec.extra});
  }
  (void)first_bwd;
  r.acts.erase(RankSim::ActKey(mb, layer));
  // prefetch_end keeps the prefetch's end until the waiting op has run
  // (Advance erases it): erased here, at build time, the op found no entry
  // and started without waiting for its swapped-in tensors.
}

}  // namespace moetrace::tracegen
