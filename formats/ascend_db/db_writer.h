// Writes a rank as an ascend_pytorch_profiler DB following the documented
// schema: the inverse of the reader, for tests and benchmarks (a known trace
// -> DB -> trace must give the same events). Only what the schema can say
// is written (see README.md, "Writer"); a trace in that vocabulary reads
// back equal, field by field.
#pragma once

#include <cstdint>
#include <string>

#include "formats/trace.h"

namespace moetrace {

// Creates `path` (replacing it) with the tables STRING_IDS, TASK,
// COMPUTE_TASK_INFO, COMMUNICATION_TASK_INFO, COMMUNICATION_OP,
// ENUM_HCCL_DATA_TYPE, ENUM_API_TYPE, CANN_API, PYTORCH_API, CONNECTION_IDS,
// MSTX_EVENTS, MEMORY_RECORD, RANK_DEVICE_MAP (rank.rank -> `device`),
// NPU_INFO and META_DATA. Throws std::runtime_error on an SQLite failure.
//   kDeviceStream with native id >= 0: TASK rows on that stream; kCompute
//     also a COMPUTE_TASK_INFO row, kCopy / kSync a COMMUNICATION_TASK_INFO
//     row (taskType = name, size = bytes), other categories TASK only
//     (taskType = name).
//   kDeviceStream with native id -1 (collectives): COMMUNICATION_OP rows
//     (bytes as count of INT8; a p2p peer as a COMMUNICATION_TASK_INFO row).
//   kHostThread (globalTid = pid << 32 | native id): kLaunch / kSync ->
//     CANN_API; kHostOp and ProfilerStep#N -> PYTORCH_API (correlation via
//     CONNECTION_IDS); other kMarker -> MSTX_EVENTS (instants: eventType 0).
//   counters "<component> allocated|reserved|active" -> MEMORY_RECORD.
void WriteAscendDb(const Rank& rank, int64_t device, const std::string& path);

}  // namespace moetrace
