#include "analyzer/link_nominal.h"

#include "tracegen/config.h"

namespace moetrace {

std::optional<double> NominalLinkGbps(std::string_view transport) {
  static const tracegen::HardwareConfig hw = [] {
    tracegen::RunConfig c;
    c.mutable_hardware()->set_preset("atlas-800t-a2");
    tracegen::ResolveHardware(&c);
    return c.hardware();
  }();
  double bytes_per_s = 0;
  if (transport == "hccs" || transport == "sdma") {
    if (hw.devices_per_node() > 1) bytes_per_s = hw.intra_node_bandwidth() / (hw.devices_per_node() - 1);
  } else if (transport == "rdma") {
    bytes_per_s = hw.inter_node_bandwidth();
  } else if (transport == "pcie") {
    bytes_per_s = hw.host_link_bandwidth();
  }
  if (!(bytes_per_s > 0)) return std::nullopt;
  return bytes_per_s / 1e9;
}

}  // namespace moetrace
