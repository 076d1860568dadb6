// ClusterAccumulator::Serialize / Merge: another process's ranks folded in
// as if they had been Added here (mpirun, analyzer/distributed.h).
#include <algorithm>
#include <stdexcept>

#include "analyzer/cluster.h"
#include "analyzer/proto/partial.pb.h"

namespace moetrace {
namespace {

constexpr int64_t BreakdownNs::*kBreakdown[] = {
    &BreakdownNs::span,         &BreakdownNs::compute,         &BreakdownNs::comm,
    &BreakdownNs::comm_overlapped, &BreakdownNs::comm_exposed, &BreakdownNs::copy_exposed,
    &BreakdownNs::free,         &BreakdownNs::host_bound,      &BreakdownNs::host_bound_sync,
    &BreakdownNs::host_bound_dispatch, &BreakdownNs::bubble};
constexpr int kBreakdownFields = sizeof kBreakdown / sizeof kBreakdown[0];
static_assert(sizeof(BreakdownNs) == kBreakdownFields * sizeof(int64_t),
              "a BreakdownNs field is missing from the serialized state");

constexpr uint64_t kSequenceMask = (1ull << 40) - 1;

}  // namespace

std::string ClusterAccumulator::Serialize() const {
  partial::ClusterState st;
  for (auto f : kBreakdown) st.add_total(total_.*f);
  for (const ClassNs& c : cls_) {
    st.add_class_total(c.total);
    st.add_class_exposed(c.exposed);
  }
  for (const RankSummary& r : ranks_) {
    auto* o = st.add_ranks();
    o->set_rank(r.rank);
    o->set_steps(r.steps);
    o->set_step_mean(r.step_mean);
    o->set_compute(r.compute);
    o->set_comm(r.comm);
    o->set_free(r.free);
    o->set_peak_bytes(r.peak_bytes);
    o->set_has_peak(r.has_peak);
  }
  for (const Collective* p : SortedCollectives()) {
    const Collective& c = *p;
    const uint64_t key = c.key;
    auto* o = st.add_collectives();
    o->set_group(group_names_[key >> 40]);
    o->set_sequence(static_cast<int64_t>(key & kSequenceMask));
    o->set_members(c.members);
    o->set_group_size(c.group_size);
    o->set_sum_dur(c.sum_dur);
    o->set_min_dur(c.min_dur);
    o->set_last_rank(c.last_rank);
    o->set_name_rank(c.name_rank);
    o->set_name(names_[c.name]);
    o->set_layer(c.layer);
    o->set_step(c.step);
    o->set_a2a(c.a2a);
    o->set_combine(c.combine);
    o->set_load_sum(c.load_sum);
    o->set_load_max(c.load_max);
    o->set_load_n(c.load_n);
  }
  for (const auto& [key, agg] : routing_) {
    auto* o = st.add_routing();
    o->set_step(key.step);
    o->set_layer(key.layer);
    o->mutable_tokens()->Add(agg.tokens.begin(), agg.tokens.end());
    o->mutable_placement()->Add(agg.placement.begin(), agg.placement.end());
    o->set_ep_size(agg.ep_size);
    o->mutable_copy_expert()->Add(agg.copies.expert.begin(), agg.copies.expert.end());
    o->mutable_copy_ep_rank()->Add(agg.copies.ep_rank.begin(), agg.copies.ep_rank.end());
    o->mutable_copy_tokens()->Add(agg.copies.tokens.begin(), agg.copies.tokens.end());
  }
  for (const auto& [key, by_rank] : local_) {
    for (const auto& [rank, tokens] : by_rank) {
      auto* o = st.add_local();
      o->set_step(key.step);
      o->set_layer(key.layer);
      o->set_rank(rank);
      o->mutable_tokens()->Add(tokens.begin(), tokens.end());
    }
  }
  st.set_max_steps(max_steps_);
  return st.SerializeAsString();
}

void ClusterAccumulator::Merge(const std::string& bytes) {
  partial::ClusterState st;
  if (!st.ParseFromString(bytes) || st.total_size() != kBreakdownFields ||
      st.class_total_size() != kCommClassCount || st.class_exposed_size() != kCommClassCount) {
    throw std::runtime_error("cluster state from another process does not parse");
  }
  BreakdownNs total;
  for (int i = 0; i < kBreakdownFields; ++i) total.*kBreakdown[i] = st.total(i);
  total_.Add(total);
  for (int c = 0; c < kCommClassCount; ++c) {
    cls_[c].total += st.class_total(c);
    cls_[c].exposed += st.class_exposed(c);
  }
  for (const auto& r : st.ranks()) {
    ranks_.push_back({r.rank(), r.steps(), r.step_mean(), r.compute(), r.comm(), r.free(),
                      r.peak_bytes(), r.has_peak()});
  }
  for (const auto& o : st.collectives()) {
    Collective from;
    from.members = o.members();
    from.group_size = o.group_size();
    from.sum_dur = o.sum_dur();
    from.min_dur = o.min_dur();
    from.last_rank = o.last_rank();
    from.name_rank = o.name_rank();
    from.layer = o.layer();
    from.step = o.step();
    from.a2a = o.a2a();
    from.load_sum = o.load_sum();
    from.load_max = o.load_max();
    from.load_n = o.load_n();
    uint64_t key;
    GroupTable* table;
    {
      std::lock_guard<std::mutex> lock(*names_mu_);
      const uint32_t group = GroupId(o.group());
      table = groups_[group].get();
      key = (static_cast<uint64_t>(group) << 40) ^
            (static_cast<uint64_t>(o.sequence()) & kSequenceMask);
      from.name = NameId(o.name());
      from.combine = name_is_combine_[from.name] != 0;
    }
    FoldInto(table, key, from);
  }
  // The same rules as Add: tokens summed, the first placement and EP size kept.
  for (const auto& o : st.routing()) {
    RoutingAgg& agg = routing_[{o.step(), o.layer()}];
    if (agg.tokens.size() < static_cast<size_t>(o.tokens_size())) agg.tokens.resize(o.tokens_size(), 0);
    for (int e = 0; e < o.tokens_size(); ++e) agg.tokens[e] += o.tokens(e);
    if (agg.placement.empty()) agg.placement.assign(o.placement().begin(), o.placement().end());
    if (agg.ep_size == 0) agg.ep_size = o.ep_size();
    const int copies = std::min({o.copy_expert_size(), o.copy_ep_rank_size(), o.copy_tokens_size()});
    for (int k = 0; k < copies; ++k) agg.copies.Add(o.copy_expert(k), o.copy_ep_rank(k), o.copy_tokens(k));
  }
  for (const auto& o : st.local()) {
    std::vector<int64_t>& v = local_[{o.step(), o.layer()}][o.rank()];
    if (v.size() < static_cast<size_t>(o.tokens_size())) v.resize(o.tokens_size(), 0);
    for (int e = 0; e < o.tokens_size(); ++e) v[e] += o.tokens(e);
  }
  max_steps_ = std::max(max_steps_, st.max_steps());
}

}  // namespace moetrace
