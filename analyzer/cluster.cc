#include "analyzer/cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "analyzer/hfu.h"
#include "analyzer/metrics_proto.h"
#include "analyzer/rank_spread.h"

namespace moetrace {
namespace {

constexpr uint64_t kSequenceMask = kCollectiveSequenceMask;

uint64_t CollectiveKey(uint32_t group, int64_t sequence) {
  return (static_cast<uint64_t>(group) << 40) ^ (static_cast<uint64_t>(sequence) & kSequenceMask);
}

// dst[e] += src[e], two counts per SSE2 add (the x86-64 baseline). The
// compiler's -O2 loop added one count per instruction, in memory: half of
// `Add`'s samples on the 718B trace (65,536 routing counts a rank, added
// under the accumulator's lock). Integer sums: the same values in any order.
void AddCounts(int64_t* dst, const int64_t* src, size_t n) {
  size_t e = 0;
#if defined(__SSE2__)
  for (; e + 4 <= n; e += 4) {
    __m128i* d = reinterpret_cast<__m128i*>(dst + e);
    const __m128i* s = reinterpret_cast<const __m128i*>(src + e);
    _mm_storeu_si128(d, _mm_add_epi64(_mm_loadu_si128(d), _mm_loadu_si128(s)));
    _mm_storeu_si128(d + 1, _mm_add_epi64(_mm_loadu_si128(d + 1), _mm_loadu_si128(s + 1)));
  }
#endif
  // Unsigned: a sum past the int64 range wraps, as the vector adds do.
  for (; e < n; ++e) dst[e] = static_cast<int64_t>(static_cast<uint64_t>(dst[e]) + static_cast<uint64_t>(src[e]));
}

double Mean(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

ClusterAccumulator::ClusterAccumulator()
    : names_mu_(std::make_unique<std::mutex>()),
      mu_(std::make_unique<std::mutex>()) {}
ClusterAccumulator::ClusterAccumulator(ClusterAccumulator&&) noexcept = default;
ClusterAccumulator& ClusterAccumulator::operator=(ClusterAccumulator&&) noexcept = default;
ClusterAccumulator::~ClusterAccumulator() = default;

void ClusterAccumulator::Add(const RankMetrics& m, const Rank& rank) {
  RankSummary s{};
  s.rank = m.rank;
  s.steps = static_cast<int64_t>(m.steps.size());
  const double n = s.steps > 0 ? static_cast<double>(s.steps) : 1.0;
  s.step_mean = static_cast<double>(m.total.span) / n;
  s.compute = static_cast<double>(m.total.compute) / n;
  s.comm = static_cast<double>(m.total.comm) / n;
  s.free = static_cast<double>(m.total.free) / n;
  s.has_peak = m.memory.peak_allocated || m.memory.peak_reserved;
  s.peak_bytes = std::max(m.memory.peak_allocated.value_or(0), m.memory.peak_reserved.value_or(0));
  {
    std::lock_guard<std::mutex> lock(*mu_);
    total_.Add(m.total);
    for (int c = 0; c < kCommClassCount; ++c) {
      cls_[c].total += m.cls[c].total;
      cls_[c].exposed += m.cls[c].exposed;
    }
    ranks_.push_back(s);
    max_steps_ = std::max(max_steps_, s.steps);
    for (const RoutingRecord& r : rank.routing) {
      if (r.ep_size <= 0) {
        // The tokens this rank's own experts processed: one EP-rank load.
        std::vector<int64_t>& v = local_[{r.step, r.layer}][rank.rank];
        if (v.size() < r.tokens_per_expert.size()) v.resize(r.tokens_per_expert.size(), 0);
        for (size_t e = 0; e < r.tokens_per_expert.size(); ++e) v[e] += r.tokens_per_expert[e];
        continue;
      }
      RoutingAgg& agg = routing_[{r.step, r.layer}];
      if (agg.tokens.size() < r.tokens_per_expert.size()) agg.tokens.resize(r.tokens_per_expert.size(), 0);
      AddCounts(agg.tokens.data(), r.tokens_per_expert.data(), r.tokens_per_expert.size());
      if (agg.placement.empty()) agg.placement = r.expert_to_ep_rank;
      if (agg.ep_size == 0) agg.ep_size = r.ep_size;
      agg.copies.Add(r);
    }
  }

  // Matched collectives: a member's wait is last arrival - own arrival. The
  // collective ends together on every member, so that is its duration minus
  // the shortest member duration -- which needs no clock alignment between
  // ranks. The member with the shortest duration arrived last.
  // The rank's string ids to the accumulator's, once per string (not per
  // arrival): one short hold of the name lock per rank.
  thread_local std::vector<int64_t> local_group, local_name;
  thread_local std::vector<char> local_combine;
  // The rank's groups in order of first arrival, and each local group
  // string's index among them.
  thread_local std::vector<GroupTable*> tables;
  thread_local std::vector<int32_t> local_slot;
  local_group.assign(rank.strings.size(), -1);
  local_name.assign(rank.strings.size(), -1);
  local_combine.assign(rank.strings.size(), 0);
  local_slot.assign(rank.strings.size(), -1);
  tables.clear();
  {
    std::lock_guard<std::mutex> lock(*names_mu_);
    for (const Arrival& a : m.arrivals) {
      if (local_group[a.group] < 0) {
        const uint32_t id = GroupId(rank.strings.Get(a.group));
        local_group[a.group] = id;
        local_slot[a.group] = static_cast<int32_t>(tables.size());
        tables.push_back(groups_[id].get());
      }
      if (local_name[a.name] < 0) {
        const uint32_t id = NameId(rank.strings.Get(a.name));
        local_name[a.name] = id;
        local_combine[a.name] = name_is_combine_[id];
      }
    }
  }
  // Arrivals by group (a counting sort that keeps each group's arrivals in
  // the rank's order: sequence order for TP and EP groups, most of them),
  // then each group's table locked once and its slots walked in order.
  thread_local std::vector<uint32_t> order, at;
  const size_t na = m.arrivals.size();
  const size_t ng = tables.size();
  order.resize(na);
  at.assign(ng + 1, 0);
  for (const Arrival& a : m.arrivals) ++at[static_cast<size_t>(local_slot[a.group]) + 1];
  for (size_t g = 0; g < ng; ++g) at[g + 1] += at[g];
  thread_local std::vector<uint32_t> fill;
  fill.assign(at.begin(), at.end() - 1);
  for (size_t i = 0; i < na; ++i) {
    order[fill[static_cast<size_t>(local_slot[m.arrivals[i].group])]++] = static_cast<uint32_t>(i);
  }
  for (size_t g = 0; g < ng; ++g) {
    GroupTable& gt = *tables[g];
    std::lock_guard<std::mutex> lock(gt.mu);
    // The group's first member: its arrivals are (usually) all of the
    // group's collectives.
    if (gt.table.size() == 0) gt.table.Reserve(at[g + 1] - at[g]);
    for (uint32_t j = at[g]; j < at[g + 1]; ++j) {
      const Arrival& a = m.arrivals[order[j]];
      Collective one;
      one.members = 1;
      one.group_size = a.group_size;
      one.sum_dur = one.min_dur = a.dur;
      one.last_rank = one.name_rank = m.rank;
      one.name = static_cast<uint32_t>(local_name[a.name]);
      one.combine = local_combine[a.name] != 0;
      one.layer = a.layer;
      one.step = a.step;
      one.a2a = a.kind == CollectiveKind::kAllToAll || a.kind == CollectiveKind::kAllToAllV;
      if (a.recv_load >= 0) {
        one.load_sum = one.load_max = a.recv_load;
        one.load_n = 1;
      }
      Fold(one, gt.table.Find(CollectiveKey(static_cast<uint32_t>(local_group[a.group]),
                                            a.sequence)));
    }
  }
}

void ClusterAccumulator::FoldInto(GroupTable* table, uint64_t key, const Collective& from) {
  std::lock_guard<std::mutex> lock(table->mu);
  Fold(from, table->table.Find(key));
}

uint32_t ClusterAccumulator::GroupId(std::string_view name) {
  if (auto it = group_ids_.find(name); it != group_ids_.end()) return it->second;
  auto [it, added] = group_ids_.emplace(std::string(name), static_cast<uint32_t>(group_names_.size()));
  if (added) {
    group_names_.emplace_back(name);
    groups_.push_back(std::make_unique<GroupTable>());
  }
  return it->second;
}

uint32_t ClusterAccumulator::NameId(std::string_view name) {
  if (auto it = name_ids_.find(name); it != name_ids_.end()) return it->second;
  auto [it, added] = name_ids_.emplace(std::string(name), static_cast<uint32_t>(names_.size()));
  if (added) {
    names_.emplace_back(name);
    name_is_combine_.push_back(name.find("combine") != std::string_view::npos);
  }
  return it->second;
}

void ClusterAccumulator::Fold(const Collective& f, Collective* c) {
  // Name, layer and step from the lowest member rank (members may name
  // their ops differently, e.g. send / recv): independent of the order in
  // which worker threads add ranks, or processes merge them.
  if (c->members == 0 || f.name_rank < c->name_rank) {
    c->name_rank = f.name_rank;
    c->name = f.name;
    c->layer = f.layer;
    c->step = f.step;
    c->group_size = f.group_size;
    c->a2a = f.a2a;
    c->combine = f.combine;
  }
  c->members += f.members;
  c->sum_dur += f.sum_dur;
  if (f.min_dur < c->min_dur || (f.min_dur == c->min_dur && f.last_rank < c->last_rank)) {
    c->min_dur = f.min_dur;
    c->last_rank = f.last_rank;
  }
  c->load_sum += f.load_sum;
  c->load_max = std::max(c->load_max, f.load_max);
  c->load_n += f.load_n;
}

std::vector<const ClusterAccumulator::Collective*> ClusterAccumulator::SortedCollectives() const {
  std::vector<const Collective*> all;
  for (const auto& g : groups_) {
    g->table.ForEach([&](const Collective& c) { all.push_back(&c); });
  }
  std::sort(all.begin(), all.end(), [this](const Collective* a, const Collective* b) {
    const std::string& ga = group_names_[a->key >> 40];
    const std::string& gb = group_names_[b->key >> 40];
    if (ga != gb) return ga < gb;
    return (a->key & kSequenceMask) < (b->key & kSequenceMask);
  });
  return all;
}

void ClusterAccumulator::Finish(const Metadata& md, analysis::Analysis* out) {
  // Ranks arrive in the order worker threads finish them: sort so that sums
  // of doubles and ties (the peak-memory rank) do not depend on scheduling.
  std::sort(ranks_.begin(), ranks_.end(),
            [](const RankSummary& a, const RankSummary& b) { return a.rank < b.rank; });
  analysis::Cluster* c = out->mutable_cluster();
  c->set_rank_count(static_cast<int32_t>(ranks_.size()));
  c->set_steps(static_cast<int32_t>(max_steps_));
  FillBreakdown(total_, c->mutable_breakdown());
  FillRatios(total_, c->mutable_ratios());
  FillCommByClass(cls_, c->mutable_comm_by_class());
  ops_.Fill(static_cast<int32_t>(max_steps_), c->mutable_operators());

  // Step time spread and slow ranks (rank_spread.h, shared with the cluster output).
  std::vector<double> step_means;
  std::vector<RankValues> values;
  for (const RankSummary& r : ranks_) {
    if (r.steps > 0) step_means.push_back(r.step_mean);
    values.push_back({r.rank, {r.compute, r.comm, r.free}});
  }
  const double median_step =
      step_means.empty() ? 0 : FillMinMedianMax(std::move(step_means), c->mutable_step_time_ns());
  FlagSlowRanks({"compute_ns", "comm_ns", "free_ns"}, values, c->mutable_slow_ranks());

  // Collective waits.
  struct Wait { uint64_t key; const Collective* c; int64_t total; };
  std::vector<Wait> waits;
  std::map<int32_t, std::pair<int64_t, int64_t>> caused;  // rank -> (ns, collectives)
  for (const auto& g : groups_) {
    g->table.ForEach([&](const Collective& col) {
      if (col.members < 2) return;
      if (col.group_size > 0 && col.members != col.group_size) return;  // not every member seen
      int64_t total = col.sum_dur - static_cast<int64_t>(col.members) * col.min_dur;
      if (total <= 0) return;
      waits.push_back({col.key, &col, total});
      auto& r = caused[col.last_rank];
      r.first += total;
      r.second += 1;
    });
  }
  // Ties by group name and sequence (group ids depend on the order ranks
  // were added, which depends on thread scheduling): a total order, so the
  // top 20 need no full sort.
  const size_t top_waits = std::min<size_t>(20, waits.size());
  std::partial_sort(waits.begin(), waits.begin() + static_cast<std::ptrdiff_t>(top_waits),
                    waits.end(), [this](const Wait& a, const Wait& b) {
    if (a.total != b.total) return a.total > b.total;
    const std::string& ga = group_names_[a.key >> 40];
    const std::string& gb = group_names_[b.key >> 40];
    if (ga != gb) return ga < gb;
    return (a.key & kSequenceMask) < (b.key & kSequenceMask);
  });
  for (size_t i = 0; i < waits.size() && i < 20; ++i) {
    const Collective& col = *waits[i].c;
    analysis::CollectiveWait* w = c->add_collective_waits();
    const std::string& group = group_names_[waits[i].key >> 40];
    w->set_group(group);
    w->set_sequence(static_cast<int64_t>(waits[i].key & kSequenceMask));
    const std::string& name = names_[col.name];
    w->set_name(name);
    if (col.layer >= 0) w->set_layer(col.layer);
    if (col.step >= 0) w->set_step(col.step);
    w->set_members(col.members);
    w->set_last_rank(col.last_rank);
    int64_t mean_wait = waits[i].total / (col.members - 1);
    w->set_mean_wait_ns(mean_wait);
    w->set_total_wait_ns(waits[i].total);
    std::string where = name;
    if (col.layer >= 0) where += fmt::format(" of layer {}", col.layer);
    if (col.step >= 0) where += fmt::format(", step {}", col.step);
    w->set_description(fmt::format("every rank of group {} waited {:.3f} ms for rank {} in {}",
                                   group, static_cast<double>(mean_wait) / 1e6, col.last_rank,
                                   where));
  }
  std::vector<std::pair<int32_t, std::pair<int64_t, int64_t>>> blame(caused.begin(), caused.end());
  std::sort(blame.begin(), blame.end(), [](const auto& a, const auto& b) {
    return a.second.first != b.second.first ? a.second.first > b.second.first : a.first < b.first;
  });
  for (size_t i = 0; i < blame.size() && i < 20; ++i) {
    analysis::RankWait* w = c->add_waited_for();
    w->set_rank(blame[i].first);
    w->set_caused_wait_ns(blame[i].second.first);
    w->set_collectives(blame[i].second.second);
  }
  for (analysis::RankAnalysis& r : *out->mutable_ranks()) {
    auto it = caused.find(r.rank());
    r.set_collective_wait_caused_ns(it == caused.end() ? 0 : it->second.first);
  }

  // Expert load imbalance: routing records first, else all-to-all splits.
  analysis::ExpertImbalance* ei = c->mutable_expert_imbalance();
  if (!routing_.empty()) {
    ei->set_source("routing");
    struct LayerAgg { std::vector<double> vio, ep_vio, cv; std::vector<int64_t> tokens; };
    std::map<int32_t, LayerAgg> layers;
    std::vector<double> all_vio, all_ep;
    for (const auto& [key, agg] : routing_) {
      const size_t E = agg.tokens.size();
      if (E == 0) continue;
      double sum = 0, mx = 0;
      for (int64_t t : agg.tokens) sum += static_cast<double>(t), mx = std::max(mx, static_cast<double>(t));
      double mean = sum / static_cast<double>(E);
      if (mean <= 0) continue;
      double var = 0;
      for (int64_t t : agg.tokens) var += (static_cast<double>(t) - mean) * (static_cast<double>(t) - mean);
      double cv = std::sqrt(var / static_cast<double>(E)) / mean;
      // Bounded by the experts (an EP rank holds at least one): the size is from the file.
      const int32_t ep = static_cast<int32_t>(std::clamp<int64_t>(agg.ep_size, 1, static_cast<int64_t>(E)));
      std::vector<double> ep_load;
      if (agg.copies.expert.empty()) {
        ep_load.assign(static_cast<size_t>(ep), 0.0);
        for (size_t e = 0; e < E; ++e) {
          int32_t r = e < agg.placement.size() ? agg.placement[e]
                                                : static_cast<int32_t>(e * static_cast<size_t>(ep) / E);
          if (r >= 0 && r < ep) ep_load[static_cast<size_t>(r)] += static_cast<double>(agg.tokens[e]);
        }
      } else {
        // Redundant copies took part of their experts' tokens to other ranks.
        ep_load = EpLoads(std::vector<double>(agg.tokens.begin(), agg.tokens.end()), agg.placement, ep,
                          agg.copies);
      }
      double ep_mx = *std::max_element(ep_load.begin(), ep_load.end());
      double ep_vio = ep_mx / (sum / ep) - 1;
      double vio = mx / mean - 1;
      LayerAgg& la = layers[key.layer];
      la.vio.push_back(vio);
      la.ep_vio.push_back(ep_vio);
      la.cv.push_back(cv);
      if (la.tokens.size() < E) la.tokens.resize(E, 0);
      for (size_t e = 0; e < E; ++e) la.tokens[e] += agg.tokens[e];
      all_vio.push_back(vio);
      all_ep.push_back(ep_vio);
    }
    for (auto& [layer, la] : layers) {
      analysis::ExpertLayer* l = ei->add_layers();
      l->set_layer(layer);
      l->set_max_vio(Mean(la.vio));
      l->set_ep_max_vio(Mean(la.ep_vio));
      l->set_cv(Mean(la.cv));
      l->set_steps(static_cast<int32_t>(la.vio.size()));
      l->mutable_tokens()->Add(la.tokens.begin(), la.tokens.end());
      std::vector<int32_t> idx(la.tokens.size());
      std::iota(idx.begin(), idx.end(), 0);
      size_t top = std::min<size_t>(3, idx.size());
      // A named reference: clang 14 cannot capture structured bindings.
      const auto& tokens = la.tokens;
      std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(top), idx.end(),
                        [&tokens](int32_t a, int32_t b) {
                          const auto ta = tokens[static_cast<size_t>(a)];
                          const auto tb = tokens[static_cast<size_t>(b)];
                          return ta != tb ? ta > tb : a < b;
                        });
      for (size_t k = 0; k < top; ++k) {
        analysis::HotExpert* h = l->add_hot_experts();
        h->set_expert(idx[k]);
        h->set_tokens(la.tokens[static_cast<size_t>(idx[k])]);
      }
    }
    if (!all_vio.empty()) {
      ei->set_max_vio_mean(Mean(all_vio));
      ei->set_max_vio_max(*std::max_element(all_vio.begin(), all_vio.end()));
      ei->set_ep_max_vio_mean(Mean(all_ep));
    }
  } else if (!local_.empty()) {
    // Ascend GroupedMatmul token counts per rank (per local expert when the
    // group sizes are known): EP-rank loads are the ranks' sums, over the
    // ranks that ran that (step, layer); experts are the ranks' local experts
    // side by side (rank order), when every rank gives the same number > 1.
    ei->set_source("grouped_matmul");
    struct LayerAgg { std::vector<double> vio, ep_vio; };
    std::map<int32_t, LayerAgg> layers;
    std::vector<double> all_vio, all_ep;
    bool experts_known = true;
    for (const auto& [key, by_rank] : local_) {
      if (by_rank.size() < 2) continue;
      std::vector<double> ep, experts;
      size_t local = by_rank.begin()->second.size();
      for (const auto& [r, v] : by_rank) {
        double sum = 0;
        for (int64_t t : v) sum += static_cast<double>(t), experts.push_back(static_cast<double>(t));
        ep.push_back(sum);
        if (v.size() != local) local = 0;
      }
      double ep_sum = std::accumulate(ep.begin(), ep.end(), 0.0);
      if (ep_sum <= 0) continue;
      LayerAgg& la = layers[key.layer];
      la.ep_vio.push_back(*std::max_element(ep.begin(), ep.end()) / (ep_sum / ep.size()) - 1);
      all_ep.push_back(la.ep_vio.back());
      if (local > 1) {
        la.vio.push_back(*std::max_element(experts.begin(), experts.end()) /
                             (ep_sum / static_cast<double>(experts.size())) - 1);
        all_vio.push_back(la.vio.back());
      } else {
        experts_known = false;
      }
    }
    for (auto& [layer, la] : layers) {
      analysis::ExpertLayer* l = ei->add_layers();
      l->set_layer(layer);
      l->set_ep_max_vio(Mean(la.ep_vio));
      if (experts_known && !la.vio.empty()) l->set_max_vio(Mean(la.vio));
      l->set_steps(static_cast<int32_t>(la.ep_vio.size()));
    }
    if (!all_ep.empty()) ei->set_ep_max_vio_mean(Mean(all_ep));
    if (experts_known && !all_vio.empty()) {
      ei->set_max_vio_mean(Mean(all_vio));
      ei->set_max_vio_max(*std::max_element(all_vio.begin(), all_vio.end()));
    }
  } else {
    // Only EP-rank loads are known: the expert-level fields stay absent.
    std::map<int32_t, std::vector<double>> layers;
    std::vector<double> all;
    // In (group, sequence) order: the means of doubles do not depend on
    // the order in which ranks were added.
    for (const Collective* p : SortedCollectives()) {
      const Collective& col = *p;
      if (!col.a2a || col.combine || col.load_n < 2 || col.load_sum <= 0) continue;
      double vio = static_cast<double>(col.load_max) /
                       (static_cast<double>(col.load_sum) / col.load_n) - 1;
      layers[col.layer].push_back(vio);
      all.push_back(vio);
    }
    if (!all.empty()) {
      ei->set_source("all_to_all_splits");
      for (auto& [layer, v] : layers) {
        analysis::ExpertLayer* l = ei->add_layers();
        l->set_layer(layer);
        l->set_ep_max_vio(Mean(v));
        l->set_steps(static_cast<int32_t>(v.size()));
      }
      ei->set_ep_max_vio_mean(Mean(all));
    }
  }

  // Memory, MFU, tokens/s.
  for (const RankSummary& r : ranks_) {
    if (r.has_peak && r.peak_bytes > c->memory().peak_bytes()) {
      c->mutable_memory()->set_peak_bytes(r.peak_bytes);
      c->mutable_memory()->set_rank(r.rank);
    }
  }
  const double step_s = median_step / 1e9;
  const double devices = md.layout.world_size > 0 ? md.layout.world_size
                                                  : static_cast<double>(ranks_.size());
  if (step_s > 0 && md.model_flops_per_step > 0 && md.device_peak_flops > 0 && devices > 0) {
    c->set_mfu(md.model_flops_per_step / (step_s * md.device_peak_flops * devices));
  }
  // HFU: tracegen writes the hardware FLOPs per step (model + recompute) as
  // an attribute; other sources do not know them, and HFU stays absent.
  const double hardware_flops = HardwareFlopsPerStep(md);
  if (step_s > 0 && hardware_flops > 0 && md.device_peak_flops > 0 && devices > 0) {
    c->set_hfu(hardware_flops / (step_s * md.device_peak_flops * devices));
  }
  if (step_s > 0 && md.tokens_per_step > 0) {
    c->set_tokens_per_s(static_cast<double>(md.tokens_per_step) / step_s);
  }
}

}  // namespace moetrace
