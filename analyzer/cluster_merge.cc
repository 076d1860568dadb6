// ClusterAccumulator::Serialize / Merge: another process's ranks folded in
// as if they had been Added here (mpirun, analyzer/distributed.h).
#include <algorithm>
#include <stdexcept>

#include "analyzer/cluster.h"
#include "analyzer/collective_table.h"
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
  // Columns (partial.proto): the group and op names once, as tables
  // indexed like this accumulator's own.
  partial::ClusterState::Collectives* cols = st.mutable_collectives();
  for (const std::string& g : group_names_) cols->add_groups(g);
  for (const std::string& n : names_) cols->add_names(n);
  const std::vector<const Collective*> sorted = SortedCollectives();
  const int n = static_cast<int>(sorted.size());
  cols->mutable_group_index()->Reserve(n);
  cols->mutable_sequence()->Reserve(n);
  cols->mutable_members()->Reserve(n);
  cols->mutable_group_size()->Reserve(n);
  cols->mutable_sum_dur()->Reserve(n);
  cols->mutable_min_dur()->Reserve(n);
  cols->mutable_last_rank()->Reserve(n);
  cols->mutable_name_rank()->Reserve(n);
  cols->mutable_name_index()->Reserve(n);
  cols->mutable_layer()->Reserve(n);
  cols->mutable_step()->Reserve(n);
  cols->mutable_a2a()->Reserve(n);
  cols->mutable_combine()->Reserve(n);
  cols->mutable_load_sum()->Reserve(n);
  cols->mutable_load_max()->Reserve(n);
  cols->mutable_load_n()->Reserve(n);
  for (const Collective* p : sorted) {
    const Collective& c = *p;
    const uint64_t key = c.key;
    cols->add_group_index(static_cast<uint32_t>(key >> 40));
    cols->add_sequence(static_cast<int64_t>(key & kCollectiveSequenceMask));
    cols->add_members(c.members);
    cols->add_group_size(c.group_size);
    cols->add_sum_dur(c.sum_dur);
    cols->add_min_dur(c.min_dur);
    cols->add_last_rank(c.last_rank);
    cols->add_name_rank(c.name_rank);
    cols->add_name_index(c.name);
    cols->add_layer(c.layer);
    cols->add_step(c.step);
    cols->add_a2a(c.a2a);
    cols->add_combine(c.combine);
    cols->add_load_sum(c.load_sum);
    cols->add_load_max(c.load_max);
    cols->add_load_n(c.load_n);
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
  ops_.Serialize(st.mutable_ops());
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
  const partial::ClusterState::Collectives& cols = st.collectives();
  const int n = cols.group_index_size();
  for (const int size : {cols.sequence_size(), cols.members_size(), cols.group_size_size(),
                         cols.sum_dur_size(), cols.min_dur_size(), cols.last_rank_size(),
                         cols.name_rank_size(), cols.name_index_size(), cols.layer_size(),
                         cols.step_size(), cols.a2a_size(), cols.combine_size(),
                         cols.load_sum_size(), cols.load_max_size(), cols.load_n_size()}) {
    if (size != n) throw std::runtime_error("cluster state from another process: uneven collective columns");
  }
  // The other process's group and name ids mapped to this one's, once each.
  std::vector<uint32_t> group_of(static_cast<size_t>(cols.groups_size()));
  std::vector<GroupTable*> table_of(group_of.size());
  std::vector<uint32_t> name_of(static_cast<size_t>(cols.names_size()));
  std::vector<char> combine_of;
  {
    std::lock_guard<std::mutex> lock(*names_mu_);
    for (size_t g = 0; g < group_of.size(); ++g) {
      group_of[g] = GroupId(cols.groups(static_cast<int>(g)));
      table_of[g] = groups_[group_of[g]].get();
    }
    for (size_t k = 0; k < name_of.size(); ++k) name_of[k] = NameId(cols.names(static_cast<int>(k)));
    for (size_t k = 0; k < name_of.size(); ++k) combine_of.push_back(name_is_combine_[name_of[k]] != 0);
  }
  for (int i = 0; i < n; ++i) {
    const uint32_t g = cols.group_index(i), nm = cols.name_index(i);
    if (g >= group_of.size() || nm >= name_of.size()) {
      throw std::runtime_error("cluster state from another process: a collective names no group or op");
    }
    Collective from;
    from.members = cols.members(i);
    from.group_size = cols.group_size(i);
    from.sum_dur = cols.sum_dur(i);
    from.min_dur = cols.min_dur(i);
    from.last_rank = cols.last_rank(i);
    from.name_rank = cols.name_rank(i);
    from.layer = cols.layer(i);
    from.step = cols.step(i);
    from.a2a = cols.a2a(i);
    from.load_sum = cols.load_sum(i);
    from.load_max = cols.load_max(i);
    from.load_n = cols.load_n(i);
    from.name = name_of[nm];
    from.combine = combine_of[nm] != 0;
    const uint64_t key = (static_cast<uint64_t>(group_of[g]) << 40) ^
                         (static_cast<uint64_t>(cols.sequence(i)) & kCollectiveSequenceMask);
    FoldInto(table_of[g], key, from);
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
  ops_.Merge(st.ops());
}

}  // namespace moetrace
