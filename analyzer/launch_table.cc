#include "analyzer/launch_table.h"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "analyzer/id_range.h"

namespace moetrace::rank_pass {
namespace {

// Fills `n` bytes (a multiple of 8) with `byte`: the launch table's empty
// slots are all-zero or all-ones bytes. Four 16-byte stores a step, where
// filling 16- and 8-byte patterns took ~5 instructions a slot. (glibc's
// memset of these sizes is `rep stosb`, which valgrind counts per byte.)
void FillBytes(void* p, size_t n, unsigned char byte) {
  auto* out = static_cast<unsigned char*>(p);
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i v = _mm_set1_epi8(static_cast<char>(byte));
  for (; i + 64 <= n; i += 64) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), v);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 16), v);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 32), v);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 48), v);
  }
#endif
  const uint64_t word = byte == 0 ? 0 : ~uint64_t{0} / 255 * byte;
  for (; i + 8 <= n; i += 8) std::memcpy(out + i, &word, 8);
  for (; i < n; ++i) out[i] = byte;
}

}  // namespace

LaunchTable::LaunchTable(const Rank& rank, RankScratch* s) : s_(s) {
  IdRange ids;
  for (const Track& t : rank.tracks) {
    if (t.kind != TrackKind::kHostThread) continue;
    // Over every id of the thread, not only the launches': a wider
    // range costs only unused slots, and this loop reads one column.
    // Negative (absent) ids are huge unsigned, never the minimum.
    AddIds(t.events.correlation.data(), t.events.size(), &ids);
  }
  const uint64_t lo_u = ids.lo_u;
  const int64_t hi = ids.hi, n = ids.present;
  const int64_t lo = static_cast<int64_t>(lo_u);
  // The slot vectors keep their size across ranks (only the first
  // `size_` slots are read): a resize per rank would zero-fill them too.
  if (hi < 0) {
    size_ = 0;
    return;
  }
  base_ = lo;
  const uint64_t range = static_cast<uint64_t>(hi - lo) + 1;
  sparse_ = range > static_cast<uint64_t>(4 * n + (1 << 16));
  if (!sparse_) {
    if (s_->launch_end.size() < range) s_->launch_end.resize(range);
    if (s_->launch_threads.size() < range) s_->launch_threads.resize(range);
    end_ = s_->launch_end.data();
    threads_ = s_->launch_threads.data();
    FillBytes(end_, range * sizeof(EndHost), 0);
    FillBytes(threads_, range * sizeof(Threads), 0xff);  // {-1, -1}
    size_ = range;
  }
}

void LaunchTable::AddSparse(int64_t corr, TimeNs end, TimeNs dur, int32_t thread) {
  Slot& slot = map_.try_emplace(corr, Slot{kNoTime, 0, {-1, -1}}).first->second;
  slot.host += dur;
  if (slot.threads.first < 0) slot.threads.first = thread;
  if (end >= slot.end) {
    slot.end = end;
    slot.threads.last = thread;
  }
}

}  // namespace moetrace::rank_pass
