#include "analyzer/metrics_proto.h"

#include <string>

namespace moetrace {
namespace {

double Ratio(int64_t num, int64_t den) {
  return den > 0 ? static_cast<double>(num) / static_cast<double>(den) : 0.0;
}

void FillClass(const ClassNs& c, analysis::CommClassStats* out) {
  out->set_total_ns(c.total);
  out->set_exposed_ns(c.exposed);
  out->set_unmasked_fraction(Ratio(c.exposed, c.total));
}

}  // namespace

void FillBreakdown(const BreakdownNs& b, analysis::Breakdown* out) {
  out->set_span_ns(b.span);
  out->set_compute_ns(b.compute);
  out->set_comm_ns(b.comm);
  out->set_comm_overlapped_ns(b.comm_overlapped);
  out->set_comm_exposed_ns(b.comm_exposed);
  out->set_copy_exposed_ns(b.copy_exposed);
  out->set_free_ns(b.free);
  out->set_host_bound_ns(b.host_bound);
  out->set_host_bound_sync_ns(b.host_bound_sync);
  out->set_host_bound_dispatch_ns(b.host_bound_dispatch);
  out->set_bubble_ns(b.bubble);
}

void FillRatios(const BreakdownNs& b, analysis::Ratios* out) {
  out->set_host_bound(Ratio(b.host_bound, b.span));
  out->set_unmasked_comm(Ratio(b.comm_exposed, b.comm));
  out->set_free(Ratio(b.free, b.span));
  out->set_bubble(Ratio(b.bubble, b.span));
}

void FillCommByClass(const ClassNs cls[kCommClassCount], analysis::CommByClass* out) {
  FillClass(cls[static_cast<int>(CommClass::kEP)], out->mutable_ep());
  FillClass(cls[static_cast<int>(CommClass::kTP)], out->mutable_tp());
  FillClass(cls[static_cast<int>(CommClass::kPP)], out->mutable_pp());
  FillClass(cls[static_cast<int>(CommClass::kDP)], out->mutable_dp());
  FillClass(cls[static_cast<int>(CommClass::kOther)], out->mutable_other());
}

void FillRank(const RankMetrics& m, uint64_t capacity_bytes, analysis::RankAnalysis* out) {
  out->set_rank(m.rank);
  out->set_event_count(m.event_count);
  FillBreakdown(m.total, out->mutable_breakdown());
  size_t experts = 0;
  for (const StepNs& s : m.steps) {
    analysis::Breakdown* b = out->add_steps();
    FillBreakdown(s.b, b);
    b->set_step(s.step);
    b->set_start_ns(s.start);
    FillCommByClass(s.cls, b->mutable_comm_by_class());
    // Both lists ascend by step.
    while (experts < m.expert_steps.size() && m.expert_steps[experts].step < s.step) ++experts;
    if (experts < m.expert_steps.size() && m.expert_steps[experts].step == s.step) {
      b->mutable_expert_imbalance()->set_max_vio(m.expert_steps[experts].max_vio);
      b->mutable_expert_imbalance()->set_ep_max_vio(m.expert_steps[experts].ep_max_vio);
    }
  }
  if (m.has_experts) {
    out->mutable_expert_imbalance()->set_max_vio(m.experts.max_vio);
    out->mutable_expert_imbalance()->set_ep_max_vio(m.experts.ep_max_vio);
  }
  // Always filled; Analyze() keeps it only for Ascend sources.
  analysis::AscendOverlap* ov = out->mutable_ascend()->mutable_overlap_analysis();
  ov->set_computing_ns(m.overlap.computing);
  ov->set_communication_not_overlapped_ns(m.overlap.comm_not_overlapped);
  ov->set_free_ns(m.overlap.free);
  ov->set_computing_segments(m.overlap.computing_segments);
  ov->set_free_segments(m.overlap.free_segments);
  FillRatios(m.total, out->mutable_ratios());
  FillCommByClass(m.cls, out->mutable_comm_by_class());
  analysis::Launch* l = out->mutable_launch();
  l->set_count(m.launch_count);
  l->set_delay_p50_ns(m.delay_p50);
  l->set_delay_p90_ns(m.delay_p90);
  l->set_delay_p99_ns(m.delay_p99);
  l->set_host_wait_share(Ratio(m.ops_with_host_wait, m.device_ops));
  const RankMemory& mem = m.memory;
  if (mem.peak_allocated || mem.peak_reserved || capacity_bytes > 0) {
    analysis::Memory* o = out->mutable_memory();
    if (mem.peak_allocated) o->set_peak_allocated_bytes(*mem.peak_allocated);
    if (mem.peak_reserved) o->set_peak_reserved_bytes(*mem.peak_reserved);
    if (mem.peak_time) o->set_peak_time_ns(*mem.peak_time);
    if (capacity_bytes > 0) {
      o->set_capacity_bytes(static_cast<int64_t>(capacity_bytes));
      // Headroom against the reserved peak (what the allocator holds), or
      // the allocated peak when reserved is not recorded.
      if (mem.peak_reserved || mem.peak_allocated) {
        int64_t peak = mem.peak_reserved ? *mem.peak_reserved : *mem.peak_allocated;
        o->set_headroom_bytes(static_cast<int64_t>(capacity_bytes) - peak);
      }
    }
    for (const auto& [kind, bytes] : mem.at_peak) {
      (*o->mutable_at_peak())[std::string(CounterKindName(kind))] = bytes;
    }
  }
}

}  // namespace moetrace
