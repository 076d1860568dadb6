// A command under mpirun (or alone): analyze, report, gate, advise, replay and
// generate run their body through RunOnProcesses. The body makes the
// collective calls (AnalyzeDistributed, AnalyzeShares, OnEveryProcess,
// OnFirstProcess: analyzer/distributed.h), so a failure in any process
// reaches every process; process 0 alone writes the outputs.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "analyzer/mpi/communicator.h"

namespace moetrace::cli {

// Runs `body` on this process with the world's communicator. Alone: `body`
// as is (its exceptions go to main). Under mpirun: the exit code is body's
// on process 0 and 0 on the others; a failure agreed on (AgreedInputError
// on process 0, PeerFailed elsewhere) ends every process with exit 2, process
// 0 printing the one message. Any other failure (an InputError one process
// met alone, between agreements) is printed by its process, which aborts
// the job: every process ends, exit 2, nothing waits for a collective.
int RunOnProcesses(const std::function<int(Communicator&)>& body);

// A command that is not distributed (convert, info, presets): process 0 runs
// it whole, the others wait (a failure ends them with exit 2 too), so that
// mpirun never has every process write the same file. Alone: `run`.
int RunOnFirstProcess(const std::function<int()>& run);

// The "analyzing ranks: i/n" line, on process 0's terminal only (else empty);
// `label` replaces "analyzing ranks" (diff: which side).
std::function<void(size_t, size_t)> AnalyzeProgress(const Communicator& comm,
                                                    std::string label = "analyzing ranks");

}  // namespace moetrace::cli
