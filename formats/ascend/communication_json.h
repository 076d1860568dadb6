// communication.json (per rank) and cluster_communication.json (cluster
// analysis): HCCL time and bandwidth per op, summed per rank into reference
// figures: communication.op_count, communication.{elapse,transit,wait,
// synchronization,idle}_time_us, and per transport (rdma, hccs, pcie, sdma,
// sio, ...) communication.<transport>.{transit_size_bytes,transit_time_us,
// bandwidth_gb_s} (bandwidth = summed size / summed time, GB = 1e9 bytes,
// size in MB = 2^20 bytes as the profiler counts). "Total Op Info" rows
// are the profiler's own totals and are skipped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "formats/trace.h"

namespace moetrace {

// `rank` >= 0: a per-rank file; -1: a cluster file whose op records are
// keyed by rank id. Throws InputError for malformed JSON.
std::vector<LabeledValue> CommunicationReference(std::string_view json, const std::string& file,
                                                 int32_t rank);

}  // namespace moetrace
