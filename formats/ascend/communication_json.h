// communication.json (per rank) and cluster_communication.json (cluster
// analysis): the profiler's HCCL time and bandwidth figures per op.
//
// Layouts (found by walking, any nesting up to 16 levels):
//   communication.json          {"step<N>"|"step": {"collective"|"p2p": {op: record}}}
//   cluster_communication.json  {group: {"step<N>"|"step": {op: {rank id: record}}}}
// A record is an object holding "Communication Time Info" and/or
// "Communication Bandwidth Info"; "Total Op Info" records are the profiler's
// own sums and are skipped. Step = N of the nearest "step<N>" key above the
// record (kNone for a bare "step" or none).
//
// Reference figures (Metadata::reference, LabeledValue{rank, step, key}):
//   per rank, step kNone (sums over the ops; µs as before):
//     communication.op_count, communication.<t>_time_us (t = elapse, transit,
//     wait, synchronization, idle), communication.<transport>.{transit_size_bytes,
//     transit_time_us, bandwidth_gb_s}
//   per op, step = the op's step, values exactly as written (JSON number ->
//   nearest double):
//     communication.op.<op>.<time field>           e.g. elapse_time_ms, transit_time_ms,
//         wait_time_ms, synchronization_time_ms, idle_time_ms, start_timestamp_us,
//         wait_time_ratio, synchronization_time_ratio
//     communication.op.<op>.<transport>.<field>    e.g. hccs.transit_size_mb,
//         hccs.transit_time_ms, hccs.bandwidth_gb_s, hccs.large_packet_ratio
//     communication.op.<op>.<transport>.size_<B>.count / .time_ms
//         "Size Distribution": packets of B bytes (key MB x 1e6, exact decimal)
//     communication.op.<op>.transit_bytes          derived: bytes the op moved
//   <op> is the file's op name ("hcom_allReduce__445_2@6297232067196334501")
//   with '.' replaced by '_'; field and transport names are lower-cased with
//   non-alphanumerics as '_' ("Elapse Time(ms)" -> elapse_time_ms). A
//   transport whose figures are all 0 with no size distribution is omitted.
//   Per-op values are sorted by (rank, step, key).
//
// Units: MB = 1e6 bytes (msprof divides bytes by 1000^2), so GB/s = MB/ms.
// transit_bytes = sum over transports of Transit Size(MB) x 1e6, without
// HCCS, PCIE and SIO when SDMA is present (msprof's SDMA entry is their sum).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "formats/trace.h"

namespace moetrace {

// HCCL op name without "@<group hash>" -> bytes moved (transit_bytes).
using OpBytes = std::map<std::string, uint64_t, std::less<>>;

// Transit size and time of one transport, summed over ops (MB, ms as written).
struct LinkSum {
  double size_mb = 0, time_ms = 0;
  int64_t ops = 0;
};
// (group, rank, transport): group is the cluster file's top-level key
// ("(0, 1)"), "" in a per-rank file; transport lower-cased ("hccs").
using LinkKey = std::tuple<std::string, int32_t, std::string>;

struct CommunicationFigures {
  std::vector<LabeledValue> reference;
  // Per rank. A name seen twice with different sizes is left out (ambiguous).
  std::map<int32_t, OpBytes> op_bytes;
  // Transports with a non-zero size or time, summed over ops.
  std::map<LinkKey, LinkSum> links;
};

// Odd values met in lenient mode: a number written as a string is coerced
// ("1.5"), anything else that is not a number (other strings, NaN,
// Infinity, booleans, objects) is skipped.
struct LenientStats {
  int64_t coerced = 0, skipped = 0;
};

// `rank` >= 0: a per-rank file; -1: a cluster file whose records are keyed by
// rank id. Throws InputError naming the file and byte for malformed JSON;
// also for a non-number where a number belongs unless `lenient` is given,
// which then counts them.
CommunicationFigures ReadCommunicationJson(std::string_view json, const std::string& file,
                                           int32_t rank, LenientStats* lenient = nullptr);

// Sets CommRecord::bytes of the collective / p2p device ops of `rank` whose
// name is in `op_bytes` (and whose bytes are still 0). Adds the stats
// read.communication_json.{ops_matched,ops_unmatched}. Returns ops matched.
int64_t FillCommBytes(const OpBytes& op_bytes, Rank* rank);

}  // namespace moetrace
