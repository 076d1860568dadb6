// torch_npu's trace_view.json (Chrome-trace-like) -> one Rank.
//
// Parsed with simdjson on-demand in one pass: the kept events are copied
// into compact rows, never a DOM of the file. Processes are recognised by
// their `process_name` metadata event:
//   Python           cpu_op -> kHostOp, enqueue / dequeue -> kLaunch,
//                    ProfilerStep#N -> step marker
//   CANN             AscendCL calls: launches (sources of HostToDevice flows)
//                    -> kLaunch, aclrtSynchronize* and unlinked aclrtMemcpy
//                    -> kSync (blocking), the rest -> kHostOp
//   Ascend Hardware  device tasks, one kDeviceStream track per stream (tid)
//   Communication / HCCL   hcom_* ops -> kCollective / kP2P with a CommRecord
//   Overlap Analysis skipped here; ScanOverlapAnalysis keeps its figures
// Python and CANN events of the same OS thread share one host track, so a
// Dequeue encloses the AscendCL launch it makes.
//
// Launch join: device tasks, the CANN launch that issued them (HostToDevice
// flow), the Dequeue enclosing that launch and the Enqueue feeding it
// (async_task_queue flow) form one group and share one correlation; a task
// with no HostToDevice flow joins through its async_npu flow to the Enqueue
// inside the framework op. One launch may issue several tasks (aclnnMm ->
// TransData, Cast, MatMul), so the tasks of one launch share its correlation.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "formats/trace.h"

namespace moetrace {

// Imports `json` (the file's text) into `rank` (its tracks, strings and
// import_stats). `file` names the input in error messages. Throws InputError.
// `overlap`, when given, receives what ScanOverlapAnalysis(json, file,
// rank_id) gives, taken in the same pass (a file is then parsed once).
void ImportTraceView(std::string_view json, const std::string& file, Rank* rank,
                     std::vector<LabeledValue>* overlap = nullptr, int32_t rank_id = 0);

// The profiler's own "Overlap Analysis" figures for one rank, as reference
// values: overlap_analysis.{computing,communication,communication_not_overlapped,
// free}_us and ..._segments, plus overlap_analysis.{start,end}_us (the span
// its segments cover). Empty when the process is absent.
std::vector<LabeledValue> ScanOverlapAnalysis(std::string_view json, const std::string& file,
                                              int32_t rank);

// Classifies a device task or kernel_details row by its name / type / core.
Category ClassifyAscendTask(std::string_view name, std::string_view type,
                            std::string_view core);
// Collective kind from an HCCL op name or type ("hcom_allReduce__123_0").
CollectiveKind HcclKind(std::string_view name);
// HCCL op names read "hcom_<kind>__<group>_<index>[@<group hash>]"
// (hcom_allReduce__445_3: the 4th op of communicator 445), so the group
// token and the index within it match ops across ranks. False when the
// name has another form.
bool ParseHcclName(std::string_view name, std::string_view* group, int64_t* sequence);
// A CommRecord from an HCCL op name (kind, group, sequence).
CommRecord HcclRecord(std::string_view name, std::string_view type, StringTable* strings);

}  // namespace moetrace

namespace moetrace {
// The same, reading the file (one copy, into the thread's kept buffer: kept_buffer.h).
void ImportTraceViewFile(const std::string& path, Rank* rank,
                         std::vector<LabeledValue>* overlap = nullptr, int32_t rank_id = 0);
std::vector<LabeledValue> ScanOverlapAnalysisFile(const std::string& path, int32_t rank);
}  // namespace moetrace
