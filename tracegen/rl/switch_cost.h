// The cost of switching cards between the inference (rollout) and the
// training layout, and of sending new weights to a separate rollout pool:
// weights over the super-node's bus (alpha-beta: (n-1) alpha + S / B, B =
// bus bandwidth * comm_efficiency), optimizer states over the host link.
#pragma once

#include <cstdint>

#include "formats/trace.h"
#include "tracegen/proto/run_config.pb.h"

namespace moetrace::tracegen::rl {

struct Transfer {
  TimeNs comm_dur = 0;
  uint64_t comm_bytes = 0;  // per card
  TimeNs copy_dur = 0;
  uint64_t copy_bytes = 0;  // per card
  // The weights move over the bus while the optimizer states move over the
  // host link, so the two overlap: the phase lasts the longer.
  TimeNs dur() const { return comm_dur > copy_dur ? comm_dur : copy_dur; }
};

struct SwitchCosts {
  double train_weight_bytes = 0;  // per training card (BF16, TP x PP x expert-group shard)
  double infer_weight_bytes = 0;  // per rollout card
  double optimizer_bytes = 0;     // per training card: FP32 master + Adam m, v (12 B/param)
  Transfer to_train, to_infer, sync;
};

// Colocated: reshard_to_train receives the card's training shard (all of it
// unless the two layouts shard identically) and reloads the optimizer
// states from the host; reshard_to_infer offloads them and receives the
// inference shard. Separate: sync_weights sends each rollout card its
// inference shard from the training pool.
SwitchCosts ComputeSwitchCosts(const RunConfig& config);

}  // namespace moetrace::tracegen::rl
