#include "analyzer/replay/transforms/a2a_algorithm.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "analyzer/replay/transforms/op_index.h"

namespace moetrace::replay {

A2ACost AllToAllCost(const std::vector<std::vector<double>>& send, const std::vector<int32_t>& node,
                     double alpha_intra, double alpha_inter, double bw_intra, double bw_inter, int top_k) {
  const size_t n = send.size();
  std::vector<int32_t> nodes(node);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  const size_t q = nodes.size();
  A2ACost c;
  std::vector<double> si(n, 0), so(n, 0), ri(n, 0), ro(n, 0), recv(n, 0), total(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      const double b = send[i][j];
      total[i] += b;
      recv[j] += b;
      if (i == j) continue;
      if (node[i] == node[j]) {
        si[i] += b;
        ri[j] += b;
      } else {
        so[i] += b;
        ro[j] += b;
      }
    }
  }
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    worst = std::max(worst, std::max(std::max(si[i], ri[i]) / bw_intra * 1e9,
                                     std::max(so[i], ro[i]) / bw_inter * 1e9));
  }
  c.flat = double(n - 1) * (q > 1 ? alpha_inter : alpha_intra) + worst;
  if (q <= 1) {
    c.hierarchical = c.flat;
    return c;
  }
  const double k = std::max(1, top_k);
  double inter = 0;
  for (size_t i = 0; i < n; ++i) {
    if (total[i] <= 0) continue;
    double bytes = 0;
    for (int32_t a : nodes) {
      if (a == node[i]) continue;
      double to_a = 0;
      for (size_t j = 0; j < n; ++j) {
        if (node[j] == a) to_a += send[i][j];
      }
      const double p = to_a / total[i];
      bytes += total[i] / k * (1 - std::pow(1 - p, k));
    }
    inter = std::max(inter, bytes / bw_inter * 1e9);
  }
  const double m = double(n) / double(q);
  double intra = 0;
  for (size_t j = 0; j < n; ++j) intra = std::max(intra, recv[j] * (m - 1) / m / bw_intra * 1e9);
  c.hierarchical = double(q - 1) * alpha_inter + inter + (m - 1) * alpha_intra + intra;
  return c;
}

int64_t HierarchicalAllToAll(const Trace& trace, const Calibration& cal, int top_k,
                             EventEdits* edits) {
  if (!edits->active) edits->Init(trace);
  const CollectiveGroups groups(trace);
  const int dpn = std::max(1, cal.devices_per_node);
  constexpr double kHccsOverRoce = 392.0 / 25.0;  // ASCEND.md per-NPU figures
  constexpr size_t kMaxGroup = 4096;
  int64_t changed = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    const auto& members = groups.Members(int64_t(g));
    if (groups.GroupOf(size_t(members[0].r), size_t(members[0].t), size_t(members[0].i)) != int64_t(g)) {
      continue;  // unmatched
    }
    const Rank& r0 = trace.ranks[size_t(members[0].r)];
    const CommRecord* rec0 = CommOf(r0.tracks[size_t(members[0].t)], size_t(members[0].i));
    if (!rec0 || (rec0->kind != CollectiveKind::kAllToAll && rec0->kind != CollectiveKind::kAllToAllV)) continue;
    if (rec0->comm_class != CommClass::kEP && rec0->comm_class != CommClass::kOther) continue;
    const std::span<const int32_t> ranks = r0.tracks[size_t(members[0].t)].Ranks(rec0->group_ranks);
    const size_t n = ranks.size();
    // The cost is quadratic in the group: real EP groups are a few hundred ranks.
    if (n != members.size() || n > kMaxGroup) continue;
    // send[i][j] from each member's own splits, members ordered as group_ranks.
    std::vector<std::vector<double>> send(n, std::vector<double>(n, 0));
    std::vector<int32_t> node(n);
    bool ok = true;
    for (size_t i = 0; i < n; ++i) node[i] = NodeOf(ranks[i], dpn);
    for (const MemberRef& o : members) {
      const Rank& rank = trace.ranks[size_t(o.r)];
      const Track& track = rank.tracks[size_t(o.t)];
      const CommRecord* rec = CommOf(track, size_t(o.i));
      auto pos = std::find(ranks.begin(), ranks.end(), rank.rank);
      if (!rec || pos == ranks.end() || rec->send_splits.size != n) {
        ok = false;
        break;
      }
      const std::span<const uint64_t> splits = track.Splits(rec->send_splits);
      for (size_t j = 0; j < n; ++j) send[size_t(pos - ranks.begin())][j] = double(splits[j]);
    }
    if (!ok) continue;
    const TimeNs T = groups.Transfer(*edits, int64_t(g));
    double bw_intra = cal.intra_bw, bw_inter = cal.inter_bw;
    double a_intra = cal.alpha_intra_ns, a_inter = cal.alpha_inter_ns;
    if (!cal.known) {
      // The measured bandwidth: flat cost at unit bandwidth against the transfer.
      A2ACost unit = AllToAllCost(send, node, 0, 0, kHccsOverRoce, 1.0, top_k);
      if (T <= 0 || unit.flat <= 0) continue;
      bw_inter = unit.flat / double(T);
      bw_intra = bw_inter * kHccsOverRoce;
      a_intra = a_inter = 0;
    }
    const A2ACost c = AllToAllCost(send, node, a_intra, a_inter, bw_intra, bw_inter, top_k);
    if (c.flat <= 0 || c.hierarchical == c.flat) continue;
    const double ratio = c.hierarchical / c.flat;
    // Each member: its wait stays, its transfer scales.
    for (const MemberRef& o : members) {
      TimeNs& d = edits->dur[size_t(o.r)][size_t(o.t)][size_t(o.i)];
      d = d - T + TimeNs(std::llround(double(T) * ratio));
    }
    ++changed;
  }
  edits->notes.push_back("hierarchical all-to-all: " + std::to_string(changed) + " collectives re-costed");
  return changed;
}

}  // namespace moetrace::replay
