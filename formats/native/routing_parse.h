// A RankHeader's routing records (field 7) decoded without protobuf. On a
// 6,144-rank MoE trace they are most of the header (a record of one count per
// expert for every MoE layer and micro-batch), and protobuf's generic
// packed-varint parse plus the copy out of its RepeatedFields was ~14% of
// `analyze`'s CPU. The other fields are few: protobuf still parses them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "formats/trace.h"

namespace moetrace::native {

// Decodes the routing records of the RankHeader message [p, p + n) into
// `routing` (reusing its elements' vectors) and copies every other field,
// as it was, to `rest`. Returns false where the bytes are not well-formed
// protobuf: the caller then parses the whole message with protobuf, which
// decides (so this accepts nothing that protobuf rejects).
bool SplitRankHeader(const uint8_t* p, size_t n, std::vector<uint8_t>* rest,
                     std::vector<moetrace::RoutingRecord>* routing);

}  // namespace moetrace::native
