// All-to-all algorithm flat -> hierarchical (ASCEND.md): re-costs every
// matched EP all-to-all whose group spans nodes with the two-level
// algorithm, from the per-member send splits of the trace:
//   flat: (n-1)*a_inter + max over members of max(intra bytes / B_intra,
//         inter bytes / B_inter) (send or receive, whichever is larger);
//   hierarchical: (q-1)*a_inter + max_i (inter-node bytes after
//         de-duplication) / B_inter + (m-1)*a_intra + max_j (received bytes
//         x (m-1)/m) / B_intra, with q nodes of m members; a token goes once
//         to each node holding any of its top-k experts: member i's bytes to
//         node a are (S_i/k)(1 - (1 - p_ia)^k), p_ia its share of slots on a.
// The new transfer is the recorded one x hierarchical / flat, so the
// calibration's errors cancel. Alpha and bandwidth come from the hardware
// calibration of metadata.device; without it from the op's own measured
// bandwidth (alpha 0) with ASCEND.md's HCCS/RoCE ratio (392/25 GB/s).
// Groups inside one node do not change.
#pragma once

#include "analyzer/replay/event_edits.h"
#include "analyzer/replay/transforms/calibration.h"
#include "formats/trace.h"

namespace moetrace::replay {

// Returns the number of collectives re-costed. top_k 1 = no de-duplication.
int64_t HierarchicalAllToAll(const Trace& trace, const Calibration& cal, int top_k,
                             EventEdits* edits);

// The two costs of one all-to-all (ns) from send[i][j] bytes member i -> j
// and each member's node.
struct A2ACost {
  double flat = 0, hierarchical = 0;
};
A2ACost AllToAllCost(const std::vector<std::vector<double>>& send, const std::vector<int32_t>& node,
                     double alpha_intra, double alpha_inter, double bw_intra, double bw_inter, int top_k);

}  // namespace moetrace::replay
