#include "cli/processes.h"

#include <fmt/core.h>
#include <unistd.h>

#include <exception>
#include <memory>
#include <string>

#include "analyzer/distributed.h"
#include "formats/errors.h"

namespace moetrace::cli {

int RunOnProcesses(const std::function<int(Communicator&)>& body) {
  // Under mpirun: MPI until this returns (or throws); otherwise one process.
  std::unique_ptr<Communicator> comm = WorldCommunicator();
  if (comm->size() == 1) return body(*comm);
  // mpirun ends the whole job as soon as one process exits non-zero: process
  // 0 reports the failure, then every process meets once more before any
  // exits (each failed the same agreement, so each gets here).
  auto fail = [&](const std::string& message) {
    if (comm->rank() == 0) fmt::print(stderr, "moetrace: error: {}\n", message);
    comm->AllReduceMax(0);
    return 2;
  };
  int rc = 0;
  try {
    rc = body(*comm);
  } catch (const AgreedInputError& e) {
    return fail(e.what());
  } catch (const PeerFailed&) {
    return fail("");
  } catch (const InputError& e) {
    // Bad input met by this process alone, between two agreements: the
    // others wait in a collective this process will not make (meeting them
    // in fail()'s would let them go on to the next one, and hang there).
    // The message, from whichever process it is, then the job is aborted:
    // mpirun ends every process, with exit 2.
    fmt::print(stderr, "moetrace: error: {}\n", e.what());
    comm->Abort(2);
  } catch (const std::exception& e) {
    // Not a failure the processes met on (out of memory while merging, an
    // MPI error): the others may be in any collective, so the job is
    // aborted -- mpirun ends them all with this code -- not finalised.
    fmt::print(stderr, "moetrace: error: process {}: {}\n", comm->rank(), e.what());
    comm->Abort(2);
  }
  // The others exit 0 (quietly): process 0's code is mpirun's.
  return comm->rank() == 0 ? rc : 0;
}

int RunOnFirstProcess(const std::function<int()>& run) {
  return RunOnProcesses([&](Communicator& comm) {
    int rc = 0;
    OnFirstProcess(comm, [&] { rc = run(); });
    return rc;
  });
}

std::function<void(size_t, size_t)> AnalyzeProgress(const Communicator& comm,
                                                    std::string label) {
  if (comm.rank() != 0 || !isatty(STDERR_FILENO)) return {};
  return [label = std::move(label)](size_t done, size_t total) {
    fmt::print(stderr, "\r{}: {}/{}", label, done, total);
    if (done == total) fmt::print(stderr, "\r\033[K");
  };
}

}  // namespace moetrace::cli
