#include "analyzer/diff/diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "analyzer/label_check.h"
#include "analyzer/ops/ops_accumulator.h"

namespace moetrace {
namespace {

using analysis::Analysis;
using analysis::Breakdown;
using analysis::Diff;
using analysis::DiffValue;

// The cluster figures shown side by side, in this order. Absent on a side
// (an optional field unset, e.g. MFU without a model) stays absent.
constexpr const char* kSummaryPaths[] = {
    "cluster.step_time_ns.min",
    "cluster.step_time_ns.median",
    "cluster.step_time_ns.max",
    "cluster.ratios.host_bound",
    "cluster.ratios.unmasked_comm",
    "cluster.ratios.bubble",
    "cluster.ratios.free",
    "cluster.comm_by_class.EP.unmasked_fraction",
    "cluster.comm_by_class.TP.unmasked_fraction",
    "cluster.comm_by_class.PP.unmasked_fraction",
    "cluster.comm_by_class.DP.unmasked_fraction",
    "cluster.mfu",
    "cluster.hfu",
    "cluster.tokens_per_s",
    "cluster.memory.peak_bytes",
    "cluster.expert_imbalance.max_vio_mean",
    "cluster.rank_count",
    "cluster.steps",
};

// The step's exact partition (METRICS.md: span = compute + comm_exposed +
// copy_exposed + free), with free split into its host-bound kinds and the
// rest, so that the shares of the step change sum to 1 and host-bound time
// is not hidden inside free.
struct Component {
  const char* name;
  double (*get)(const Breakdown&);
};
constexpr Component kPartition[] = {
    {"compute_ns", [](const Breakdown& b) { return double(b.compute_ns()); }},
    {"comm_exposed_ns", [](const Breakdown& b) { return double(b.comm_exposed_ns()); }},
    {"copy_exposed_ns", [](const Breakdown& b) { return double(b.copy_exposed_ns()); }},
    {"host_bound_dispatch_ns", [](const Breakdown& b) { return double(b.host_bound_dispatch_ns()); }},
    {"host_bound_sync_ns", [](const Breakdown& b) { return double(b.host_bound_sync_ns()); }},
    {"free_not_host_bound_ns",
     [](const Breakdown& b) { return double(b.free_ns() - b.host_bound_ns()); }},
};

DiffValue Value(std::string name, std::optional<double> a, std::optional<double> b,
                double step_change, bool time) {
  DiffValue v;
  v.set_name(std::move(name));
  if (a) v.set_a(*a);
  if (b) v.set_b(*b);
  if (a && b) {
    const double d = *b - *a;
    v.set_delta(d);
    if (*a != 0) v.set_relative(d / std::abs(*a));
    if (time && step_change != 0) v.set_share_of_step_change(d / step_change);
  }
  return v;
}

// Largest |delta| first; ties keep the input order (a fixed order).
template <typename T, typename F>
void SortByDelta(google::protobuf::RepeatedPtrField<T>* rows, F delta) {
  std::stable_sort(rows->begin(), rows->end(),
                   [&](const T& x, const T& y) { return std::abs(delta(x)) > std::abs(delta(y)); });
}

std::vector<DiffValue> Partition(const Breakdown& a, double a_div, const Breakdown& b, double b_div,
                                 double step_change) {
  std::vector<DiffValue> out;
  for (const Component& c : kPartition) {
    out.push_back(Value(c.name, c.get(a) / a_div, c.get(b) / b_div, step_change, true));
  }
  std::stable_sort(out.begin(), out.end(), [](const DiffValue& x, const DiffValue& y) {
    return std::abs(x.delta()) > std::abs(y.delta());
  });
  return out;
}

void AddSteps(const Analysis& a, const Analysis& b, Diff* diff) {
  // step number -> (summed breakdown, ranks) over ranks having it on both sides.
  std::map<int32_t, std::tuple<Breakdown, Breakdown, int>> steps;
  std::map<int32_t, const analysis::RankAnalysis*> b_ranks;
  for (const auto& r : b.ranks()) b_ranks.emplace(r.rank(), &r);
  auto add = [](Breakdown* sum, const Breakdown& s) {
    sum->set_span_ns(sum->span_ns() + s.span_ns());
    sum->set_compute_ns(sum->compute_ns() + s.compute_ns());
    sum->set_comm_exposed_ns(sum->comm_exposed_ns() + s.comm_exposed_ns());
    sum->set_copy_exposed_ns(sum->copy_exposed_ns() + s.copy_exposed_ns());
    sum->set_free_ns(sum->free_ns() + s.free_ns());
    sum->set_host_bound_ns(sum->host_bound_ns() + s.host_bound_ns());
    sum->set_host_bound_sync_ns(sum->host_bound_sync_ns() + s.host_bound_sync_ns());
    sum->set_host_bound_dispatch_ns(sum->host_bound_dispatch_ns() + s.host_bound_dispatch_ns());
  };
  for (const auto& ra : a.ranks()) {
    const auto it = b_ranks.find(ra.rank());
    if (it == b_ranks.end()) continue;
    std::map<int32_t, const Breakdown*> b_steps;
    for (int k = 0; k < it->second->steps_size(); ++k) {
      const Breakdown& s = it->second->steps(k);
      b_steps.emplace(s.has_step() ? s.step() : k, &s);
    }
    for (int k = 0; k < ra.steps_size(); ++k) {
      const Breakdown& s = ra.steps(k);
      const int32_t number = s.has_step() ? s.step() : k;
      const auto bs = b_steps.find(number);
      if (bs == b_steps.end()) continue;
      auto& [sa, sb, n] = steps[number];
      add(&sa, s);
      add(&sb, *bs->second);
      ++n;
    }
  }
  for (const auto& [number, t] : steps) {
    const auto& [sa, sb, n] = t;
    analysis::DiffStep* step = diff->add_steps();
    step->set_step(number);
    step->set_ranks(n);
    const double change = double(sb.span_ns() - sa.span_ns()) / n;
    *step->add_components() = Value("span_ns", sa.span_ns() / double(n), sb.span_ns() / double(n),
                                    change, true);
    for (DiffValue& v : Partition(sa, n, sb, n, change)) *step->add_components() = std::move(v);
  }
}

void AddRanks(const Analysis& a, const Analysis& b, Diff* diff) {
  auto step_of = [](const analysis::RankAnalysis& r) {
    return double(r.breakdown().span_ns()) / std::max(1, r.steps_size());
  };
  std::map<int32_t, const analysis::RankAnalysis*> in_a, in_b;
  for (const auto& r : a.ranks()) in_a.emplace(r.rank(), &r);
  for (const auto& r : b.ranks()) in_b.emplace(r.rank(), &r);
  for (const auto& [id, ra] : in_a) {
    const auto it = in_b.find(id);
    if (it == in_b.end()) {
      diff->add_ranks_only_a(id);
      continue;
    }
    analysis::DiffRank* r = diff->add_ranks();
    r->set_rank(id);
    r->set_step_ns_a(step_of(*ra));
    r->set_step_ns_b(step_of(*it->second));
    r->set_delta_ns(r->step_ns_b() - r->step_ns_a());
  }
  for (const auto& [id, rb] : in_b) {
    if (!in_a.count(id)) diff->add_ranks_only_b(id);
  }
  SortByDelta(diff->mutable_ranks(), [](const analysis::DiffRank& r) { return r.delta_ns(); });
}

// Joins two lists by key; `fill(row, a, b)` with a or b null on one side.
template <typename Stat, typename Key, typename Fill>
void Join(const google::protobuf::RepeatedPtrField<Stat>& a,
          const google::protobuf::RepeatedPtrField<Stat>& b, Key key, Fill fill) {
  std::map<decltype(key(a.Get(0))), const Stat*> in_b;
  for (const Stat& s : b) in_b.emplace(key(s), &s);
  std::map<decltype(key(a.Get(0))), bool> seen;
  for (const Stat& s : a) {
    const auto it = in_b.find(key(s));
    fill(&s, it == in_b.end() ? nullptr : it->second);
    seen[key(s)] = true;
  }
  for (const Stat& s : b) {
    if (!seen.count(key(s))) fill(nullptr, &s);
  }
}

const char* Side(const void* a, const void* b) { return a && b ? "both" : a ? "only_a" : "only_b"; }

void AddOperators(const Analysis& a, double a_div, const Analysis& b, double b_div, Diff* diff) {
  const analysis::Operators& oa = a.cluster().operators();
  const analysis::Operators& ob = b.cluster().operators();
  const double change = diff->step_change_ns();
  auto fill_op = [&](analysis::DiffOp* row, int64_t count_a, int64_t total_a, int64_t count_b,
                     int64_t total_b) {
    row->set_count_a(count_a);
    row->set_count_b(count_b);
    row->set_ns_a(total_a / a_div);
    row->set_ns_b(total_b / b_div);
    row->set_delta_ns(row->ns_b() - row->ns_a());
    if (change != 0) row->set_share_of_step_change(row->delta_ns() / change);
  };
  Join(oa.classes(), ob.classes(), [](const analysis::OpClassTime& c) { return c.op_class(); },
       [&](const analysis::OpClassTime* x, const analysis::OpClassTime* y) {
         analysis::DiffOp* row = diff->add_classes();
         row->set_name((x ? x : y)->op_class());
         row->set_op_class(row->name());
         row->set_side(Side(x, y));
         fill_op(row, x ? x->count() : 0, x ? x->total_ns() : 0, y ? y->count() : 0,
                 y ? y->total_ns() : 0);
       });
  Join(oa.top(), ob.top(),
       [](const analysis::OpStat& s) {
         return std::make_tuple(s.name(), s.has_shape(), s.shape());
       },
       [&](const analysis::OpStat* x, const analysis::OpStat* y) {
         const analysis::OpStat& s = x ? *x : *y;
         analysis::DiffOp* row = diff->add_top();
         row->set_name(s.name());
         if (s.has_shape()) row->set_shape(s.shape());
         row->set_op_class(s.op_class());
         row->set_side(Side(x, y));
         fill_op(row, x ? x->count() : 0, x ? x->total_ns() : 0, y ? y->count() : 0,
                 y ? y->total_ns() : 0);
       });
  Join(oa.dispatch(), ob.dispatch(), [](const analysis::DispatchStat& s) { return s.name(); },
       [&](const analysis::DispatchStat* x, const analysis::DispatchStat* y) {
         analysis::DiffDispatch* row = diff->add_dispatch();
         row->set_name((x ? x : y)->name());
         row->set_side(Side(x, y));
         row->set_count_a(x ? x->count() : 0);
         row->set_count_b(y ? y->count() : 0);
         row->set_host_ns_a(x ? x->host_ns() / a_div : 0);
         row->set_host_ns_b(y ? y->host_ns() / b_div : 0);
         row->set_host_bound_ns_a(x ? x->host_bound_ns() / a_div : 0);
         row->set_host_bound_ns_b(y ? y->host_bound_ns() / b_div : 0);
         row->set_delta_host_bound_ns(row->host_bound_ns_b() - row->host_bound_ns_a());
         row->set_delta_host_ns(row->host_ns_b() - row->host_ns_a());
         if (change != 0) row->set_share_of_step_change(row->delta_host_bound_ns() / change);
       });
  auto by_delta = [](const analysis::DiffOp& r) { return r.delta_ns(); };
  SortByDelta(diff->mutable_classes(), by_delta);
  SortByDelta(diff->mutable_top(), by_delta);
  // Host-bound wait first (what lengthened the step), then host time.
  std::stable_sort(diff->mutable_dispatch()->begin(), diff->mutable_dispatch()->end(),
                   [](const analysis::DiffDispatch& x, const analysis::DiffDispatch& y) {
                     const double hx = std::abs(x.delta_host_bound_ns());
                     const double hy = std::abs(y.delta_host_bound_ns());
                     if (hx != hy) return hx > hy;
                     return std::abs(x.delta_host_ns()) > std::abs(y.delta_host_ns());
                   });
  const bool has_a = oa.classes_size() + oa.top_size() > 0;
  const bool has_b = ob.classes_size() + ob.top_size() > 0;
  if (!has_a || !has_b) {
    diff->add_notes(std::string("no operator view in ") +
                    (!has_a && !has_b ? "A nor B" : !has_a ? "A" : "B") +
                    " (cluster.operators is empty: an analysis saved before the operator view, "
                    "or a trace without device ops)");
  }
  // The lists keep the largest entries only: "only in A" means only in A's
  // list. A list at its cap may have left rows out (rows are keyed by name
  // and shape, so distinct_names alone cannot tell).
  auto cut = [](const analysis::Operators& o) {
    return (o.top_size() > 0 && (o.top_size() < o.distinct_names() ||
                                 static_cast<size_t>(o.top_size()) >= ops::kClusterTopRows)) ||
           static_cast<size_t>(o.dispatch_size()) >= ops::kClusterDispatchRows;
  };
  if (cut(oa) || cut(ob)) {
    diff->add_notes("the top-operator and dispatch lists hold the largest entries only: an operator "
                    "\"only in A\" (or B) is only in that side's list, shown as - on the other side "
                    "and counted from 0 in the delta; it may run below the other side's cut");
  }
}

bool AnyChange(const Diff& d) {
  auto moved = [](const DiffValue& v) { return v.has_a() != v.has_b() || v.delta() != 0; };
  for (const DiffValue& v : d.summary()) if (moved(v)) return true;
  for (const DiffValue& v : d.breakdown()) if (moved(v)) return true;
  for (const auto& s : d.steps()) {
    for (const DiffValue& v : s.components()) if (moved(v)) return true;
  }
  for (const auto& o : d.classes()) if (o.side() != "both" || o.delta_ns() != 0 || o.count_a() != o.count_b()) return true;
  for (const auto& o : d.top()) if (o.side() != "both" || o.delta_ns() != 0 || o.count_a() != o.count_b()) return true;
  for (const auto& o : d.dispatch()) {
    if (o.side() != "both" || o.delta_host_ns() != 0 || o.delta_host_bound_ns() != 0) return true;
  }
  for (const auto& r : d.ranks()) if (r.delta_ns() != 0) return true;
  return d.ranks_only_a_size() + d.ranks_only_b_size() > 0 || d.step_change_ns() != 0;
}

}  // namespace

double RankSteps(const Analysis& a) {
  double n = 0;
  for (const auto& r : a.ranks()) n += std::max(1, r.steps_size());
  if (n == 0) n = double(a.cluster().rank_count()) * std::max(1, a.cluster().steps());
  return std::max(1.0, n);
}

Diff BuildDiff(const Analysis& a, const Analysis& b, const std::string& name_a,
               const std::string& name_b) {
  Diff diff;
  diff.set_a(name_a);
  diff.set_b(name_b);
  diff.set_source_a(a.source());
  diff.set_source_b(b.source());
  diff.set_ranks_a(a.ranks_size());
  diff.set_ranks_b(b.ranks_size());
  const double a_div = RankSteps(a), b_div = RankSteps(b);
  diff.set_step_ns_a(a.cluster().breakdown().span_ns() / a_div);
  diff.set_step_ns_b(b.cluster().breakdown().span_ns() / b_div);
  diff.set_step_change_ns(diff.step_ns_b() - diff.step_ns_a());
  const double change = diff.step_change_ns();

  for (const char* path : kSummaryPaths) {
    std::optional<double> va, vb;
    double v = 0;
    if (LookupNumber(a, path, &v) && std::isfinite(v)) va = v;
    if (LookupNumber(b, path, &v) && std::isfinite(v)) vb = v;
    // Unset optional fields read as absent, not as 0 (MFU without a model).
    const std::string_view p(path);
    auto present = [&](const Analysis& x) {
      const auto& c = x.cluster();
      if (p == "cluster.mfu") return c.has_mfu();
      if (p == "cluster.hfu") return c.has_hfu();
      if (p == "cluster.tokens_per_s") return c.has_tokens_per_s();
      if (p == "cluster.expert_imbalance.max_vio_mean") return c.expert_imbalance().has_max_vio_mean();
      return true;
    };
    if (!present(a)) va.reset();
    if (!present(b)) vb.reset();
    if (!va && !vb) continue;
    *diff.add_summary() = Value(path, va, vb, change, false);
  }
  for (DiffValue& v :
       Partition(a.cluster().breakdown(), a_div, b.cluster().breakdown(), b_div, change)) {
    *diff.add_breakdown() = std::move(v);
  }
  AddSteps(a, b, &diff);
  AddRanks(a, b, &diff);
  if (diff.ranks_only_a_size() + diff.ranks_only_b_size() > 0) {
    diff.add_notes(fmt::format(
        "the rank sets differ (ranks only in A: {}, only in B: {}): the cluster figures are means over "
        "each side's own ranks, so their deltas mix the change with the rank sets; compare the "
        "matched ranks below",
        diff.ranks_only_a_size(), diff.ranks_only_b_size()));
  }
  AddOperators(a, a_div, b, b_div, &diff);
  diff.set_no_change(!AnyChange(diff));
  return diff;
}

}  // namespace moetrace
