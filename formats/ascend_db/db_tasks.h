// TASK + COMPUTE_TASK_INFO + COMMUNICATION_TASK_INFO -> device-stream tracks.
#pragma once

#include "formats/ascend_db/db_context.h"

namespace moetrace {

// One kDeviceStream track per TASK.streamId ("Stream <id>", native id =
// stream id). Category, as the profiler's own Overlap Analysis counts it:
//   - a row of COMPUTE_TASK_INFO            -> kCompute, name = its `name`;
//   - a row of COMMUNICATION_TASK_INFO      -> a plane sub-task of a collective:
//     kSync (Notify / Wait / Record types) else kCopy, name = its taskType,
//     bytes = its size (the collective itself is COMMUNICATION_OP);
//   - neither: name = TASK.taskType, classified like a trace_view task
//     (hcom_* -> kCollective/kP2P with a CommRecord from the name, memcpy ->
//     kCopy, anything else -> kSync: the profiler counts only kernels with
//     COMPUTE_TASK_INFO as Computing).
// correlation = TASK.connectionId (kDbNoId -> -1). Rows are merge-joined on
// globalTaskId (the tables' primary key, so each is read in key order).
void ReadDeviceTasks(DbContext* ctx);

}  // namespace moetrace
