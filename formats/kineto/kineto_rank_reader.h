// Reads one Kineto rank file into a Rank (internal to formats/kineto).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "formats/kineto/kineto_event_observer.h"
#include "formats/kineto/padded_input.h"
#include "formats/trace.h"

namespace moetrace {

// What the top-level keys of a Kineto file say.
struct KinetoHeader {
  bool has_trace_events = false;
  int32_t rank = kNone;           // distributedInfo.rank
  int32_t world_size = 0;         // distributedInfo.world_size
  std::string backend;            // distributedInfo.backend
  std::string device_name;        // deviceProperties[0].name
  uint64_t device_memory = 0;     // deviceProperties[0].totalGlobalMem
  bool has_base_time = false;
  int64_t base_time_ns = 0;       // baseTimeNanoseconds
  std::string host_name;          // host_name, when recorded
  int64_t schema_version = -1;
  // otherData.ranks of a Chrome JSON written by `moetrace convert`: more than
  // one rank in one file, which is for viewing and not read back.
  uint64_t export_ranks = 0;
  // distributedInfo counts written as strings, read as numbers.
  int64_t coerced_strings = 0;
};

// Reads the top-level keys that precede "traceEvents" in `prefix` (a prefix
// of the file); tolerant of a prefix cut anywhere.
KinetoHeader SniffKinetoHeader(std::string_view prefix);

// The rank number in a file name ("rank-3", "rank3", "rank_3"); -1 if none.
int32_t RankFromFileName(std::string_view file_name);

// Parses the document in `buf` into a Rank. `refill`, when given, appends
// more of the document to `buf` (false at the end): a gzip stream is parsed
// while it is inflated. `rank_hint` is used (with `rank_rule`) when the file
// has no distributedInfo.rank. Throws InputError naming `file`, the byte
// offset and what was expected. `observer`, when given and there is no
// `refill`, sees every event; its Complete() is called when the file was
// read in the single pass that feeds it, Incomplete() otherwise (a file the
// fast path does not take is read again without it).
// `threads` > 1 lets a large file without `refill` be read on two threads
// (kineto_split_reader.h); the Rank is the same. The bytes of `buf` may then
// change during the call (they are restored before it returns): no one else
// may read `buf` meanwhile.
Rank ReadKinetoRank(const PaddedBuffer& buf, const std::string& file, int32_t rank_hint,
                    std::string_view rank_rule, KinetoHeader* header = nullptr,
                    const std::function<bool()>& refill = {},
                    KinetoEventObserver* observer = nullptr, int threads = 1);

}  // namespace moetrace
