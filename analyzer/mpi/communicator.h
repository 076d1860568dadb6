// The few collective operations a multi-process `analyze` needs (mpirun),
// behind a tiny interface: MPI when built with it (MOETRACE_MPI) and started
// by mpirun, else one process. Every call is collective: every process must
// make it, in the same order.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace moetrace {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Process 0 gets every process's `bytes`, in process order; others get {}.
  virtual std::vector<std::string> Gather(const std::string& bytes) = 0;
  // The same, but process 0 is handed each process's bytes in process order
  // as they arrive, its own first (`bytes` moved, not copied), and may drop
  // each before the next: it never holds every part at once. Others: `take`
  // is not called. By default, Gather then one call per part.
  virtual void GatherEach(std::string bytes,
                          const std::function<void(int process, std::string bytes)>& take);
  // Process 0's `*bytes` replaces every other's.
  virtual void Broadcast(std::string* bytes) = 0;
  // The largest `value` over all processes (agreeing on an error flag).
  virtual int AllReduceMax(int value) = 0;
  // Ends every process with exit `code` now, for a failure the processes did
  // not agree on (the others may wait in any collective: finalising would
  // hang). One process: exits.
  [[noreturn]] virtual void Abort(int code);
};

// One process: rank 0 of 1.
std::unique_ptr<Communicator> SingleProcess();
// MPI_COMM_WORLD when built with MPI and started by mpirun/srun (MPI is then
// initialised, and finalised when the last Communicator goes); otherwise
// SingleProcess().
std::unique_ptr<Communicator> WorldCommunicator();
// Whether the environment says this process was started by a launcher
// (mpirun, srun) as a process other than the first: such a process stays
// quiet when it fails before any Communicator exists (bad arguments).
bool IsSecondaryProcess();

}  // namespace moetrace
