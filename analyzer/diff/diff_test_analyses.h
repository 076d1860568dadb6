// Two hand-built analyses for the diff and gate tests (every figure chosen
// so that the expected deltas can be worked out by hand; see diff_test.cc).
// A: ranks 0 and 1, 2 steps each; B: ranks 1 and 2. Per rank and step (the
// cluster sums / 4 rank-steps) A is compute 6, comm exposed 2, host-bound
// dispatch 0.5, sync 0.5, other free 1 = 10 ms; B the same but dispatch
// 2.5 ms = 12 ms. Operators: Permute's device time doubles (2 -> 4 ms per
// rank and step), OldOp (1 ms) is only in A, NewOp (0.5 ms) only in B, and
// Permute's host-bound dispatch goes 0.25 -> 1.75 ms.
#pragma once

#include <cstdint>
#include <string>

#include "analyzer/proto/analysis.pb.h"

namespace moetrace::testing {

inline void SetBreakdown(analysis::Breakdown* b, double scale, int64_t dispatch_ms_x2) {
  const int64_t ms = 1'000'000;
  // dispatch_ms_x2: dispatch in half-milliseconds per rank and step.
  const int64_t dispatch = dispatch_ms_x2 * ms / 2;
  b->set_compute_ns(int64_t(6 * ms * scale));
  b->set_comm_exposed_ns(int64_t(2 * ms * scale));
  b->set_comm_ns(int64_t(3 * ms * scale));
  b->set_comm_overlapped_ns(int64_t(1 * ms * scale));
  b->set_copy_exposed_ns(0);
  b->set_host_bound_dispatch_ns(int64_t(dispatch * scale));
  b->set_host_bound_sync_ns(int64_t(ms / 2 * scale));
  b->set_host_bound_ns(b->host_bound_dispatch_ns() + b->host_bound_sync_ns());
  b->set_free_ns(b->host_bound_ns() + int64_t(1 * ms * scale));
  b->set_span_ns(b->compute_ns() + b->comm_exposed_ns() + b->free_ns());
}

inline void AddRank(analysis::Analysis* a, int32_t id, int64_t dispatch_ms_x2) {
  analysis::RankAnalysis* r = a->add_ranks();
  r->set_rank(id);
  SetBreakdown(r->mutable_breakdown(), 2, dispatch_ms_x2);
  for (int s = 0; s < 2; ++s) {
    analysis::Breakdown* step = r->add_steps();
    SetBreakdown(step, 1, dispatch_ms_x2);
    step->set_step(s);
  }
}

inline void AddOp(analysis::Operators* o, const std::string& name, const std::string& cls,
                  int64_t count, int64_t total_ms) {
  analysis::OpStat* s = o->add_top();
  s->set_name(name);
  s->set_op_class(cls);
  s->set_count(count);
  s->set_total_ns(total_ms * 1'000'000);
}

inline void AddClass(analysis::Operators* o, const std::string& cls, int64_t count, int64_t total_ms) {
  analysis::OpClassTime* c = o->add_classes();
  c->set_op_class(cls);
  c->set_count(count);
  c->set_total_ns(total_ms * 1'000'000);
}

inline void AddDispatch(analysis::Operators* o, const std::string& name, int64_t count,
                        int64_t host_ms, int64_t host_bound_ms) {
  analysis::DispatchStat* d = o->add_dispatch();
  d->set_name(name);
  d->set_count(count);
  d->set_host_ns(host_ms * 1'000'000);
  d->set_host_bound_ns(host_bound_ms * 1'000'000);
}

// slow = false: A; true: B.
inline analysis::Analysis DiffSample(bool slow) {
  analysis::Analysis a;
  a.set_source("tracegen");
  const int64_t dispatch = slow ? 5 : 1;  // half-ms: 2.5 or 0.5 ms
  AddRank(&a, slow ? 1 : 0, dispatch);
  AddRank(&a, slow ? 2 : 1, dispatch);
  analysis::Cluster* c = a.mutable_cluster();
  SetBreakdown(c->mutable_breakdown(), 4, dispatch);
  c->set_rank_count(2);
  c->set_steps(2);
  c->mutable_step_time_ns()->set_min(slow ? 12'000'000 : 10'000'000);
  c->mutable_step_time_ns()->set_median(slow ? 12'000'000 : 10'000'000);
  c->mutable_step_time_ns()->set_max(slow ? 12'000'000 : 10'000'000);
  c->mutable_ratios()->set_host_bound(slow ? 3.0 / 12 : 1.0 / 10);
  if (!slow) c->set_mfu(0.4);
  analysis::Operators* o = c->mutable_operators();
  o->set_steps(2);
  AddClass(o, "flash_attention", 8, 16);
  AddClass(o, "vector", slow ? 80 : 40, slow ? 16 : 8);
  AddClass(o, "other", 4, slow ? 2 : 4);
  AddOp(o, "FlashAttentionScore", "flash_attention", 8, 16);
  o->mutable_top(0)->set_shape("[8,4096,128]");
  AddOp(o, "Permute", "vector", slow ? 80 : 40, slow ? 16 : 8);
  AddOp(o, slow ? "NewOp" : "OldOp", "other", 4, slow ? 2 : 4);
  AddDispatch(o, "Permute", slow ? 80 : 40, slow ? 12 : 4, slow ? 7 : 1);
  AddDispatch(o, "MatMul", 10, 2, 1);
  o->set_distinct_names(3);
  return a;
}

}  // namespace moetrace::testing
