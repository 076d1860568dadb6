#include "formats/native/simd_level.h"

#include <atomic>

namespace moetrace::native {
namespace {
std::atomic<int> cap{-1};
}  // namespace

void SetSimdLevelCapForTesting(int c) { cap.store(c, std::memory_order_relaxed); }
int SimdLevelCap() { return cap.load(std::memory_order_relaxed); }

}  // namespace moetrace::native
