// msprof-analyze's cluster_analysis_output folder, read as the profiler
// wrote it (no events: the analyzer turns it into `cluster_output`):
//   cluster_step_trace_time.csv        per-rank (and per-stage) step breakdown, µs
//   cluster_communication.json         per group / op / rank HCCL figures (communication_json.h)
//   cluster_communication_matrix.json  per group / op / "src-dst" link records
//   communication_group.json           the parallel groups
// Odd fields (a missing column, a number written as a string, NaN, text
// where a number belongs) are coerced or skipped and counted in `stats`; an
// unreadable file (bad syntax, truncation) is an InputError naming the file
// and position.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "formats/ascend/communication_json.h"
#include "formats/ascend/csv_table.h"
#include "formats/trace.h"

namespace moetrace {

struct StepTraceRow {
  std::string type;   // "rank" or "stage"
  std::string index;  // as written: the rank id, or a stage's ranks "(0, 1, 2, 3)"
  int32_t rank = -1;  // rank rows only
  int32_t step = kNone;
  // Column key part (ReferenceKeyPart: "computing",
  // "communication_not_overlapped", ...) -> µs as written, file order.
  std::vector<std::pair<std::string, double>> figures_us;
};

// One src -> dst link of the matrix, summed over ops (MB, ms as written).
struct MatrixLink {
  std::string group;
  int32_t src = -1, dst = -1;
  std::string transport;  // lower-cased: "hccs"
  double size_mb = 0, time_ms = 0;
  int64_t ops = 0;
};

struct ParallelGroup {
  std::string name;  // "(0, 1, 2, 3)", as msprof-analyze names groups
  std::string kind;  // "collective", "p2p", a pg name ("dp"), or "communication"
  std::vector<int32_t> ranks;
};

struct ClusterOutputFiles {
  std::string dir;
  std::vector<StepTraceRow> step_trace;
  std::map<LinkKey, LinkSum> rank_links;  // cluster_communication.json
  std::vector<MatrixLink> matrix_links;    // sorted by (group, src, dst, transport)
  std::vector<ParallelGroup> groups;       // sorted by name
  std::map<std::string, int64_t> stats;    // "<file stem>.<what>" -> count
};

// `path` is a cluster_analysis_output folder (or one of its files), or a
// folder holding a `cluster_analysis_output` child. Sets `dir` to it.
bool FindClusterOutputDir(const std::string& path, std::string* dir);

ClusterOutputFiles ReadClusterOutput(const std::string& dir);

// The rows of cluster_step_trace_time.csv (Type and Index required); odd
// fields counted in `stats` under "cluster_step_trace_time.*".
std::vector<StepTraceRow> ReadClusterStepTrace(const CsvTable& csv,
                                               std::map<std::string, int64_t>* stats);

// The two JSON files from their text (`file` names them in errors); odd
// fields counted in `odd`.
std::vector<MatrixLink> ReadCommunicationMatrix(const std::string& json, const std::string& file,
                                                LenientStats* odd);
std::vector<ParallelGroup> ReadCommunicationGroups(const std::string& json, const std::string& file,
                                                   LenientStats* odd);

// "(0, 1, 2)" -> {0, 1, 2}; empty when the name is no rank list.
std::vector<int32_t> GroupRanks(std::string_view name);

}  // namespace moetrace
