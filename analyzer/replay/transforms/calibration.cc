#include "analyzer/replay/transforms/calibration.h"

#include "formats/errors.h"
#include "tracegen/config.h"

namespace moetrace::replay {

Calibration CalibrationFor(const Metadata& metadata) {
  Calibration c;
  if (metadata.device.empty()) return c;
  for (const std::string& name : tracegen::ListHardwarePresets()) {
    tracegen::RunConfig rc;
    rc.mutable_hardware()->set_preset(name);
    tracegen::ResolveHardware(&rc);
    const auto& hw = rc.hardware();
    if (hw.device() != metadata.device) continue;
    c.known = true;
    c.preset = name;
    c.kernel_overhead_ns = hw.kernel_overhead_ns();
    c.alpha_intra_ns = hw.alpha_intra_ns();
    c.alpha_inter_ns = hw.alpha_inter_ns();
    c.intra_bw = hw.intra_node_bandwidth() * hw.comm_efficiency();
    c.inter_bw = hw.inter_node_bandwidth() * hw.comm_efficiency();
    c.framework_op_ns = hw.framework_op_ns();
    c.launch_ns = hw.launch_ns();
    c.enqueue_ns = hw.enqueue_ns();
    c.cross_numa_factor = hw.cross_numa_factor();
    c.grouped_gemm_half_tokens = hw.grouped_gemm_half_tokens();
    c.host_link_bw = hw.host_link_bandwidth();
    c.devices_per_node = hw.devices_per_node();
    break;
  }
  if (metadata.layout.devices_per_node > 0) c.devices_per_node = metadata.layout.devices_per_node;
  return c;
}

RunSettings SettingsFor(const Metadata& metadata) {
  RunSettings s;
  if (metadata.config_json.empty()) return s;
  tracegen::RunConfig rc;
  try {
    rc = tracegen::ParseConfigJson(metadata.config_json, "metadata.config_json");
  } catch (const InputError&) {
    return s;
  }
  s.known = true;
  s.seq = rc.model().seq_length();
  s.hidden = rc.model().hidden();
  s.heads = rc.model().num_heads();
  s.top_k = std::max(1, rc.model().top_k());
  s.tp = std::max(1, rc.parallel().tp());
  s.sp = rc.parallel().sp();
  s.mbs = std::max(1, rc.parallel().micro_batch_size());
  s.task_queue = rc.host().task_queue();
  s.numa_affinity = rc.host().numa_affinity();
  s.edpb = rc.routing().edpb();
  s.swap = rc.memory().swap();
  if (rc.memory().has_recompute()) s.recompute = rc.memory().recompute();
  if (rc.comm().has_a2a()) s.a2a = rc.comm().a2a();
  if (rc.schedule().has_kind()) s.schedule = rc.schedule().kind();
  return s;
}

}  // namespace moetrace::replay
