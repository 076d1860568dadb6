// COMMUNICATION_OP (+ COMMUNICATION_TASK_INFO, ENUM_HCCL_DATA_TYPE) -> collectives.
#pragma once

#include "formats/ascend_db/db_context.h"

namespace moetrace {

// One kDeviceStream track per communication group ("HCCL <group>", role
// kDeviceComm, native id -1): each COMMUNICATION_OP row is a kCollective
// (kP2P for send / receive) event named opName, correlation = connectionId,
// with a CommRecord: kind from opType (else opName), group = groupName,
// sequence from the name (hcom_<kind>__<group>_<index>), bytes = count x the
// size of dataType (ENUM_HCCL_DATA_TYPE), peer of a p2p op = the other rank
// of its COMMUNICATION_TASK_INFO sub-tasks (srcRank / dstRank).
// In a DB of several devices an op belongs to the device of its sub-tasks
// (COMMUNICATION_TASK_INFO.opId -> TASK.deviceId); ops with no sub-task go
// to the host rank. `self_rank` is the rank's own id in the group, or -1.
void ReadCommunicationOps(DbContext* ctx, int64_t self_rank);

// Bytes per element of an HCCL data type name ("FP16" -> 2), 0 when unknown.
int HcclTypeBytes(std::string_view name);

}  // namespace moetrace
