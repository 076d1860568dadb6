#include "tracegen/ordered_run.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace moetrace::tracegen {

void RunOrdered(size_t n, int threads, size_t window,
                const std::function<void(int, size_t)>& produce,
                const std::function<void(size_t)>& consume) {
  if (threads <= 1 || n <= 1) {
    for (size_t i = 0; i < n; ++i) {
      produce(0, i);
      consume(i);
    }
    return;
  }
  window = std::max<size_t>(window, 1);
  std::mutex mu;
  std::condition_variable can_start, can_consume;
  size_t next = 0, consumed = 0;
  bool stop = false;
  std::vector<char> ready(window, 0);
  std::vector<std::exception_ptr> error(window);
  auto work = [&](int w) {
    while (true) {
      size_t i;
      {
        std::unique_lock<std::mutex> lock(mu);
        can_start.wait(lock, [&] { return stop || next >= n || next < consumed + window; });
        if (stop || next >= n) return;
        i = next++;
      }
      std::exception_ptr e;
      try {
        produce(w, i);
      } catch (...) {
        e = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu);
      // After a failure no job starts; those before it (all started) finish,
      // so the consumer reaches this one and rethrows it.
      if (e) stop = true;
      error[i % window] = e;
      ready[i % window] = 1;
      can_consume.notify_one();
    }
  };
  std::vector<std::thread> pool;
  auto join = [&] {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
    }
    can_start.notify_all();
    for (std::thread& t : pool) t.join();
  };
  try {
    pool.reserve(threads);
    for (int w = 0; w < threads; ++w) pool.emplace_back(work, w);
    for (size_t i = 0; i < n; ++i) {
      std::exception_ptr e;
      {
        std::unique_lock<std::mutex> lock(mu);
        can_consume.wait(lock, [&] { return ready[i % window] != 0; });
        e = error[i % window];
        error[i % window] = nullptr;
      }
      if (e) std::rethrow_exception(e);
      consume(i);
      {
        std::lock_guard<std::mutex> lock(mu);
        ready[i % window] = 0;  // the slot is free only once consumed
        ++consumed;
      }
      can_start.notify_all();
    }
  } catch (...) {
    join();
    throw;
  }
  join();
}

}  // namespace moetrace::tracegen
