// What the graph transforms know about the hardware and the run beyond the
// events: the hardware calibration (tracegen/hardware/*.json) of the device
// the trace names (metadata.device), and the run's settings where the trace
// carries its configuration (metadata.config_json: model shape, micro-batch
// size, current knob values -- never used to regenerate).
#pragma once

#include <optional>
#include <string>

#include "formats/trace.h"

namespace moetrace::replay {

struct Calibration {
  bool known = false;
  std::string preset;                // hardware preset matched by device name
  double kernel_overhead_ns = 0;     // fixed device cost of any op
  double alpha_intra_ns = 0, alpha_inter_ns = 0;
  double intra_bw = 0, inter_bw = 0;  // achieved bytes/s per device (x comm efficiency)
  double framework_op_ns = 0, launch_ns = 0, enqueue_ns = 0;
  double cross_numa_factor = 1.35;    // ASCEND.md-derived default when unknown
  double grouped_gemm_half_tokens = 0;
  double host_link_bw = 25e9;         // bytes/s per device (swap); ASCEND.md PCIe default
  int devices_per_node = 8;
};

// The calibration of the hardware preset whose device is metadata.device.
Calibration CalibrationFor(const Metadata& metadata);

// Run settings recorded in the trace (tracegen's config_json), when present.
struct RunSettings {
  bool known = false;
  int seq = 0, hidden = 0, heads = 0, tp = 1, mbs = 1, top_k = 1;
  bool sp = false;
  bool task_queue = true, numa_affinity = true, edpb = false, swap = false;
  std::string recompute = "none", a2a = "flat", schedule = "1f1b";
};
RunSettings SettingsFor(const Metadata& metadata);

}  // namespace moetrace::replay
