// A saved `analyze --json` parsed on several threads: protobuf's JSON parser
// is one thread per document (~1.4 s CPU for the 106 MB document of the 718B
// trace), and nearly all of a document is two top-level arrays: `label_checks`
// (53% of that one) and `ranks` (47%).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/proto/analysis.pb.h"

namespace moetrace {

// A top-level array of a JSON object: `open` at its '[', `close` at its ']',
// `items` each element's [begin, end).
struct TopArray {
  std::string_view key;
  size_t open = 0, close = 0;
  std::vector<std::pair<size_t, size_t>> items;
};

// The arrays of `keys` at the top level of the object `json`, in document
// order (a key absent: no entry). Nullopt when the text is not an object
// that closes, or one of `keys` is there twice or not as an array (the caller
// then parses the text whole, for its exact error).
std::optional<std::vector<TopArray>> FindTopArrays(std::string_view json,
                                                   const std::vector<std::string_view>& keys);

// ParseAnalysisJson(json, file) on up to `threads` threads (0: all cores):
// the document with `label_checks` and `ranks` emptied, and their elements in
// `threads` slices of about equal bytes, each parsed alone, then joined in
// order -- the same message. Any slice that fails to parse, or a document
// FindTopArrays does not split, is parsed whole, so errors are
// ParseAnalysisJson's word for word. Costs a copy of the text.
analysis::Analysis ParseAnalysisJsonSplit(std::string_view json, std::string_view file,
                                          int threads);

}  // namespace moetrace
