// Ascend profiler SQLite exports -> TraceSource: torch_npu's
// ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{rank}.db and msprof's
// msprof_*.db (see README.md in this folder for every table and column read).
//
// Accepted paths (detected from content: SQLite magic + msprof tables):
//   - one .db file;
//   - a directory holding msprof_*.db / ascend_pytorch_profiler*.db files;
//   - an Ascend rank directory (its ASCEND_PROFILER_OUTPUT holds the DB),
//     with or without the text files: the DB is preferred, as Ascend's own
//     tools do, and attribute "ascend.input" says what was read;
//   - a parent of such rank directories (each one holding a DB).
// A DB may hold several devices: each device with rows is one rank.
// Metadata::source is "ascend" (the analyzer's Ascend figures apply), so
// OVERLAP_ANALYSIS feeds the same overlap_analysis.* reference keys as the
// text importer's trace_view.json "Overlap Analysis".
#pragma once

#include <memory>
#include <string>

#include "formats/trace_io.h"

namespace moetrace {

// Throws InputError naming the file when a DB is unreadable (not SQLite,
// truncated, malformed) or lacks the required STRING_IDS table.
std::unique_ptr<TraceSource> OpenAscendDb(const std::string& path);

// Whether `path` is (or holds, as above) an Ascend / msprof SQLite export.
// A file with the SQLite magic that cannot be opened also counts, so that
// opening it reports the SQLite error. Never throws.
bool LooksLikeAscendDb(const std::string& path);

}  // namespace moetrace
