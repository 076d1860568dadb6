// The discrete-event model of one training run. Pass 1 simulates every
// rank together (collectives need the arrival of all their members) keeping
// only what crosses ranks; pass 2 re-runs one rank at a time against those
// results and emits its events, so ranks stream to the sink one by one;
// pass 2 runs on any number of threads, one RankEmitter each.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "formats/trace.h"
#include "tracegen/proto/run_config.pb.h"

namespace moetrace::tracegen {

class EngineImpl;
struct EmitScratch;
class RankEmitter;

class Engine {
 public:
  explicit Engine(const RunConfig& config);  // config must be validated
  ~Engine();
  // Pass 1: simulate all ranks (idempotent), on up to `threads` threads
  // (pipeline stages are spread over them; same results for any count).
  void Simulate(int threads = 1);
  // Pass 1's results (what pass 2 reads: every collective's arrivals, the
  // p2p transfers, each rank's end) as bytes, after Simulate(); and loaded
  // into an engine of the same config instead of Simulate(), which then
  // emits the same bytes. Under mpirun one process simulates, the others
  // load (generate: pass 1 is not repeated on every process). LoadPass1
  // throws std::runtime_error on bytes of another shape or cut short.
  std::string SavePass1() const;
  void LoadPass1(std::string_view bytes);
  // Pass 2: the events of rank `r` (runs Simulate() first if needed).
  Rank EmitRank(int r);
  // Same, into *out (overwritten): reusing one Rank across calls keeps the
  // capacity of its event columns instead of reallocating them per rank.
  void EmitRank(int r, Rank* out);
  // Trace-wide metadata (no ground truth; see labels.h).
  Metadata BaseMetadata() const;
  int world_size() const;
  // After Simulate(): per rank, the end of its last step (the host's loss
  // read) in ns from the trace start, i.e. the step span when steps = 1.
  std::vector<int64_t> RankEndTimes() const;
  // Total events emitted so far by EmitRank (not by other RankEmitters).
  int64_t events_emitted() const;

 private:
  friend class RankEmitter;
  std::unique_ptr<EngineImpl> impl_;
  std::unique_ptr<RankEmitter> emitter_;  // EmitRank's
};

// Pass 2 on one thread. An emitter keeps what it reuses from one rank to the
// next (its EP group's routing, the last rank's track sizes); after
// Engine::Simulate(), emitters of one engine may run concurrently, one per
// thread, and emit the same bytes as Engine::EmitRank.
class RankEmitter {
 public:
  explicit RankEmitter(const Engine& engine);
  ~RankEmitter();
  RankEmitter(const RankEmitter&) = delete;
  RankEmitter& operator=(const RankEmitter&) = delete;
  // Rank `r` into *out (overwritten, its columns' capacity reused); throws
  // std::logic_error before Simulate().
  void Emit(int r, Rank* out);
  int64_t events() const;  // emitted by this emitter so far

 private:
  const EngineImpl& engine_;
  std::unique_ptr<EmitScratch> scratch_;
};

}  // namespace moetrace::tracegen
