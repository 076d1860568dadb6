// The per-rank CSV files of ASCEND_PROFILER_OUTPUT.
#pragma once

#include <vector>

#include "formats/ascend/csv_table.h"
#include "formats/trace.h"

namespace moetrace {

// kernel_details.csv: one device task per row. Columns are found by name;
// `Name`, `Start Time(us)` and `Duration(us)` are required; `Type`,
// `Accelerator Core`, `Stream ID`, `Step Id`, `Input Shapes` are used when
// present. With `events` false (trace_view.json is the timeline) only the
// routing records are taken and the rows are counted as skipped.
//
// Expert loads: each GroupedMatmul row becomes a RoutingRecord (ts = task
// start, step = Step Id, layer = ordinal of the GroupedMatmul in its step on
// this rank, ep_size = 0). `Input Shapes` holds shapes, not the values of the
// group_list tensor, so:
//   - when x is given per group ("m0,k;m1,k;...;weights...", a run of 2-D
//     tensors sharing k), tokens_per_expert = {m0, m1, ...};
//   - otherwise (one x of shape [M, k]) tokens_per_expert = {M}: the tokens
//     this rank's local experts processed, i.e. its EP-rank load.
// import_stats says which form was found ("routing.grouped_matmul.per_group",
// "routing.grouped_matmul.rank_total").
void ImportKernelDetails(const CsvTable& csv, bool events, Rank* rank);

// step_trace_time.csv: reference figures "step_trace.<column>_us" per step
// (column names lower-cased, non-alphanumerics -> '_'; "Computing" ->
// step_trace.computing_us, "Communication(Not Overlapped)" ->
// step_trace.communication_not_overlapped_us).
std::vector<LabeledValue> StepTraceReference(const CsvTable& csv, int32_t rank);

// The same figures, compactly: a key per column and 16 bytes per value. A
// LabeledValue holds its key as a std::string (48 bytes plus a heap copy of
// the ~30-byte key), which was the reader's cost at 87 MB/s per core; the
// values of a many-row file stay in this form until the caller needs them
// as LabeledValues (real files hold a row per step).
struct StepTraceFigures {
  struct Figure {
    int32_t step = kNone;
    uint32_t column = 0;  // index into keys
    double value = 0;
  };
  std::vector<std::string> keys;  // "step_trace.<column>_us", by CSV column
  std::vector<Figure> figures;    // file order: rows, then columns
  std::vector<LabeledValue> Reference(int32_t rank) const;
};
StepTraceFigures ReadStepTrace(const CsvTable& csv);

// cluster_step_trace_time.csv: the same keys, one set per `rank` row (Type =
// rank, Index = rank id); `stage` rows and odd fields are skipped (cluster_output.h).
// Fills `ranks` with the rank ids.
std::vector<LabeledValue> ClusterStepTraceReference(const CsvTable& csv,
                                                    std::vector<int32_t>* ranks);

// memory_record.csv: counters per Component (PTA -> allocated / reserved,
// others -> kOther "<Component> allocated|reserved|active"), MB -> bytes
// (1 MB = 2^20 bytes). Returns whether PTA counters were found.
bool ImportMemoryRecord(const CsvTable& csv, Rank* rank);

// operator_memory.csv: allocated / reserved totals sampled at each
// allocation and release. They become the allocated / reserved counters when
// `primary` (no memory_record PTA counters), else kOther counters named
// "operator_memory allocated|reserved".
void ImportOperatorMemory(const CsvTable& csv, bool primary, Rank* rank);

// "Communication(Not Overlapped)" -> "communication_not_overlapped".
std::string ReferenceKeyPart(std::string_view column);

}  // namespace moetrace
