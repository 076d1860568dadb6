// `analyze` over several processes (mpirun): each process opens the inputs
// (metadata and index only), analyses the ranks it is given -- balanced by
// their bytes -- and sends compact per-rank summaries to process 0, which
// merges them into the analysis one process would have made, byte for
// byte. No process reads another's ranks.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "analyzer/analyze_files.h"
#include "analyzer/mpi/communicator.h"
#include "analyzer/proto/analysis.pb.h"
#include "formats/errors.h"

namespace moetrace {

// Thrown on the processes other than 0 when any process failed: process 0
// throws the failure itself (InputError), the others exit quietly.
struct PeerFailed {};
// What process 0 throws when the processes agreed on a failure
// (AgreeOnError): every process knows, so each can end in step. An
// InputError of any other kind escaped between two agreements: the others
// may wait in any collective (cli/processes.cc aborts the job then).
struct AgreedInputError : InputError {
  using InputError::InputError;
};

// Every process calls it (collective). Process 0 returns what AnalyzeFiles
// returns (the analysis, and the opened trace: `report` reads ranks back);
// the others an empty analysis and no trace. On any failure in any process,
// every process throws (see PeerFailed), with the error of the lowest
// failing process. One process: AnalyzeFiles itself.
AnalyzedFiles AnalyzeDistributed(const std::vector<std::string>& inputs,
                                 const AnalyzeOptions& options, Communicator& comm);

// The rank split of AnalyzeDistributed, on a `source` every process opened
// alike (collective): each process analyses the ranks AssignRanks gives it,
// process 0 merges the parts and returns Analyze(source, options) byte for
// byte, the others an empty analysis. `owner` (optional): the process of
// each rank. `ranks_done(failed)` runs on every process once its ranks are
// analysed, before the processes agree on failures. One process: Analyze.
analysis::Analysis AnalyzeShares(const TraceSource& source, const AnalyzeOptions& options,
                                 Communicator& comm, std::vector<int>* owner = nullptr,
                                 const std::function<void(bool failed)>& ranks_done = {});

// Which process analyses each of `bytes.size()` ranks: largest first to the
// least loaded (ties: lower index, lower process). Same on every process.
std::vector<int> AssignRanks(const std::vector<uint64_t>& bytes, int processes);

// Collective: whether any process has an `error` (non-empty); if so process
// 0 throws InputError with the lowest process's error, the others PeerFailed.
void AgreeOnError(Communicator& comm, const std::string& error);

// Collective: runs `f` on every process, then AgreeOnError on its failure
// (any exception, as its message). One process: `f` as is, throws as it does.
void OnEveryProcess(Communicator& comm, const std::function<void()>& f);
// The same with `f` run on process 0 only (writing the outputs).
void OnFirstProcess(Communicator& comm, const std::function<void()>& f);

}  // namespace moetrace
