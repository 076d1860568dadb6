// Cost probes for the layout search (analyzer/search): the engine's own ops
// (the same constructors, cost model, fused-item interleave and issue loop)
// for one layer, the head and the optimizer, each run on one rank alone
// with every peer in step. The search composes them over the pipeline
// schedule instead of simulating every rank (Engine::Simulate).
#pragma once

#include <cstdint>
#include <vector>

#include "tracegen/proto/run_config.pb.h"

namespace moetrace::tracegen {

struct TaskCost {
  int64_t ns = 0;             // device time, the host ahead (PP send excluded)
  int64_t ep_ns = 0;          // EP all-to-all time
  int64_t ep_exposed_ns = 0;  // of it, not under compute
  int64_t ops = 0;            // device ops (each costs the host an issue)
  // A fused pair only: when its backward chain ends after its forward chain
  // (negative: before). The chain that ends first sends its activation or
  // gradient on that much earlier than the item ends.
  int64_t bwd_after_fwd_ns = 0;
};

struct LayerCost {
  TaskCost fwd, bwd;
  // This layer's forward of one micro-batch fused with its backward of
  // another, as the adaptive and DualPipe schedules issue F&B pairs.
  TaskCost fused;
  TaskCost fused_next;     // what each further layer pair adds to a fused item
  int64_t swap_ns = 0;     // the host-link copy of the swapped part, each way
  // From the layer's forward start to its swap-out's start (the GEMM that
  // saves the last swapped tensor has run), and from its backward start to
  // the first op that reads a swapped tensor (which waits for the swap-in).
  int64_t swap_out_at_ns = 0, swap_in_slack_ns = 0;
  double act_kept = 0;     // bytes held per micro-batch from forward to backward
  double act_swapped = 0;  // of them, on the host meanwhile
  double act_extra = 0;    // rebuilt by recompute during the backward
};

struct CostProbe {
  bool has_dense = false, has_moe = false;
  LayerCost dense, moe;
  TaskCost embed_fwd, embed_bwd, head_fwd, head_bwd;
  int64_t p2p_send_ns = 0;  // one activation to the next pipeline stage
  // Per pipeline stage: the optimizer up to and including the world
  // grad-norm all-reduce, and after it (AdamW, parameter all-gathers).
  std::vector<int64_t> opt_before_ns, opt_after_ns;
  std::vector<double> static_bytes;  // weights + gradients + optimizer states
  int64_t host_op_ns = 0;            // Python-thread time per issued op
  bool host_sync = false;            // host.sync_before_a2a: the host waits for the device
};

// Expected tokens per expert for the probes' MoE layer: `popularity` (per
// expert, sums to 1) of the layer to stand for all; the EP rank that
// receives the most under contiguous placement is the one probed (the
// all-to-alls wait for it). `config` must be validated. With `layers` (an
// earlier probe of a config that differs only in PP stages' contents: VPP,
// schedule kind), its per-layer, head and host figures are reused and only
// the per-stage ones (optimizer, static memory) are probed.
CostProbe ProbeCosts(const RunConfig& config, const std::vector<double>& popularity,
                     const CostProbe* layers = nullptr);

// One MoE layer's forward and backward per expected routing: each entry of
// `popularities` is probed as ProbeCosts probes its `popularity` (the EP
// position receiving the most under contiguous placement waits out the
// all-to-alls), so a caller that permutes the experts into the order of
// its own placement probes that placement. For EDPB's stage split
// (engine_edpb.cc): each layer weighed by its own predicted routing.
std::vector<LayerCost> ProbeMoeLayers(const RunConfig& config,
                                      const std::vector<std::vector<double>>& popularities);

}  // namespace moetrace::tracegen
