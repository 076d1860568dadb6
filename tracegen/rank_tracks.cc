#include "tracegen/rank_tracks.h"

#include <utility>

namespace moetrace::tracegen {

void AddRankTracks(Rank& k) {
  k.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "python", 100000 + k.rank);
  k.AddTrack(TrackKind::kHostThread, TrackRole::kHostDispatch, "dequeue (task queue)", 200000 + k.rank);
  k.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "stream 0 (compute)", 0);
  k.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "stream 1 (hccl)", 1);
  k.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "stream 2 (pp send)", 2);
  k.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "stream 3 (pp recv)", 3);
  k.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCopy, "stream 4 (copy/swap)", 4);
  k.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "stream 5 (hccl, overlapped task)", 5);
  static const std::pair<CounterKind, const char*> counters[] = {
      {CounterKind::kMemAllocated, "memory.allocated"}, {CounterKind::kMemWeights, "memory.weights"},
      {CounterKind::kMemGradients, "memory.gradients"}, {CounterKind::kMemOptimizer, "memory.optimizer"},
      {CounterKind::kMemActivations, "memory.activations"},
      {CounterKind::kMemRecompute, "memory.recompute"}};
  for (auto [kind, name] : counters) k.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, name).counter = kind;
}

}  // namespace moetrace::tracegen
