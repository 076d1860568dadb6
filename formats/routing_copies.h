// Redundant-expert copy lists of a routing record (RoutingRecord::copy_*),
// checked where a reader takes them from a file. Tracegen writes them
// well-formed; a file can hold anything (fields 8-10 of mtrace.proto's
// RoutingRecord), and the analysis would otherwise use a misaligned list as
// far as its shortest part goes, or move tokens an expert never had.
#pragma once

#include "formats/trace.h"

namespace moetrace {

// Whether `r`'s copies are well-formed: the three lists of one length; each
// copy of an expert the record counts (0 <= expert < tokens_per_expert's
// size) on an EP rank that exists (0 <= rank, and < ep_size when ep_size is
// known, > 0); no negative token count; an expert's copies together take at
// most the tokens the record counts for it. Empty lists are well-formed.
bool CopyListsWellFormed(const RoutingRecord& r);

// Drops the copy lists of each record of `rank` that are not well-formed
// (the copies of a record go together: one bad entry makes the list's
// alignment suspect) and counts each such record in the import stats as
// "skipped.routing.copy_lists": odd, counted, never fatal.
void DropMalformedCopyLists(Rank* rank);

}  // namespace moetrace
