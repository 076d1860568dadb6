// The discrete-event model of one training run. Pass 1 simulates every
// rank together (collectives need the arrival of all their members) keeping
// only what crosses ranks; pass 2 re-runs one rank at a time against those
// results and emits its events, so ranks stream to the sink one by one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "formats/trace.h"
#include "tracegen/proto/run_config.pb.h"

namespace moetrace::tracegen {

class EngineImpl;

class Engine {
 public:
  explicit Engine(const RunConfig& config);  // config must be validated
  ~Engine();
  // Pass 1: simulate all ranks (idempotent).
  void Simulate();
  // Pass 2: the events of rank `r` (after Simulate()).
  Rank EmitRank(int r);
  // Same, into *out (overwritten): reusing one Rank across calls keeps the
  // capacity of its event columns instead of reallocating them per rank.
  void EmitRank(int r, Rank* out);
  // Trace-wide metadata (no ground truth; see labels.h).
  Metadata BaseMetadata() const;
  int world_size() const;
  // Total events emitted so far by EmitRank.
  int64_t events_emitted() const;

 private:
  std::unique_ptr<EngineImpl> impl_;
};

}  // namespace moetrace::tracegen
