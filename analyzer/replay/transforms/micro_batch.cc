#include "analyzer/replay/transforms/micro_batch.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/core.h>

#include "analyzer/replay/transforms/op_index.h"
#include "formats/errors.h"

namespace moetrace::replay {
namespace {

TimeNs Affine(TimeNs dur, double fixed, double k) {
  const double f = std::min<double>(fixed, double(dur));
  return TimeNs(std::llround(f + (double(dur) - f) * k));
}

bool SpansNodes(const Track& tr, const CommRecord& rec, int dpn) {
  const std::span<const int32_t> ranks = tr.Ranks(rec.group_ranks);
  if (ranks.empty()) return false;
  const int32_t n0 = NodeOf(ranks[0], dpn);
  for (int32_t g : ranks) {
    if (NodeOf(g, dpn) != n0) return true;
  }
  return false;
}

}  // namespace

int32_t MicroBatchCount(const Trace& trace) {
  int32_t m = -1;
  for (const Rank& rank : trace.ranks) {
    for (const Track& tr : rank.tracks) {
      if (tr.kind != TrackKind::kDeviceStream) continue;
      for (int32_t mb : tr.events.micro_batch) m = std::max(m, mb);
    }
  }
  return m + 1;
}

void ScaleMicroBatch(const Trace& trace, double k, const Calibration& cal, EventEdits* edits) {
  const int32_t M = MicroBatchCount(trace);
  const int32_t ki = int32_t(std::llround(k));
  if (M <= 0 || std::abs(k - ki) > 1e-9 || ki < 1 || M % ki != 0) {
    ThrowInputError("--set", fmt::format("micro-batch x{:g}", k),
                    "the graph replay merges micro-batches: a whole factor dividing the " +
                        std::to_string(M) + " micro-batches of the trace");
  }
  if (!edits->active) edits->Init(trace);
  if (ki == 1) return;
  const int32_t keep = M / ki;
  const int dpn = std::max(1, cal.devices_per_node);
  const double ovh = cal.known ? cal.kernel_overhead_ns : 0;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const Rank& rank = trace.ranks[r];
    LaunchIndex launches(rank);
    for (size_t t = 0; t < rank.tracks.size(); ++t) {
      const Track& tr = rank.tracks[t];
      const EventTable& ev = tr.events;
      if (tr.kind == TrackKind::kHostThread) {
        // Syncs of a dropped micro-batch go too (launches go with their ops).
        for (size_t i = 0; i < ev.size(); ++i) {
          if (ev.micro_batch[i] >= keep && ev.category[i] == Category::kSync) {
            edits->removed[r][t][i] = 1;
          }
        }
        continue;
      }
      if (tr.kind != TrackKind::kDeviceStream) continue;
      for (size_t i = 0; i < ev.size(); ++i) {
        const int32_t mb = ev.micro_batch[i];
        if (mb < 0 || ev.category[i] == Category::kMarker || ev.category[i] == Category::kSync) continue;
        if (mb >= keep) {
          edits->RemoveOp(trace, r, t, i, launches);
          continue;
        }
        TimeNs& d = edits->dur[r][t][i];
        const CommRecord* rec = CommOf(tr, i);
        switch (ev.category[i]) {
          case Category::kCompute:
            d = Affine(d, ovh, k);
            break;
          case Category::kCollective:
          case Category::kP2P: {
            if (rec && rec->kind == CollectiveKind::kRecv) break;  // waits for its send
            double alpha = 0;
            if (cal.known && rec) {
              const bool inter = SpansNodes(tr, *rec, dpn);
              const double hops = std::max(1, int(rec->group_ranks.size) - 1);
              alpha = hops * (inter ? cal.alpha_inter_ns : cal.alpha_intra_ns);
            }
            d = Affine(d, alpha, k);
            break;
          }
          case Category::kCopy:
            d = Affine(d, ovh, k);
            break;
          default:
            break;
        }
      }
    }
    // Activation-type memory of the remaining micro-batches grows k-fold.
    for (MemDelta& md : edits->memory[r].deltas) {
      if (md.op_track < 0) continue;
      const Track& ct = rank.tracks[size_t(md.counter_track)];
      if (ct.counter == CounterKind::kMemWeights || ct.counter == CounterKind::kMemGradients ||
          ct.counter == CounterKind::kMemOptimizer) {
        continue;
      }
      const EventTable& ev = rank.tracks[size_t(md.op_track)].events;
      if (ev.micro_batch[size_t(md.op_event)] >= 0) md.delta *= k;
    }
  }
  edits->memory_edited = true;
  edits->notes.push_back("micro-batch x" + std::to_string(ki) + ": " + std::to_string(M) + " -> " +
                         std::to_string(keep) + " micro-batches");
}

}  // namespace moetrace::replay
