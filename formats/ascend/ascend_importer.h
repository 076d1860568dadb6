// Ascend torch_npu profiler output -> TraceSource.
//
// Accepted inputs (detected from the directory's content):
//   - a `*_ascend_pt` directory (holding ASCEND_PROFILER_OUTPUT), or the
//     ASCEND_PROFILER_OUTPUT directory itself, or its trace_view.json: one rank;
//   - a parent holding one such directory per rank: the rank id comes from
//     profiler_info_{rank}.json / profiler_info.json ("rank_id"), else the
//     file name profiler_info_N.json, else the order of the directory names;
//   - a directory of loose kernel_details-like CSV files (one rank per file,
//     in name order), or one such file;
//   - a cluster analysis folder (cluster_step_trace_time.csv,
//     cluster_communication.json): ranks without events, carrying the
//     profiler's figures in Metadata::reference.
// Per rank: trace_view.json is the timeline when present (kernel_details.csv
// then only adds expert loads); otherwise kernel_details.csv gives the device
// tasks. step_trace_time.csv, communication.json and trace_view's Overlap
// Analysis become Metadata::reference (communication.json per rank and per op,
// see communication_json.h; its per-op transit size also fills CommRecord::bytes
// of the HCCL op of the same name); memory_record.csv / operator_memory.csv
// become memory counters. Metadata::attributes say which rule and files were used.
#pragma once

#include <memory>
#include <string>

#include "formats/rank_reference.h"
#include "formats/trace_io.h"

namespace moetrace {

// Opens `path`; throws InputError naming the path when it is not Ascend
// profiler output or a file in it is bad. The metadata (including the
// reference figures, which needs one pass over each trace_view.json)
// is ready on return; ranks are imported on ReadRank. A single rank's
// trace_view.json is imported during the open (that pass gives the figures)
// and handed to its first ReadRank: one parse of the file, not two.
std::unique_ptr<TraceSource> OpenAscend(const std::string& path);

struct AscendOpenOptions {
  // When set, and with several ranks: each trace_view.json's Overlap
  // Analysis figures are left out of Metadata::reference (a placeholder per
  // rank stands where they go: rank_reference.h) and each read of a rank
  // puts them here instead, from the import's own pass: each file is parsed
  // once, not once to open and once more to read. For a reader that reads
  // every rank and puts the figures back (the analysis); other readers
  // want them in the metadata.
  std::shared_ptr<RankReference> figures_with_ranks;
};
std::unique_ptr<TraceSource> OpenAscend(const std::string& path, const AscendOpenOptions& options);

// Whether `path` looks like Ascend profiler output (never throws).
bool LooksLikeAscend(const std::string& path);

}  // namespace moetrace
