// Where in Adaptive Pipe's schedule a rank's chunk ran: a warmup forward, a
// cooldown backward, or one half of a fused forward/backward pair. Read off
// the trace, not the engine: a chunk (micro-batch, direction, virtual
// stage) is "paired" when its time span overlaps a chunk of the other
// direction on the same rank. Used by ep_exposure to say which pair position
// leaves the EP all-to-alls exposed (bench/README.md, "Adaptive Pipe masking
// at the preset's skew, session 13").
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace moetrace::bench {

enum PairPos : int { kPosWarmup, kPosPair, kPosCooldown, kPosOther, kPosCount };
inline constexpr const char* kPosNames[kPosCount] = {"warmup", "pair", "cooldown", "other"};

struct ChunkOp {
  int64_t start, end;
  int32_t micro_batch;  // < 0: not part of a chunk (optimizer, migration)
  bool backward;        // backward or recompute
  int32_t layer;        // < 0: no layer (embedding, head, loss)
};

// Per op of `ops` (one rank), its position. Virtual stages are the runs of
// consecutive layer ids on the rank (VPP chunks hold non-adjacent layers);
// an op without a layer takes the micro-batch's and direction's first chunk.
std::vector<PairPos> ClassifyPairPositions(const std::vector<ChunkOp>& ops);

}  // namespace moetrace::bench
