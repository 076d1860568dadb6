#include "analyzer/partial_io.h"

#include <stdexcept>

#include "analyzer/proto/partial.pb.h"

namespace moetrace {
namespace {

constexpr double hta::Temporal::*kTemporal[] = {
    &hta::Temporal::kernel_span_us, &hta::Temporal::idle_us,     &hta::Temporal::compute_us,
    &hta::Temporal::non_compute_us, &hta::Temporal::idle_pct,    &hta::Temporal::compute_pct,
    &hta::Temporal::non_compute_pct};
constexpr int kTemporalFields = sizeof kTemporal / sizeof kTemporal[0];
static_assert(sizeof(hta::Temporal) == kTemporalFields * sizeof(double),
              "a Temporal field is missing from the serialized figures");

}  // namespace

std::string SerializePartial(PartialAnalysis* part_ptr) {
  PartialAnalysis& part = *part_ptr;
  partial::ProcessPart p;
  p.set_cluster(part.cluster.Serialize());
  for (auto& [index, r] : part.ranks) {
    auto* o = p.add_ranks();
    o->set_index(index);
    o->mutable_analysis()->Swap(&r);  // both on the heap: a swap of pointers
  }
  part.ranks.clear();
  for (const auto& [index, s] : part.skipped) {
    auto* o = p.add_skipped();
    o->set_index(index);
    if (s.has_rank()) o->set_rank(s.rank());
    o->set_file(s.file());
    o->set_error(s.error());
  }
  for (const LabeledValue& l : part.reference) {
    auto* o = p.add_reference();
    o->set_rank(l.rank);
    o->set_step(l.step);
    o->set_key(l.key);
    o->set_value(l.value);
  }
  for (const rl::CardPhases& c : part.rl) {
    partial::RlCard* o = p.add_rl();
    o->set_rank(c.rank);
    o->set_ignored_markers(c.ignored_markers);
    for (const rl::PhaseRange& r : c.ranges) {
      o->add_iteration(r.iteration);
      o->add_task(static_cast<uint32_t>(r.task));
      o->add_role(static_cast<uint32_t>(r.role));
      o->add_start(r.start);
      o->add_end(r.end);
      o->add_tokens(r.tokens);
    }
  }
  return p.SerializeAsString();
}

void MergePartial(const std::string& bytes, PartialAnalysis* into) {
  partial::ProcessPart p;
  if (!p.ParseFromString(bytes)) throw std::runtime_error("a process's analysis does not parse");
  into->cluster.Merge(p.cluster());
  for (auto& o : *p.mutable_ranks()) {
    into->ranks.emplace_back(o.index(), analysis::RankAnalysis());
    into->ranks.back().second.Swap(o.mutable_analysis());
  }
  for (const auto& o : p.skipped()) {
    analysis::SkippedRank s;
    if (o.has_rank()) s.set_rank(o.rank());
    s.set_file(o.file());
    s.set_error(o.error());
    into->skipped.emplace_back(o.index(), std::move(s));
  }
  for (const auto& o : p.reference()) {
    into->reference.push_back({o.rank(), o.step(), o.key(), o.value()});
  }
  for (const partial::RlCard& o : p.rl()) {
    const int n = o.iteration_size();
    if (o.task_size() != n || o.role_size() != n || o.start_size() != n || o.end_size() != n ||
        o.tokens_size() != n) {
      throw std::runtime_error("a process's RL phases have columns of different lengths");
    }
    rl::CardPhases c;
    c.rank = o.rank();
    c.ignored_markers = o.ignored_markers();
    for (int k = 0; k < n; ++k) {
      if (o.task(k) >= rl::kTaskCount || o.role(k) >= rl::kRoleCount) {
        throw std::runtime_error("a process's RL phases name an unknown task or role");
      }
      c.ranges.push_back({o.iteration(k), static_cast<rl::Task>(o.task(k)),
                          static_cast<rl::Role>(o.role(k)), o.start(k), o.end(k), o.tokens(k)});
    }
    into->rl.push_back(std::move(c));
  }
}

void EncodeHtaRank(const hta::HtaRank& r, partial::HtaRank* o) {
  o->set_rank(r.rank);
  o->set_file(r.file);
  o->set_has_temporal(r.temporal.has_value());
  if (r.temporal) {
    for (auto f : kTemporal) o->add_temporal((*r.temporal).*f);
  }
  o->set_comm_comp_overlap_pct(r.comm_comp_overlap_pct);
  o->set_has_idle(r.idle_by_stream.has_value());
  if (r.idle_by_stream) {
    for (const auto& [stream, s] : *r.idle_by_stream) {
      auto* i = o->add_idle();
      i->set_stream(stream);
      if (s.host_wait_us) i->set_host_wait_us(*s.host_wait_us);
      if (s.kernel_wait_us) i->set_kernel_wait_us(*s.kernel_wait_us);
      if (s.other_us) i->set_other_us(*s.other_us);
    }
  }
  o->set_launch_count(r.launch.count);
  if (r.launch.launch_delay_mean_us) o->set_launch_delay_mean_us(*r.launch.launch_delay_mean_us);
  if (r.launch.launch_delay_p50_us) o->set_launch_delay_p50_us(*r.launch.launch_delay_p50_us);
  o->set_temporal_error(r.temporal_error);
  o->set_idle_error(r.idle_error);
}

hta::HtaRank DecodeHtaRank(const partial::HtaRank& o) {
  hta::HtaRank r;
  r.rank = o.rank();
  r.file = o.file();
  if (o.has_temporal() && o.temporal_size() == kTemporalFields) {
    hta::Temporal t;
    for (int i = 0; i < kTemporalFields; ++i) t.*kTemporal[i] = o.temporal(i);
    r.temporal = t;
  }
  r.comm_comp_overlap_pct = o.comm_comp_overlap_pct();
  if (o.has_idle()) {
    std::map<int64_t, hta::IdleStream>& m = r.idle_by_stream.emplace();
    for (const auto& i : o.idle()) {
      hta::IdleStream& s = m[i.stream()];
      if (i.has_host_wait_us()) s.host_wait_us = i.host_wait_us();
      if (i.has_kernel_wait_us()) s.kernel_wait_us = i.kernel_wait_us();
      if (i.has_other_us()) s.other_us = i.other_us();
    }
  }
  r.launch.count = o.launch_count();
  if (o.has_launch_delay_mean_us()) r.launch.launch_delay_mean_us = o.launch_delay_mean_us();
  if (o.has_launch_delay_p50_us()) r.launch.launch_delay_p50_us = o.launch_delay_p50_us();
  r.temporal_error = o.temporal_error();
  r.idle_error = o.idle_error();
  return r;
}

}  // namespace moetrace
