#include "analyzer/mpi/communicator.h"

#include <cstdio>
#include <cstdlib>

namespace moetrace {

void Communicator::GatherEach(std::string bytes,
                              const std::function<void(int, std::string)>& take) {
  std::vector<std::string> parts = Gather(bytes);
  bytes.clear();
  bytes.shrink_to_fit();
  for (size_t p = 0; p < parts.size(); ++p) take(static_cast<int>(p), std::move(parts[p]));
}

void Communicator::Abort(int code) {
  std::fflush(nullptr);
  std::_Exit(code);
}

namespace {

class Single : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<std::string> Gather(const std::string& bytes) override { return {bytes}; }
  void Broadcast(std::string*) override {}
  int AllReduceMax(int value) override { return value; }
};

// The launchers' rank variables: Open MPI, PMIx (srun), MPICH/Hydra, Slurm.
const char* LauncherRank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* s = std::getenv(v)) return s;
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<Communicator> SingleProcess() { return std::make_unique<Single>(); }

#ifdef MOETRACE_HAVE_MPI
std::unique_ptr<Communicator> MpiWorld();  // mpi_communicator.cc
#endif

std::unique_ptr<Communicator> WorldCommunicator() {
#ifdef MOETRACE_HAVE_MPI
  // Not started by a launcher: no MPI_Init (it would start a singleton
  // runtime for nothing).
  if (LauncherRank() != nullptr) return MpiWorld();
#endif
  return SingleProcess();
}

bool IsSecondaryProcess() {
  const char* r = LauncherRank();
  return r != nullptr && std::atoi(r) != 0;
}

}  // namespace moetrace
