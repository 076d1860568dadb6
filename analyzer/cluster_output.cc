#include "analyzer/cluster_output.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

#include "analyzer/link_nominal.h"
#include "analyzer/percentiles.h"
#include "analyzer/rank_spread.h"

namespace moetrace {
namespace {

using google::protobuf::FieldDescriptor;

// Column key part (ReferenceKeyPart) -> StepTraceFigures field.
const std::map<std::string, std::string, std::less<>>& FieldOfColumn() {
  static const std::map<std::string, std::string, std::less<>> m = {
      {"stage", "span_ns"},
      {"computing", "compute_ns"},
      {"communication_not_overlapped", "comm_exposed_ns"},
      {"overlapped", "comm_overlapped_ns"},
      {"communication", "comm_ns"},
      {"free", "free_ns"},
      {"bubble", "bubble_ns"},
      {"communication_not_overlapped_and_exclude_receive", "comm_exposed_excluding_receive_ns"},
  };
  return m;
}

// The fields compared with the trace, and the spread's metrics.
const std::vector<std::string>& Metrics() {
  static const std::vector<std::string> m = {"span_ns", "compute_ns", "comm_exposed_ns",
                                             "comm_overlapped_ns", "comm_ns", "free_ns", "bubble_ns"};
  return m;
}

const FieldDescriptor* Field(const std::string& name) {
  return analysis::StepTraceFigures::descriptor()->FindFieldByName(name);
}

bool Get(const analysis::StepTraceFigures& f, const std::string& name, int64_t* out) {
  const FieldDescriptor* d = Field(name);
  if (!f.GetReflection()->HasField(f, d)) return false;
  *out = f.GetReflection()->GetInt64(f, d);
  return true;
}

int64_t Ns(double us) { return std::llround(us * 1000.0); }

// Mean per row of each column over `rows`.
analysis::StepTraceFigures Figures(const std::vector<const StepTraceRow*>& rows, const std::string& source) {
  std::map<std::string, std::pair<double, int>> sums;
  for (const StepTraceRow* r : rows) {
    for (const auto& [key, us] : r->figures_us) {
      auto& s = sums[key];
      s.first += us;
      ++s.second;
    }
  }
  analysis::StepTraceFigures f;
  f.set_source(source);
  f.set_steps(static_cast<int32_t>(rows.size()));
  for (const auto& [key, s] : sums) {
    const double mean_us = s.first / s.second;
    auto it = FieldOfColumn().find(key);
    if (it == FieldOfColumn().end()) {
      (*f.mutable_other_us())[key] = mean_us;
    } else {
      f.GetReflection()->SetInt64(&f, Field(it->second), Ns(mean_us));
    }
  }
  return f;
}

analysis::LinkBandwidth Link(const std::string& group, int32_t rank, const std::string& transport,
                             double size_mb, double time_ms, int64_t ops, const char* from) {
  analysis::LinkBandwidth l;
  l.set_group(group);
  l.set_rank(rank);
  l.set_transport(transport);
  l.set_transit_bytes(std::llround(size_mb * 1e6));
  l.set_transit_time_ns(std::llround(time_ms * 1e6));
  // MB / ms = GB/s (msprof's units: 1e6 bytes, 1e9 bytes).
  l.set_bandwidth_gb_s(time_ms > 0 ? size_mb / time_ms : 0);
  l.set_ops(ops);
  l.set_from(from);
  if (auto nominal = NominalLinkGbps(transport)) {
    l.set_nominal_gb_s(*nominal);
    l.set_utilization(l.bandwidth_gb_s() / *nominal);
  }
  return l;
}

void FillSpread(const std::vector<int64_t>& v, analysis::Spread* s) {
  analysis::StepTime mmm;
  FillMinMedianMax(std::vector<double>(v.begin(), v.end()), &mmm);
  int64_t p50 = 0, p90 = 0, p99 = 0;
  NearestRankPercentiles(v, &p50, &p90, &p99);
  s->set_min(mmm.min());
  s->set_median(mmm.median());
  s->set_p90(p90);
  s->set_p99(p99);
  s->set_max(mmm.max());
  s->set_mean(std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()));
}

}  // namespace

void AddClusterOutput(const ClusterOutputFiles& files, analysis::Analysis* a) {
  analysis::ClusterOutput* co = a->mutable_cluster_output();
  co->set_source(files.dir);
  co->set_whose(
      "msprof-analyze's: ranks[i].ascend.step_trace, stages, and the transit_bytes / transit_time_ns "
      "of links, matrix_links and groups[].transports; moetrace's: spread, slow_ranks, slowest, "
      "bandwidth_gb_s, nominal_gb_s, utilization, slowest_links, trace_comparison");
  const std::string csv = "cluster_step_trace_time.csv";

  // The profiler's per-rank figures, mean over a rank's rows (steps).
  std::map<int32_t, std::vector<const StepTraceRow*>> by_rank;
  for (const StepTraceRow& r : files.step_trace) {
    if (r.type == "rank") {
      by_rank[r.rank].push_back(&r);
    } else {
      analysis::StepTraceFigures* s = co->add_stages();
      *s = Figures({&r}, csv);
      s->set_index(r.index);
    }
  }
  std::vector<std::pair<int32_t, analysis::StepTraceFigures>> ranks;
  for (const auto& [rank, rows] : by_rank) ranks.emplace_back(rank, Figures(rows, csv));
  co->set_rank_count(static_cast<int32_t>(ranks.size()));

  // Spread and slow ranks, by the trace analysis' rules.
  for (const std::string& m : Metrics()) {
    std::vector<int64_t> v;
    for (const auto& [rank, f] : ranks) {
      int64_t x = 0;
      if (Get(f, m, &x)) v.push_back(std::max<int64_t>(x, 0));
    }
    if (!v.empty()) FillSpread(v, &(*co->mutable_spread())[m]);
  }
  std::vector<RankValues> values;
  std::vector<std::pair<int32_t, int64_t>> spans;
  for (const auto& [rank, f] : ranks) {
    // A figure the rank's rows lack (an absent or unreadable cell, counted
    // in the import statistics) is NaN: left out, not taken as 0.
    int64_t compute = 0, comm = 0, free = 0, exposed = 0, span = 0;
    const bool has_compute = Get(f, "compute_ns", &compute);
    const bool has_comm = Get(f, "comm_ns", &comm);
    const bool has_free = Get(f, "free_ns", &free);
    const bool has_exposed = Get(f, "comm_exposed_ns", &exposed);
    auto value = [](bool has, int64_t v) { return has ? double(v) : std::nan(""); };
    values.push_back({rank, {value(has_compute, compute), value(has_comm, comm), value(has_free, free)}});
    if (Get(f, "span_ns", &span)) {
      spans.emplace_back(rank, span);
    } else if (has_compute && has_exposed && has_free) {
      spans.emplace_back(rank, compute + exposed + free);
    }
  }
  FlagSlowRanks({"compute_ns", "comm_ns", "free_ns"}, values, co->mutable_slow_ranks());
  if (!spans.empty()) {
    // The longest step; ties to the lowest rank.
    auto slow = std::max_element(spans.begin(), spans.end(), [](const auto& x, const auto& y) {
      return x.second != y.second ? x.second < y.second : x.first > y.first;
    });
    std::vector<double> s;
    for (const auto& [r, v] : spans) s.push_back(static_cast<double>(v));
    analysis::StepTime mmm;
    const double median = FillMinMedianMax(s, &mmm);
    co->mutable_slowest()->set_rank(slow->first);
    co->mutable_slowest()->set_span_ns(slow->second);
    co->mutable_slowest()->set_over_median(median > 0 ? slow->second / median - 1 : 0);
  }

  // Next to the analysis' ranks; the trace's figures beside the profiler's.
  std::map<int32_t, int> index;  // rank -> position in a->ranks
  for (int i = 0; i < a->ranks_size(); ++i) index.emplace(a->ranks(i).rank(), i);
  for (auto& [rank, f] : ranks) {
    auto [it, added] = index.emplace(rank, a->ranks_size());
    if (added) a->add_ranks()->set_rank(rank);  // a rank the traces lack
    analysis::RankAnalysis* r = a->mutable_ranks(it->second);
    if (r->event_count() > 0) {
      const analysis::Breakdown& b = r->breakdown();
      const double n = std::max(1, r->steps_size());
      const std::map<std::string, int64_t> trace = {
          {"span_ns", b.span_ns()},       {"compute_ns", b.compute_ns()},
          {"comm_exposed_ns", b.comm_exposed_ns()}, {"comm_overlapped_ns", b.comm_overlapped_ns()},
          {"comm_ns", b.comm_ns()},       {"free_ns", b.free_ns() + b.copy_exposed_ns()},
          {"bubble_ns", b.bubble_ns()}};
      for (const std::string& m : Metrics()) {
        int64_t profiler = 0;
        if (!Get(f, m, &profiler)) continue;
        analysis::TraceComparison* c = co->add_trace_comparison();
        c->set_rank(rank);
        c->set_metric(m);
        c->set_profiler_ns(profiler);
        c->set_trace_ns(std::llround(static_cast<double>(trace.at(m)) / n));
        c->set_difference_ns(c->trace_ns() - profiler);
      }
    }
    *r->mutable_ascend()->mutable_step_trace() = std::move(f);
  }
  std::stable_sort(a->mutable_ranks()->begin(), a->mutable_ranks()->end(),
                   [](const auto& x, const auto& y) { return x.rank() < y.rank(); });

  // Links: per rank, per src-dst, and per group (the group's sums).
  std::map<std::pair<std::string, std::string>, std::tuple<double, double, int64_t>> group_sums;
  for (const auto& [key, l] : files.rank_links) {
    const auto& [group, rank, transport] = key;
    *co->add_links() = Link(group, rank, transport, l.size_mb, l.time_ms, l.ops, "cluster_communication");
    auto& g = group_sums[{group, transport}];
    std::get<0>(g) += l.size_mb;
    std::get<1>(g) += l.time_ms;
    std::get<2>(g) += l.ops;
  }
  const bool matrix_sums = files.rank_links.empty();
  for (const MatrixLink& l : files.matrix_links) {
    analysis::LinkBandwidth* m = co->add_matrix_links();
    *m = Link(l.group, l.src, l.transport, l.size_mb, l.time_ms, l.ops, "cluster_communication_matrix");
    m->set_dst_rank(l.dst);
    if (!matrix_sums) continue;
    auto& g = group_sums[{l.group, l.transport}];
    std::get<0>(g) += l.size_mb;
    std::get<1>(g) += l.time_ms;
    std::get<2>(g) += l.ops;
  }
  for (const ParallelGroup& pg : files.groups) {
    analysis::ParallelGroup* g = co->add_groups();
    g->set_name(pg.name);
    g->set_kind(pg.kind);
    for (int32_t r : pg.ranks) g->add_ranks(r);
    for (auto it = group_sums.lower_bound({pg.name, ""});
         it != group_sums.end() && it->first.first == pg.name; ++it) {
      const auto& [size, time, ops] = it->second;
      *g->add_transports() = Link(pg.name, -1, it->first.second, size, time, ops,
                                  matrix_sums ? "cluster_communication_matrix" : "cluster_communication");
    }
  }

  // The slowest links: lowest share of the nominal figure first.
  std::vector<const analysis::LinkBandwidth*> rated;
  for (const auto* list : {&co->links(), &co->matrix_links()}) {
    for (const auto& l : *list) {
      if (l.has_utilization() && l.transit_bytes() > 0 && l.transit_time_ns() > 0) rated.push_back(&l);
    }
  }
  std::stable_sort(rated.begin(), rated.end(), [](const auto* x, const auto* y) {
    return x->utilization() < y->utilization();
  });
  for (size_t i = 0; i < rated.size() && i < 5; ++i) *co->add_slowest_links() = *rated[i];

  for (const auto& [k, v] : files.stats) (*co->mutable_import_stats())[k] = v;
}

}  // namespace moetrace
