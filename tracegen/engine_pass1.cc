// Pass 1 (EngineImpl::Simulate): every rank simulated together, round robin
// until blocked on a collective or a receive, keeping only the cross-rank
// results. Pipeline stages are spread over threads (stage s on thread
// s % threads): a stage's collectives are touched by its thread alone, and
// only p2p transfers, the world all-reduce and the embedding group's
// all-reduce (stage 0 and the MTP's stage) go through SharedCross. A
// thread whose ranks are all blocked waits for another to change it. The
// results do not depend on the order ranks run in (an arrival maximum, a
// send's end), so neither on the thread count.
#include <algorithm>
#include <exception>
#include <stdexcept>
#include <thread>

#include "tracegen/engine_internal.h"

namespace moetrace::tracegen {

CrossEntry& StageCross::At(const Op& op) {
  std::vector<CrossEntry>& v = groups[op.group];
  if (v.size() <= size_t(op.seq)) v.resize(size_t(op.seq) + 1);
  return v[size_t(op.seq)];
}

const CrossEntry* StageCross::Find(const Op& op) const {
  auto it = groups.find(op.group);
  if (it == groups.end() || size_t(op.seq) >= it->second.size()) return nullptr;
  return &it->second[size_t(op.seq)];
}

void EngineImpl::SimulateStages(int thread, std::vector<RankSim>& sims, SharedCross& sh,
                                RoutingCache& routing) {
  const int per_stage = shape.dp * shape.tp;
  std::vector<int> mine;
  const int threads = int(sh.blocked_at.size());
  for (int st = thread; st < shape.pp; st += threads)
    for (int i = st * per_stage; i < (st + 1) * per_stage; ++i) mine.push_back(i);
  for (int i : mine) {
    sims[i].rank = i;
    sims[i].stage = shape.Stage(i);
    sims[i].cross = &stage_cross_[sims[i].stage];
    sims[i].shared = &sh;
    sims[i].routing = &routing;
  }
  size_t remaining = mine.size();
  while (remaining > 0) {
    uint64_t seen;
    {
      std::lock_guard<std::mutex> lock(sh.mu);
      if (sh.stop) return;
      seen = sh.gen;
    }
    bool any = false;
    for (int& i : mine) {
      if (i < 0) continue;
      any |= Advance(sims[i], false);
      if (sims[i].phase == 4) {
        rank_end[i] = std::max(sims[i].t_py, sims[i].last_dev_end);
        sims[i].block = Block();  // done: free its state
        sims[i].acts.clear();
        i = -1;
        --remaining;
      }
    }
    std::unique_lock<std::mutex> lock(sh.mu);
    if (any || remaining == 0) {
      if (sh.gen != seen && sh.AnyWaiting()) sh.cv.notify_all();  // this round may unblock them
      continue;
    }
    if (sh.gen != seen || sh.stop) continue;  // another thread moved meanwhile
    if (sh.OthersStuck(thread)) {
      sh.stop = true;  // nobody can move: every thread is blocked or done
      sh.cv.notify_all();
      throw std::logic_error("tracegen: simulation deadlock (schedule bug)");
    }
    sh.blocked_at[thread] = seen;
    const int finished = sh.finished;
    sh.cv.wait(lock, [&] { return sh.gen != seen || sh.stop || sh.finished != finished; });
    sh.blocked_at[thread] = SharedCross::kRunning;
  }
  std::lock_guard<std::mutex> lock(sh.mu);
  sh.blocked_at[thread] = SharedCross::kDone;
  ++sh.finished;
  sh.cv.notify_all();  // those waiting look again, and find a deadlock if nothing moved
}

void EngineImpl::Simulate(int threads) {
  if (simulated) return;
  threads = std::clamp(threads, 1, shape.pp);
  stage_cross_.assign(shape.pp, StageCross());
  shared_cross_.clear();
  std::vector<RankSim> sims(shape.world);
  rank_end.assign(shape.world, kBaseTime);
  SharedCross sh;
  sh.map = &shared_cross_;
  sh.blocked_at.assign(threads, SharedCross::kRunning);
  std::vector<RoutingCache> routing(threads);  // EP groups stay within a stage
  std::vector<std::exception_ptr> errors(threads);
  auto run = [&](int t) {
    try {
      SimulateStages(t, sims, sh, routing[t]);
    } catch (...) {
      errors[t] = std::current_exception();
      std::lock_guard<std::mutex> lock(sh.mu);
      sh.stop = true;
      sh.cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  try {
    for (int t = 1; t < threads; ++t) pool.emplace_back(run, t);
  } catch (...) {  // no thread: stop those started
    {
      std::lock_guard<std::mutex> lock(sh.mu);
      sh.stop = true;
      sh.cv.notify_all();
    }
    for (std::thread& t : pool) t.join();
    throw;
  }
  run(0);
  for (std::thread& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  simulated = true;
}

}  // namespace moetrace::tracegen
