// What AnalyzeRank's passes (rank_metrics.cc, pass_one.cc) record per
// device op: the bits of an item's mask, and the time that means "none".
#pragma once

#include <cstdint>
#include <limits>

#include "formats/trace.h"

namespace moetrace::rank_pass {

constexpr TimeNs kNoTime = std::numeric_limits<TimeNs>::min();

// What one item of the sweep is. An op may carry several bits.
enum ItemBit : uint32_t {
  kBitCompute = 1u << 0,
  kBitComm = 1u << 1,
  kBitCopy = 1u << 2,
  kBitPpRecv = 1u << 3,   // exposed pipeline receive (bubble)
  kBitHostWait = 1u << 4, // a host wait [end(a), min(start(b), L(b)))
  kBitHostSync = 1u << 5, // ... of the sync kind
  kBitClass0 = 1u << 6,   // + class: 5 bits
};
constexpr uint32_t kBusy = kBitCompute | kBitComm | kBitCopy;
constexpr int kMaskCount = 1 << 11;

}  // namespace moetrace::rank_pass
