// One process's share of an analysis as bytes (analyzer/proto/partial.proto),
// for process 0 to merge (analyzer/distributed.h).
#pragma once

#include <string>

#include "analyzer/analyze.h"
#include "analyzer/hta/hta.h"

namespace moetrace {

namespace partial {
class HtaRank;
}

// Moves the rank analyses out of `*part` into the bytes (they are not held
// twice); the rest of `*part` is left as it was.
std::string SerializePartial(PartialAnalysis* part);
// Adds the ranks, skipped ranks and cluster state in `bytes` to `*into`.
// Throws std::runtime_error on bytes that do not parse.
void MergePartial(const std::string& bytes, PartialAnalysis* into);

void EncodeHtaRank(const hta::HtaRank& r, partial::HtaRank* out);
hta::HtaRank DecodeHtaRank(const partial::HtaRank& r);

}  // namespace moetrace
