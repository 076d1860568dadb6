// Profiler figures that come with the ranks' reads instead of the metadata.
//
// A source may leave a rank's figures out of Metadata::reference until the
// rank is read (Ascend: the Overlap Analysis figures of trace_view.json come
// from the import's own pass, where the open would otherwise parse every
// file once more). It then puts one placeholder where those figures belong
// in Metadata::reference, and each read hands the rank's figures to a
// RankReference the opener gave it; whoever gathered them (the analysis, on
// every process) puts them back in place, so that the list is the one a
// source that read every file when opening gives, in the same order.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string_view>
#include <vector>

#include "formats/trace.h"

namespace moetrace {

// The key of a placeholder (value 0, step kNone, the rank's id): a key no
// metric path has, so a check of it could never find a figure.
inline constexpr std::string_view kRankReferenceKey = "(figures read with the rank)";

// The figures the reads found, by rank id (a rank read twice gives the same
// figures: kept once). Thread-safe: ranks are read on several threads.
class RankReference {
 public:
  void Put(int32_t rank, std::vector<LabeledValue> figures);
  // The figures of `ranks` (ids; each once, in this order), forgotten here.
  // Only those: under mpirun a process may read ranks it does not analyse
  // (a --ranks selection reads every rank to learn its id).
  std::vector<LabeledValue> Take(const std::vector<int32_t>& ranks);

 private:
  std::mutex mu_;
  std::map<int32_t, std::vector<LabeledValue>> by_rank_;
};

// `reference` with each placeholder replaced by the figures of its rank in
// `from_ranks` (any order of ranks; a rank's figures keep their order), or
// dropped when that rank gave none (not read: left out by --skip-bad-ranks).
// Figures of a rank without a placeholder are left out (a selection of
// ranks or steps removed it).
std::vector<LabeledValue> ResolveRankReference(const std::vector<LabeledValue>& reference,
                                               const std::vector<LabeledValue>& from_ranks);

// Whether `reference` holds a placeholder.
bool HasRankReference(const std::vector<LabeledValue>& reference);

}  // namespace moetrace
