// Rounds a stream's picosecond durations to ns with the sub-ns remainder
// carried to the next task: the Ascend profiler prints durations such as
// 1.2695 µs (half a ns), and rounding each one alone would bias the busy
// time of a stream by up to 0.5 ns per task (16 ns over the 276 tasks of a
// small trace). With the carry every end stays within 1 ns of the exact
// value and the sum of durations within 0.5 ns.
#pragma once

#include <cstdint>

namespace moetrace {

class NsCarry {
 public:
  int64_t Round(int64_t ps) {
    int64_t v = ps + carry_;
    int64_t ns = v >= 0 ? (v + 500) / 1000 : -((-v + 500) / 1000);
    carry_ = v - ns * 1000;
    return ns;
  }

 private:
  int64_t carry_ = 0;
};

}  // namespace moetrace
