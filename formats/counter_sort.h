// Puts a counter track's samples in time order, keeping their order among
// equal times: the importers read them in any order (the Ascend CSV and DB
// exports list memory records by component, not by time).
#pragma once

#include "formats/trace.h"

namespace moetrace {

// sample_ts and sample_value must be of one size.
void SortSamplesByTime(Track& t);

}  // namespace moetrace
