// `analyze` over several processes (mpirun): each process opens the inputs
// (metadata and index only), analyses the ranks it is given -- balanced by
// their bytes -- and sends compact per-rank summaries to process 0, which
// merges them into the analysis one process would have made, byte for
// byte. No process reads another's ranks.
#pragma once

#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "analyzer/mpi/communicator.h"
#include "analyzer/proto/analysis.pb.h"

namespace moetrace {

// Thrown on the processes other than 0 when any process failed: process 0
// throws the failure itself (InputError), the others exit quietly.
struct PeerFailed {};

// Every process calls it (collective). Process 0 returns the analysis; the
// others an empty one. On any failure in any process, every process throws
// (see PeerFailed), with the error of the lowest failing process.
analysis::Analysis AnalyzeDistributed(const std::vector<std::string>& inputs,
                                      const AnalyzeOptions& options, Communicator& comm);

// Which process analyses each of `bytes.size()` ranks: largest first to the
// least loaded (ties: lower index, lower process). Same on every process.
std::vector<int> AssignRanks(const std::vector<uint64_t>& bytes, int processes);

// Collective: whether any process has an `error` (non-empty); if so process
// 0 throws InputError with the lowest process's error, the others PeerFailed.
void AgreeOnError(Communicator& comm, const std::string& error);

}  // namespace moetrace
