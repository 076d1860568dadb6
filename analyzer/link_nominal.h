// Nominal bandwidth of an HCCL transport, from the device calibration of
// tracegen/hardware (atlas-800t-a2: the Atlas 800T A2 that msprof's cluster
// output comes from), in GB/s (1e9 bytes/s, the profiler's unit):
//   hccs, sdma  one HCCS link: intra_node_bandwidth / (devices_per_node - 1)
//               (392 GB/s over 7 full-mesh links = 56 GB/s); msprof's SDMA
//               entry is the HCCS + PCIE traffic inside the node
//   rdma        inter_node_bandwidth (RoCE, 25 GB/s per NPU)
//   pcie        host_link_bandwidth (PCIe 4.0 x16, 25 GB/s)
// Other transports (sio, ...) have no calibrated figure: nullopt.
#pragma once

#include <optional>
#include <string_view>

namespace moetrace {

std::optional<double> NominalLinkGbps(std::string_view transport);

}  // namespace moetrace
