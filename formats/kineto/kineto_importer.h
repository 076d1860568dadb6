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

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "formats/trace.h"
#include "formats/trace_io.h"

namespace moetrace {

// Opens a Kineto JSON file or a directory of them. Throws InputError when
// the path holds no Kineto trace. Metadata.source = "kineto".
std::unique_ptr<TraceSource> OpenKineto(const std::string& path);

class KinetoEventObserver;
struct KinetoOpenOptions {
  // Reads each rank file whole (inflated in one piece) and parses it in one
  // pass, instead of streaming it through a bounded window: faster, but the
  // whole text is resident while the rank is read.
  bool whole_files = false;
  // With whole_files: asked once per file read, from the reading thread; the
  // observer it returns (may be null) sees that file's events as they are
  // read. `inflated`: the file was gzip data.
  std::function<KinetoEventObserver*(const std::string& path, bool inflated)> observer;
  // With whole_files: the cores the reads of this source may use together.
  // A set with fewer files than that reads each large file on several.
  int threads = 1;
};
std::unique_ptr<TraceSource> OpenKineto(const std::string& path, KinetoOpenOptions options);

// Content sniff: a JSON object with a "traceEvents" key (after gunzip when
// the file starts with the gzip magic). For a directory: any file in it.
bool LooksLikeKineto(const std::string& path);

// Imports one rank from an in-memory JSON document (tests, fuzzing).
// `file` names the input in error messages; its name may give the rank.
Rank ImportKinetoJson(std::string_view json, const std::string& file = "<memory>");

}  // namespace moetrace
