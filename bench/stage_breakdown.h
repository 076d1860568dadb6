// A stage's step as an exact partition by what the device was doing: every
// instant of the step goes to the first kind, in the order of `Part`, that
// has an event covering it (compute first: communication under compute is
// masked), the rest to `kIdle` (host-bound or free). Used by ep_exposure to
// say, per pipeline stage, what sets the step (bench/README.md, "Adaptive
// Pipe + EDPB, session 13").
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace moetrace::bench {

enum Part : int { kPartCompute, kPartMigration, kPartEp, kPartTp, kPartDp, kPartSwap, kPartPp, kPartIdle, kPartCount };
inline constexpr const char* kPartNames[kPartCount] = {"compute", "migration", "EP", "TP", "DP", "swap", "PP wait",
                                                       "idle"};

struct Interval {
  int64_t start, end;
  Part part;
};

// Nanoseconds of [lo, hi) given to each part; the parts sum to hi - lo.
std::array<int64_t, kPartCount> PartitionStep(std::vector<Interval> events, int64_t lo, int64_t hi);

}  // namespace moetrace::bench
