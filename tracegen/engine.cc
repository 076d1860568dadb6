// The tracegen engine's driver and public API (engine.h): building the
// engine from a RunConfig, the discrete-event loop that issues each rank's
// ops block by block (NextBlock, Advance), pass 1 over all ranks together
// (Simulate), pass 2 one rank at a time (EmitRank, on any number of
// threads through RankEmitter), and the trace metadata.
// How ops are built and emitted lives in the other engine_*.cc files (see
// engine_internal.h).
#include "tracegen/engine.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/core.h>

#include "tracegen/config.h"
#include "tracegen/engine_internal.h"

namespace moetrace::tracegen {

namespace {

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
      "HcomAllGather_token_counts", "HcomAllToAllV_expert_copies", "MatMul_mtp_proj",
      // The two steps of a hierarchical all-to-all run as separate
      // collectives (adaptive pipe): inter-node over RoCE, intra-node over HCCS.
      "HcomAllToAllV_dispatch_inter", "HcomAllToAllV_dispatch_intra", "HcomAllToAllV_combine_intra",
      "HcomAllToAllV_combine_inter", "Cast_router_logits",
      "ReduceSum_topk_probs", "RealDiv_topk_probs", "ReduceMean_aux_probs",
      "Histc_tokens_per_expert", "Mul_aux_loss", "ReduceSum_aux_loss", "Cumsum_group_list",
      "Add_shared_expert", "ArgSort_topk_indices",
      "FloorDiv_token_indices", "RepeatInterleave_expert_ids",
      "ReduceSum_tokens_per_local_expert", "ReduceSum_repeats", "HcomAllReduce_embedding_grads"};
  static_assert(sizeof(names) / sizeof(names[0]) == kOpNameCount);
  return names[n];
}

}  // namespace

EngineImpl::EngineImpl(const RunConfig& c, bool probe_only) : cfg(c), shape(c), hw(c.hardware()) {
  ScheduleShape sh{shape.schedule, shape.pp, shape.vpp, shape.micro_batches};
  if (!probe_only)
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
  gap_fwd_ = TimeNs(std::llround(cfg.host().python_op_ns() * f));
  gap_bwd_ = TimeNs(std::llround(cfg.host().autograd_op_ns() * f));
  docs_.distribution = c.data().doc_distribution();
  docs_.mean = c.data().doc_mean();
  docs_.sigma = c.data().doc_sigma();
  if (docs_.distribution == "mixture") {
    std::string error;  // validated with the config (config.cc)
    docs_.sources = ParseDocMix(c.data().doc_mix(), &error);
  }
  docs_.seq = shape.seq;
  docs_.mbs = shape.mbs;
  docs_.dp = shape.dp;
  docs_.micro_batches = shape.micro_batches;
  docs_.seed = c.seed();
  docs_.rearrange = c.routing().edpb();
  mtp_ = c.model().mtp_modelled() ? c.model().mtp_layers() : 0;
  if (probe_only) return;
  BalanceStages();
  for (int n = 0; n < kOpNameCount; ++n)
    for (int grad = 0; grad < 2; ++grad) {
      std::string dev = std::string(DeviceName(n)) + (grad ? "Grad" : "");
      op_names_[1][n][grad] = "aclnn" + dev;
      op_names_[2][n][grad] = "enqueue " + dev;
      op_names_[0][n][grad] = std::move(dev);
    }
}

// ---------------------------------------------------------------------------
// Running

bool EngineImpl::NextBlock(RankSim& r) const {
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

bool EngineImpl::Advance(RankSim& r, bool pass2) const {
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
        // A stream sync waits for every op queued before it: sync_on and,
        // when set, the op's second dependency (engine_layers.cc, gg1).
        TimeNs synced = r.end[op.sync_on];
        if (op.dep2 >= 0) synced = std::max(synced, r.end[op.dep2]);
        r.t_py = std::max(r.t_py, synced + TimeNs(hw.d2h_sync_ns()));
        s1 = r.t_py;
        r.t_py += op.host_work;
      }
      TimeNs py0 = r.t_py + IssueGap(op.phase), py1 = py0 + py_cost, dq0 = 0, dq1 = 0;
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
    if (r.solo && (op.cat == Category::kCollective || op.stream == kSRecv)) {
      // Cost probe: every peer in step (collectives) or already sent.
      finish = op.cat == Category::kCollective ? ready + op.dur : ready;
    } else if (op.cat == Category::kCollective) {
      CrossEntry e;
      if (pass2) {
        const CrossEntry* p = FindCross(r.stage, op);  // read only: pass 2 runs on many threads
        if (p == nullptr) return progressed;
        e = *p;
      } else {
        const bool shared = CrossesStages(op);
        std::unique_lock<std::mutex> lock(r.shared->mu, std::defer_lock);
        if (shared) lock.lock();
        CrossEntry& w = shared ? (*r.shared->map)[op.xkey] : r.cross->At(op);
        if (r.state[i] == 1) {
          w.expected = op.group_size;
          ++w.arrived;
          w.max_arrival = std::max(w.max_arrival, ready);
          w.dur = op.dur;  // the same for every member
          r.state[i] = 2;
          if (shared && w.arrived == w.expected) r.shared->Changed();
        }
        e = w;
      }
      if (e.arrived < e.expected) return progressed;
      finish = std::max(ready, e.max_arrival + e.dur);
    } else if (op.stream == kSSend) {
      finish = ready + op.dur;
      if (!pass2 && !r.solo) {
        std::lock_guard<std::mutex> lock(r.shared->mu);
        (*r.shared->map)[op.xkey].done = finish;
        r.shared->Changed();
      }
    } else if (op.stream == kSRecv) {
      TimeNs done = kNever;
      if (pass2) {
        if (const CrossEntry* p = FindCross(r.stage, op)) done = p->done;
      } else {
        std::lock_guard<std::mutex> lock(r.shared->mu);
        auto it = r.shared->map->find(op.xkey);
        if (it != r.shared->map->end()) done = it->second.done;
      }
      if (done == kNever) return progressed;
      finish = std::max(ready, done);
    } else {
      finish = ready + op.dur;
    }
    r.end[i] = finish;
    if (op.prefetch_key >= 0) r.prefetch_end[uint64_t(op.prefetch_key)] = finish;
    // The wait is read above, possibly on several visits (a collective that
    // blocks is revisited): the entry goes only once the op has run.
    if (op.wait_prefetch >= 0) r.prefetch_end.erase(uint64_t(op.wait_prefetch));
    r.ready[op.stream] = finish;
    r.last_dev_end = std::max(r.last_dev_end, finish);
    if (r.out) Emit(r, op, i, ready, finish);
    ++r.op;
    progressed = true;
  }
  return progressed;
}

void EngineImpl::EmitRank(int rank, Rank* out_rank, EmitScratch& s) const {
  if (!simulated) throw std::logic_error("tracegen: EmitRank before Simulate");
  Rank& out = *out_rank;
  RankSim sim;
  sim.rank = rank;
  sim.stage = shape.Stage(rank);
  sim.out = &out;
  // Pass 2 keeps the routing of one EP group while its members are emitted
  // (ranks of a group are contiguous), instead of re-sampling every
  // member's tokens for each emitted rank; emitters in the same group share it.
  const uint64_t group = shape.EpGroupId(rank);
  if (!s.has_group || group != s.group) {
    s.routing.reset();  // the last emitter to leave a group frees its routing
    std::lock_guard<std::mutex> lock(groups_mu_);
    std::weak_ptr<GroupRoutingStore>& w = groups_[group];
    s.routing = w.lock();
    if (!s.routing) w = s.routing = std::make_shared<GroupRoutingStore>();
  }
  s.has_group = true;
  s.group = group;
  sim.routing = &s.routing->cache;
  sim.routing_mu = &s.routing->mu;
  sim.keep_routing = true;
  InitRankOutput(sim, s);
  Advance(sim, true);
  if (sim.phase != 4) throw std::logic_error("tracegen: pass 2 blocked (missing cross-rank result)");
  FinishRankOutput(sim);
  s.events += sim.events;
  s.track_events.resize(out.tracks.size());
  s.track_comms.resize(out.tracks.size());
  for (size_t t = 0; t < out.tracks.size(); ++t) {
    s.track_events[t] = out.tracks[t].events.size();
    s.track_comms[t] = out.tracks[t].comms.size();
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
  // Hardware FLOPs (HFU): the model's three passes plus the forward work
  // recompute re-runs; carried as an attribute (exact, %.17g) so the native
  // format's Metadata message needs no new field.
  const double hardware = m.model_flops_per_step +
                          shape.RecomputeFlopsPerMicroBatch(cfg.memory().recompute()) * sequences / shape.mbs;
  m.tokens_per_step = int64_t(sequences) * shape.seq;
  m.config_json = ConfigToJson(cfg);
  m.attributes.emplace_back("tracegen.expert_group", std::to_string(shape.expert_group));
  m.attributes.emplace_back("tracegen.micro_batches", std::to_string(shape.micro_batches));
  m.attributes.emplace_back("tracegen.schedule", shape.schedule);
  if (balanced_split_) {
    std::string split;
    for (int n : shape.stage_layers) split += (split.empty() ? "" : ",") + std::to_string(n);
    m.attributes.emplace_back("tracegen.layers_per_stage", split);
  }
  // Only where the MTP layers left the last stage, so that other runs' files
  // stay as they were.
  if (MtpApart()) m.attributes.emplace_back("tracegen.mtp_stage", std::to_string(shape.mtp_stage));
  m.attributes.emplace_back("tracegen.hardware_flops_per_step", fmt::format("{:.17g}", hardware));
  return m;
}

Engine::Engine(const RunConfig& config) : impl_(std::make_unique<EngineImpl>(config)) {}
Engine::~Engine() = default;
void Engine::Simulate(int threads) { impl_->Simulate(threads); }
std::string Engine::SavePass1() const { return impl_->SavePass1(); }
void Engine::LoadPass1(std::string_view bytes) { impl_->LoadPass1(bytes); }
Rank Engine::EmitRank(int r) {
  Rank out;
  EmitRank(r, &out);
  return out;
}
void Engine::EmitRank(int r, Rank* out) {
  Simulate();
  if (!emitter_) emitter_ = std::make_unique<RankEmitter>(*this);
  emitter_->Emit(r, out);
}
Metadata Engine::BaseMetadata() const { return impl_->BaseMetadata(); }
int Engine::world_size() const { return impl_->shape.world; }
std::vector<int64_t> Engine::RankEndTimes() const {
  std::vector<int64_t> out;
  out.reserve(impl_->rank_end.size());
  for (TimeNs t : impl_->rank_end) out.push_back(t - kBaseTime);
  return out;
}
int64_t Engine::events_emitted() const { return emitter_ ? emitter_->events() : 0; }

RankEmitter::RankEmitter(const Engine& engine)
    : engine_(*engine.impl_), scratch_(std::make_unique<EmitScratch>()) {}
RankEmitter::~RankEmitter() = default;
void RankEmitter::Emit(int r, Rank* out) { engine_.EmitRank(r, out, *scratch_); }
int64_t RankEmitter::events() const { return scratch_->events; }

}  // namespace moetrace::tracegen
