// For tests: threads standing in for the processes of an mpirun job, each
// with a Communicator over shared memory (the same collectives, in the same
// order, as MPI's).
#pragma once

#include <algorithm>
#include <barrier>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "analyzer/mpi/communicator.h"

namespace moetrace {

class ThreadWorld {
 public:
  explicit ThreadWorld(int n) : n_(n), sync_(n), slots_(size_t(n)), ints_(size_t(n)) {}

  // Runs `process` on n threads, one Communicator each; returns when all end.
  // `process` must not throw (catch what a process would exit with).
  void Run(const std::function<void(Communicator&)>& process) {
    std::vector<std::thread> threads;
    for (int r = 0; r < n_; ++r) {
      threads.emplace_back([this, r, &process] {
        Comm comm(this, r);
        process(comm);
      });
    }
    for (auto& t : threads) t.join();
  }

 private:
  class Comm : public Communicator {
   public:
    Comm(ThreadWorld* w, int rank) : w_(w), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return w_->n_; }
    std::vector<std::string> Gather(const std::string& bytes) override {
      w_->slots_[size_t(rank_)] = bytes;
      w_->sync_.arrive_and_wait();
      std::vector<std::string> out;
      if (rank_ == 0) out = w_->slots_;
      w_->sync_.arrive_and_wait();
      return out;
    }
    void Broadcast(std::string* bytes) override {
      if (rank_ == 0) w_->slots_[0] = *bytes;
      w_->sync_.arrive_and_wait();
      if (rank_ != 0) *bytes = w_->slots_[0];
      w_->sync_.arrive_and_wait();
    }
    int AllReduceMax(int v) override {
      w_->ints_[size_t(rank_)] = v;
      w_->sync_.arrive_and_wait();
      int m = *std::max_element(w_->ints_.begin(), w_->ints_.end());
      w_->sync_.arrive_and_wait();
      return m;
    }

   private:
    ThreadWorld* w_;
    int rank_;
  };

  int n_;
  std::barrier<> sync_;
  std::vector<std::string> slots_;
  std::vector<int> ints_;
};

}  // namespace moetrace
