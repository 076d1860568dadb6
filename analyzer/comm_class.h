// The communication class of a device collective/p2p op (METRICS.md):
// the record's own class when the source says it, else derived from the
// group name (tp/dp/ep/pp), the collective kind, the layer and the name.
#pragma once

#include <string_view>

#include "formats/trace.h"

namespace moetrace {

CommClass ClassFromGroupName(std::string_view group);  // kOther when it says nothing
CommClass DeriveCommClass(const CommRecord& record, std::string_view group_name,
                          Phase phase, int32_t layer);
// For ops without a CommRecord: from the op's name and category.
CommClass DeriveCommClassFromName(std::string_view name, Category category, Phase phase,
                                  int32_t layer);
// True for a pipeline receive: a p2p op whose record says kRecv (or, without
// a record, whose name says recv).
bool IsRecvName(std::string_view name);

}  // namespace moetrace
