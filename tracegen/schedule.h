// Pipeline schedules: the order in which one pipeline stage runs the
// forward and backward passes of its micro-batches.
#pragma once

#include <string_view>
#include <vector>

namespace moetrace::tracegen {

struct PipeTask {
  bool backward = false;
  int mb = 0;
  int model_stage = 0;  // which slice of layers (0 .. stages-1)
  int up = -1;          // pp stage that feeds this slice's forward (-1: first slice)
  int down = -1;        // pp stage this slice's forward output goes to (-1: last slice)
};

// One step of the schedule: a task, or a forward and a backward task whose
// operators are interleaved so that one's communication overlaps the other's
// compute (adaptive pipe, DualPipe).
struct PipeItem {
  PipeTask a;
  PipeTask b;
  bool fused = false;
  // adaptive_pipe: a task with no opposite-direction partner (warmup
  // forward, cooldown backward) runs as two halves of its micro-batch
  // overlapping each other (EngineImpl::BuildHalves).
  bool halves = false;
};

struct ScheduleShape {
  std::string_view kind;  // 1f1b | interleaved | adaptive | adaptive_pipe | dualpipe
  int pp = 1;
  int vpp = 1;
  int micro_batches = 1;
};

// Number of layer slices: pp*vpp (dualpipe: pp, each rank holding two).
int ModelStages(const ScheduleShape& shape);
// The order of work on pipeline stage `stage`.
std::vector<PipeItem> StageSchedule(const ScheduleShape& shape, int stage);

}  // namespace moetrace::tracegen
