#include "analyzer/replay/transforms/expert_placement.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string>
#include <unordered_map>

#include "analyzer/advise/expert_placement.h"
#include "analyzer/replay/op_class.h"
#include "analyzer/replay/transforms/a2a_algorithm.h"
#include "analyzer/replay/transforms/op_index.h"

namespace moetrace::replay {
namespace {

std::vector<int32_t> Contiguous(int32_t experts, int32_t ep) {
  std::vector<int32_t> p(static_cast<size_t>(experts));
  const int32_t per = std::max(1, experts / std::max(1, ep));
  for (int32_t e = 0; e < experts; ++e) p[size_t(e)] = std::min(ep - 1, e / per);
  return p;
}

bool ExpertCompute(const Rank& rank, const EventTable& ev, size_t i) {
  if (ev.category[i] != Category::kCompute) return false;
  std::string n(rank.strings.Get(ev.name[i]));
  if (ClassifyOp(n, Category::kCompute) == OpClass::kGroupedMatmul) return true;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  return n.find("experts") != std::string::npos;
}

bool IsEpAllToAll(const CommRecord* rec) {
  return rec && (rec->kind == CollectiveKind::kAllToAll || rec->kind == CollectiveKind::kAllToAllV) &&
         (rec->comm_class == CommClass::kEP || rec->comm_class == CommClass::kOther);
}

}  // namespace

int64_t RebalanceExperts(const Trace& trace, const Calibration& cal, EventEdits* edits) {
  if (!edits->active) edits->Init(trace);
  const CollectiveGroups groups(trace);
  std::vector<TimeNs> transfer(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) transfer[g] = groups.Transfer(*edits, int64_t(g));
  std::unordered_map<int32_t, size_t> index_of;  // rank number -> rank index
  for (size_t r = 0; r < trace.ranks.size(); ++r) index_of[trace.ranks[r].rank] = r;

  // Loads per (step, layer) over every record; ep size per layer.
  std::map<std::pair<int32_t, int32_t>, std::vector<int64_t>> loads;
  for (const Rank& rank : trace.ranks) {
    for (const RoutingRecord& rr : rank.routing) {
      auto& l = loads[{rr.step, rr.layer}];
      if (l.size() < rr.tokens_per_expert.size()) l.resize(rr.tokens_per_expert.size(), 0);
      for (size_t e = 0; e < rr.tokens_per_expert.size(); ++e) l[e] += rr.tokens_per_expert[e];
    }
  }
  // The EP group of each rank's layer instance, from its forward all-to-all.
  std::vector<std::unordered_map<uint64_t, std::vector<int32_t>>> group_of(trace.ranks.size());
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    for (const Track& tr : trace.ranks[r].tracks) {
      if (tr.kind != TrackKind::kDeviceStream) continue;
      for (size_t i = 0; i < tr.events.size(); ++i) {
        const CommRecord* rec = CommOf(tr, i);
        if (!IsEpAllToAll(rec) || tr.events.layer[i] < 0 || rec->group_ranks.size < 2) continue;
        const std::span<const int32_t> ranks = tr.Ranks(rec->group_ranks);
        group_of[r].emplace(WorkKey(tr.events.step[i], tr.events.micro_batch[i], tr.events.layer[i]),
                            std::vector<int32_t>(ranks.begin(), ranks.end()));
      }
    }
  }
  // Each rank's routing records by layer instance.
  std::vector<std::unordered_map<uint64_t, const RoutingRecord*>> record_of(trace.ranks.size());
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    for (const RoutingRecord& x : trace.ranks[r].routing) {
      record_of[r][WorkKey(x.step, x.micro_batch, x.layer)] = &x;
    }
  }
  // Per rank and layer instance: compute scale and all-to-all ratio.
  struct Change { double compute = 1, vector = 1, a2a = 1; };
  std::vector<std::unordered_map<uint64_t, Change>> changes(trace.ranks.size());
  std::map<std::pair<int32_t, int32_t>, std::vector<int32_t>> plans;  // (step, layer) -> placement
  int64_t instances = 0;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    for (const RoutingRecord& rr : trace.ranks[r].routing) {
      const uint64_t key = WorkKey(rr.step, rr.micro_batch, rr.layer);
      auto g = group_of[r].find(key);
      if (g == group_of[r].end()) continue;
      const std::vector<int32_t>& members = g->second;
      if (members.empty() || members[0] != trace.ranks[r].rank) continue;  // once per group
      const int32_t E = int32_t(rr.tokens_per_expert.size());
      const int32_t ep = int32_t(members.size());
      // The greedy packing is experts x ranks; a hostile record could ask for 1e10.
      if (E < ep || rr.step <= 0 || int64_t(E) * ep > 10'000'000) continue;
      auto prev = loads.find({rr.step - 1, rr.layer});
      if (prev == loads.end()) continue;
      std::vector<int32_t> old = rr.expert_to_ep_rank.size() == size_t(E) ? rr.expert_to_ep_rank
                                                                          : Contiguous(E, ep);
      auto plan_it = plans.find({rr.step, rr.layer});
      if (plan_it == plans.end()) {
        plan_it = plans.emplace(std::make_pair(rr.step, rr.layer),
                                advise::PlanLayer(rr.layer, prev->second, ep, Contiguous(E, ep)).placement)
                      .first;
      }
      const std::vector<int32_t>& now = plan_it->second;
      // Token matrix of the group: counts[i][e] from each member's record.
      std::vector<std::vector<int64_t>> counts(static_cast<size_t>(ep));
      bool ok = true;
      for (int32_t i = 0; i < ep && ok; ++i) {
        auto it = index_of.find(members[size_t(i)]);
        ok = it != index_of.end();
        if (!ok) break;
        auto rec_it = record_of[it->second].find(key);
        const RoutingRecord* found = rec_it == record_of[it->second].end() ? nullptr : rec_it->second;
        ok = found && int32_t(found->tokens_per_expert.size()) == E;
        if (ok) counts[size_t(i)] = found->tokens_per_expert;
      }
      if (!ok) continue;
      auto matrix = [&](const std::vector<int32_t>& place, std::vector<double>* recv) {
        std::vector<std::vector<double>> send(size_t(ep), std::vector<double>(size_t(ep), 0));
        recv->assign(size_t(ep), 0);
        for (int32_t i = 0; i < ep; ++i) {
          for (int32_t e = 0; e < E; ++e) {
            send[size_t(i)][size_t(place[size_t(e)])] += double(counts[size_t(i)][size_t(e)]);
            (*recv)[size_t(place[size_t(e)])] += double(counts[size_t(i)][size_t(e)]);
          }
        }
        return send;
      };
      std::vector<double> recv_old, recv_new;
      auto s_old = matrix(old, &recv_old);
      auto s_new = matrix(now, &recv_new);
      const int dpn = std::max(1, cal.devices_per_node);
      std::vector<int32_t> node(static_cast<size_t>(ep));
      for (int32_t i = 0; i < ep; ++i) node[size_t(i)] = NodeOf(members[size_t(i)], dpn);
      const double bw_intra = cal.known ? cal.intra_bw : 392e9, bw_inter = cal.known ? cal.inter_bw : 25e9;
      const double c_old = AllToAllCost(s_old, node, 0, 0, bw_intra, bw_inter, 1).flat;
      const double c_new = AllToAllCost(s_new, node, 0, 0, bw_intra, bw_inter, 1).flat;
      const double half = cal.known ? cal.grouped_gemm_half_tokens * double(E) / ep : 0;
      for (int32_t i = 0; i < ep; ++i) {
        auto it = index_of.find(members[size_t(i)]);
        Change& c = changes[it->second][key];
        c.compute = recv_old[size_t(i)] > 0 ? (recv_new[size_t(i)] + half) / (recv_old[size_t(i)] + half) : 1;
        c.vector = recv_old[size_t(i)] > 0 ? recv_new[size_t(i)] / recv_old[size_t(i)] : 1;
        c.a2a = c_old > 0 ? c_new / c_old : 1;
      }
      ++instances;
    }
  }
  const double ovh = cal.known ? cal.kernel_overhead_ns : 0;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    if (changes[r].empty()) continue;
    const Rank& rank = trace.ranks[r];
    for (size_t t = 0; t < rank.tracks.size(); ++t) {
      const Track& tr = rank.tracks[t];
      if (tr.kind != TrackKind::kDeviceStream) continue;
      for (size_t i = 0; i < tr.events.size(); ++i) {
        if (tr.events.layer[i] < 0 || edits->IsRemoved(r, t, i)) continue;
        auto it = changes[r].find(WorkKey(tr.events.step[i], tr.events.micro_batch[i], tr.events.layer[i]));
        if (it == changes[r].end()) continue;
        TimeNs& d = edits->dur[r][t][i];
        if (ExpertCompute(rank, tr.events, i)) {
          const bool gemm = ClassifyOp(rank.strings.Get(tr.events.name[i]), Category::kCompute) ==
                            OpClass::kGroupedMatmul;
          const double f = std::min<double>(ovh, double(d));
          d = TimeNs(std::llround(f + (double(d) - f) * (gemm ? it->second.compute : it->second.vector)));
        } else if (tr.events.category[i] == Category::kCollective && IsEpAllToAll(CommOf(tr, i))) {
          const int64_t g = groups.GroupOf(r, t, i);
          const TimeNs T = g >= 0 ? transfer[size_t(g)] : d;
          const CommRecord* rec = CommOf(tr, i);
          const std::span<const int32_t> ranks = tr.Ranks(rec->group_ranks);
          const bool inter = ranks.size() > 1 &&
                             NodeOf(ranks.front(), std::max(1, cal.devices_per_node)) !=
                                 NodeOf(ranks.back(), std::max(1, cal.devices_per_node));
          const double alpha = cal.known ? double(ranks.size() - 1) *
                                               (inter ? cal.alpha_inter_ns : cal.alpha_intra_ns)
                                         : 0;
          const double a = std::min<double>(alpha, double(T));
          d = d - T + TimeNs(std::llround(a + (double(T) - a) * it->second.a2a));
        }
      }
    }
  }
  for (auto& [key, placement] : plans) edits->placements[key] = std::move(placement);
  edits->notes.push_back("expert placement: " + std::to_string(instances) +
                         " layer instances re-balanced (migration transfer not added)");
  return instances;
}

}  // namespace moetrace::replay
