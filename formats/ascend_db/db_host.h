// CANN_API, PYTORCH_API (+ CONNECTION_IDS, ENUM_API_TYPE) and MSTX_EVENTS
// -> host-thread tracks; step windows -> Event::step.
#pragma once

#include "formats/ascend_db/db_context.h"

namespace moetrace {

// One kHostThread track per globalTid ("Thread <tid>", native id = tid, the
// low 32 bits; Rank::pid = the high 32 bits of the first row): CANN and
// framework calls of one OS thread share a track, as in trace_view.
//   CANN_API:     aclrtSynchronize* -> kSync + kFlagBlocking; a call whose
//                 connectionId is a device task's -> kLaunch (correlation =
//                 connectionId); others kHostOp.
//   PYTORCH_API:  by type (ENUM_API_TYPE): queue -> kLaunch, mstx -> kMarker,
//                 op / trace -> kHostOp; "ProfilerStep#N" -> kMarker +
//                 kFlagStepMarker. correlation = the smallest connectionId of
//                 its CONNECTION_IDS rows that is a device task's, else -1.
//   MSTX_EVENTS:  kMarker named by message; marks (eventType 0 / 3) are
//                 instants (kFlagInstant, dur 0); a range whose message is
//                 "ProfilerStep#N" or "step N" / "step_N" / "step#N" marks
//                 step N (kFlagStepMarker).
// Steps: a host event gets N of the step window holding its start; a device
// event the step of the host launch with its correlation.
// Needs ReadDeviceTasks first (ctx->task_connections).
void ReadHostCalls(DbContext* ctx);

// N of a step marker name ("ProfilerStep#12", "step 3", "Step_4"), or -1.
int32_t StepOfMarker(std::string_view name);

}  // namespace moetrace
