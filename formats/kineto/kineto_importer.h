// Importer for PyTorch profiler (Kineto) / Chrome JSON traces: `.json` or
// `.json.gz`, one file per rank, or a directory of per-rank files.
//
//   auto source = OpenKineto("traces/");   // or a single file
//   Rank r = source->ReadRank(0);          // thread safe for distinct indices
//
// What could not be placed in the model is counted in Rank::import_stats
// ("read.<cat>", "skipped.<reason>", "rank_rule.<rule>"); the rank rule of
// each file is also in Metadata::attributes ("kineto.rank_rule.<file>").
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "formats/trace.h"
#include "formats/trace_io.h"

namespace moetrace {

// Opens a Kineto JSON file or a directory of them. Throws InputError when
// the path holds no Kineto trace. Metadata.source = "kineto".
std::unique_ptr<TraceSource> OpenKineto(const std::string& path);

class SharedTraceFiles;
// The same, reading every rank file through `files` (whole, inflated once
// for every parser of the command that shares `files`).
std::unique_ptr<TraceSource> OpenKineto(const std::string& path,
                                        std::shared_ptr<SharedTraceFiles> files);

// Content sniff: a JSON object with a "traceEvents" key (after gunzip when
// the file starts with the gzip magic). For a directory: any file in it.
bool LooksLikeKineto(const std::string& path);

// Imports one rank from an in-memory JSON document (tests, fuzzing).
// `file` names the input in error messages; its name may give the rank.
Rank ImportKinetoJson(std::string_view json, const std::string& file = "<memory>");

}  // namespace moetrace
