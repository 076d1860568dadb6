// Pass-2 output of one rank: its tracks and constant memory
// (InitRankOutput), host launch/sync events (EmitHost), device ops with
// their communication and routing records (Emit), and the memory counter
// samples built from the allocation deltas (FinishRankOutput).
#include <algorithm>
#include <tuple>

#include <fmt/core.h>

#include "tracegen/engine_internal.h"
#include "tracegen/rank_tracks.h"

namespace moetrace::tracegen {

void EngineImpl::InitRankOutput(RankSim& r, const EmitScratch& s) const {
  Rank& k = *r.out;
  std::vector<Track> recycled = std::move(k.tracks);
  k = Rank();
  k.rank = r.rank;
  k.device_id = r.rank % shape.devices_per_node;
  k.pid = 100000 + r.rank;
  k.host = fmt::format("node{}", shape.Node(r.rank));
  k.tracks.reserve(2 + kStreams + 6);
  AddRankTracks(k);
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
  for (size_t t = 0; t < k.tracks.size() && t < s.track_events.size(); ++t) {
    k.tracks[t].events.Reserve(s.track_events[t]);
    k.tracks[t].comms.reserve(s.track_comms[t]);
  }
  r.op_names = op_names_;
  // Operator names are interned on first use (most ranks use a fraction).
  for (auto* table : {&r.dev_name, &r.launch_name, &r.enqueue_name})
    for (auto& row : *table) row[0] = row[1] = RankSim::kUninterned;
  // Constant memory: bf16 weights, fp32 gradients, Adam states (12 B/param,
  // sharded over DP with the distributed optimizer).
  double weights = 0, grads = 0, opt = 0;
  StaticMemory(r.stage, &weights, &grads, &opt, shape.EpPosition(r.rank));
  r.mem_events.emplace_back(kBaseTime, 0, uint8_t(CounterKind::kMemWeights), int64_t(weights));
  r.mem_events.emplace_back(kBaseTime, 1, uint8_t(CounterKind::kMemGradients), int64_t(grads));
  r.mem_events.emplace_back(kBaseTime, 2, uint8_t(CounterKind::kMemOptimizer), int64_t(opt));
}

void EngineImpl::StaticMemory(int stage, double* weights, double* grads, double* opt, int ep_pos) const {
  double dense = 0, expert = 0;
  ComputeParams(stage, &dense, &expert);
  const int edp = std::max(1, shape.dp / shape.ep);
  *opt = cfg.memory().distributed_optimizer() ? 12 * (dense / shape.dp + expert / edp)
                                              : 12 * (dense + expert);
  // A redundant copy holds the expert's weights and its own gradient (summed
  // into the original's before the update); the optimizer states stay with
  // the original, which refreshes the copy after the step.
  const double copies = CopiesHeld(stage, ep_pos) * shape.ExpertParamsEach();
  *weights = 2 * (dense + expert + copies);
  *grads = 4 * (dense + expert + copies);
}

void EngineImpl::EmitHost(RankSim& r, const Op& op, TimeNs py0, TimeNs py1, TimeNs dq0,
                          TimeNs dq1, TimeNs s0, TimeNs s1) const {
  Track& py = r.out->tracks[0];
  Event e;
  e.step = r.step;
  e.micro_batch = op.mb;
  e.layer = op.layer;
  e.phase = op.phase;
  if (s1 > s0 || op.host_sync) {
    e.ts = s0;
    e.dur = s1 - s0;
    // Named by what the host waits for: a token-count read, a blocking
    // host-to-device copy (host.count_copy_syncs: the expert ids, a grouped
    // GEMM's group list) or repeat_interleave's output size.
    if (op.name == kSumRepeats || op.name == kGroupedMatmulGateUp || op.name == kGroupedMatmulDown)
      e.name = r.Fixed(r.sync_h2d_name, "aclrtSynchronizeStream (H2D copy of counts)");
    else if (op.name == kRepeatInterleaveExpertIds)
      e.name = r.Fixed(r.sync_item_name, "aclrtSynchronizeStream (repeat_interleave size)");
    else
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

void EngineImpl::Emit(RankSim& r, const Op& op, size_t i, TimeNs start, TimeNs finish) const {
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
      static const char* prefix[] = {"?", "ep", "tp", "dp", "edp", "world", "ep_inter", "ep_intra", "embedding"};
      int kind = int(op.group >> 56);
      c.group = r.GroupName(op.group, [&] {
        return fmt::format("{}_{:x}", prefix[kind < 9 ? kind : 0], op.group & ((uint64_t(1) << 56) - 1));
      });
      if (op.a2a >= 0) {
        const A2AInfo& a = r.block.a2a[op.a2a];
        // A step of a split all-to-all (kind 6/7) names its own members;
        // its split sizes still cover the whole EP group.
        c.group_ranks = tr.AddRanks(kind == 6   ? r.ep_inter_members
                                    : kind == 7 ? r.ep_intra_members
                                                : r.ep_members);
        bool combine = op.name == kAllToAllVCombine || op.name == kAllToAllVCombineInter;
        bool reverse = combine != op.grad;  // combine, or dispatch's gradient
        c.send_splits = tr.AddSplits(reverse ? a.recv : a.send);
        c.recv_splits = tr.AddSplits(reverse ? a.send : a.recv);
      } else if (kind >= 1 && kind <= 4) {
        // Member lists are built once per rank (see RankSim::Members).
        c.group_ranks = tr.AddRanks(r.Members(kind, shape));
      } else if (kind == 6 || kind == 7) {
        c.group_ranks = tr.AddRanks(kind == 6 ? r.ep_inter_members : r.ep_intra_members);
      } else if (kind == 8) {
        const int dpi = shape.DpIndex(r.rank), tpi = shape.TpIndex(r.rank);
        const int32_t pair[2] = {shape.RankOf(0, dpi, tpi), shape.RankOf(MtpEmbeddingStage(), dpi, tpi)};
        c.group_ranks = tr.AddRanks(pair);
      }
    }
    e.comm = static_cast<int32_t>(tr.comms.size());
    tr.comms.push_back(std::move(c));
  }
  tr.events.Append(e);
  ++r.events;
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
    rr.copy_expert = a.copy_expert;
    rr.copy_ep_rank = a.copy_pos;
    rr.copy_tokens = a.copy_tokens;
    r.out->routing.push_back(std::move(rr));
  }
  while (r.mem_ptr < r.block.mem.size() && r.block.mem[r.mem_ptr].op == int32_t(i)) {
    const MemAction& m = r.block.mem[r.mem_ptr++];
    r.mem_events.emplace_back(m.at_end ? finish : start, int(r.mem_events.size()), m.cat, m.delta);
  }
}

void EngineImpl::FinishRankOutput(RankSim& r) const {
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

}  // namespace moetrace::tracegen
