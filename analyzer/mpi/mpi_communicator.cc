// The MPI Communicator (MPI_COMM_WORLD). Compiled only with MOETRACE_MPI.
#ifdef MOETRACE_HAVE_MPI
// The C API only: no C++ bindings (deprecated; they need libmpi_cxx).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <thread>

#include "analyzer/mpi/communicator.h"

namespace moetrace {
namespace {

void Check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

int Count(size_t n) {
  // MPI counts are int: a part is compact per-rank summaries, far below this.
  if (n > static_cast<size_t>(INT_MAX)) throw std::runtime_error("MPI: message over 2 GiB");
  return static_cast<int>(n);
}

// Completes `request` without spinning on a core: a process waits here while
// another analyses, merges or renders (a blocking MPI collective spins all
// that time: the waiting process of `mpirun -n 2 report` took as much CPU as
// process 0). Polls, sleeping 1 ms between polls once a quick spin fails.
void Wait(MPI_Request* request) {
  for (int polls = 0;; ++polls) {
    int done = 0;
    Check(MPI_Test(request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    if (polls > 1000) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

class Mpi : public Communicator {
 public:
  Mpi() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) Check(MPI_Init(nullptr, nullptr), "MPI_Init");
    // Errors come back as codes (thrown above), not as an abort of the job.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~Mpi() override {
    // What crossed the network from this process (bench/README.md).
    if (std::getenv("MOETRACE_MPI_STATS")) {
      std::fprintf(stderr, "moetrace: process %d of %d: sent %llu bytes, received %llu bytes\n",
                   rank_, size_, sent_, received_);
    }
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  [[noreturn]] void Abort(int code) override {
    std::fflush(nullptr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; if it did
  }

  std::vector<std::string> Gather(const std::string& bytes) override {
    int n = Count(bytes.size());
    std::vector<int> counts(rank_ == 0 ? size_ : 0), displs(counts.size());
    MPI_Request request;
    Check(MPI_Igather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD, &request),
          "MPI_Igather");
    Wait(&request);
    std::string all;
    if (rank_ == 0) {
      size_t total = 0;
      for (int p = 0; p < size_; ++p) displs[p] = Count(total), total += counts[p];
      all.resize(total);
    }
    Check(MPI_Igatherv(bytes.data(), n, MPI_BYTE, all.data(), counts.data(), displs.data(),
                       MPI_BYTE, 0, MPI_COMM_WORLD, &request),
          "MPI_Igatherv");
    Wait(&request);
    sent_ += sizeof n + bytes.size();
    if (rank_ == 0) received_ += all.size() + sizeof n * static_cast<size_t>(size_);
    std::vector<std::string> out;
    for (int p = 0; p < static_cast<int>(counts.size()); ++p) {
      out.push_back(all.substr(static_cast<size_t>(displs[p]), static_cast<size_t>(counts[p])));
    }
    return out;
  }

  // Point to point, one sender at a time: process 0 posts the receive of
  // process p's part only once p - 1's has been handed on, so it holds one
  // part besides what it merged (MPI_Igatherv needs a buffer for every part
  // at once: 1.66 GB at process 0 against 543 MB alone on the 718B trace).
  // The others' sends wait for that receive: Open MPI sends a large message
  // only once it is matched (rendezvous), so nothing piles up at process 0.
  void GatherEach(std::string bytes,
                  const std::function<void(int, std::string)>& take) override {
    constexpr int kSizeTag = 7301, kBytesTag = 7302;
    if (rank_ != 0) {
      unsigned long long n = bytes.size();
      Count(bytes.size());
      MPI_Request requests[2];
      Check(MPI_Isend(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, kSizeTag, MPI_COMM_WORLD, &requests[0]),
            "MPI_Isend");
      Check(MPI_Isend(bytes.data(), Count(bytes.size()), MPI_BYTE, 0, kBytesTag, MPI_COMM_WORLD,
                      &requests[1]),
            "MPI_Isend");
      Wait(&requests[0]);
      Wait(&requests[1]);
      sent_ += sizeof n + bytes.size();
      return;
    }
    sent_ += sizeof(unsigned long long) + bytes.size();  // as Gather counts its own part
    received_ += sizeof(unsigned long long) + bytes.size();
    take(0, std::move(bytes));
    for (int p = 1; p < size_; ++p) {
      unsigned long long n = 0;
      MPI_Request request;
      Check(MPI_Irecv(&n, 1, MPI_UNSIGNED_LONG_LONG, p, kSizeTag, MPI_COMM_WORLD, &request),
            "MPI_Irecv");
      Wait(&request);
      std::string part(Count(n), '\0');
      Check(MPI_Irecv(part.data(), Count(n), MPI_BYTE, p, kBytesTag, MPI_COMM_WORLD, &request),
            "MPI_Irecv");
      Wait(&request);
      received_ += sizeof n + part.size();
      take(p, std::move(part));
    }
  }

  void Broadcast(std::string* bytes) override {
    // A 64-bit size, then pieces of at most 1 GiB: generate's pass-1 results
    // grow with the steps (92 MB per 718B step) past an int count.
    uint64_t n = rank_ == 0 ? bytes->size() : 0;
    Check(MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
    bytes->resize(static_cast<size_t>(n));
    constexpr uint64_t kPiece = uint64_t(1) << 30;
    for (uint64_t at = 0; at < n; at += kPiece) {
      const int len = static_cast<int>(std::min(kPiece, n - at));
      Check(MPI_Bcast(bytes->data() + at, len, MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast");
    }
    (rank_ == 0 ? sent_ : received_) += sizeof n + bytes->size();
  }

  int AllReduceMax(int value) override {
    // The agreement every process reaches before the next step: where the
    // others wait for process 0's report, gate or replays (Wait: no spinning).
    int out = value;
    MPI_Request request;
    Check(MPI_Iallreduce(&value, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &request),
          "MPI_Iallreduce");
    Wait(&request);
    sent_ += sizeof value;
    received_ += sizeof out;
    return out;
  }

 private:
  int rank_ = 0, size_ = 1;
  unsigned long long sent_ = 0, received_ = 0;  // payload, as if sent point to point
};

}  // namespace

std::unique_ptr<Communicator> MpiWorld() { return std::make_unique<Mpi>(); }

}  // namespace moetrace
#endif  // MOETRACE_HAVE_MPI
