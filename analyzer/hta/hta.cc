#include "analyzer/hta/hta.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "analyzer/hta/flat_id_map.h"
#include "analyzer/hta/numpy_sort.h"
#include "formats/errors.h"
#include "analyzer/hta/imported_rows.h"

namespace moetrace::hta {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One rank after alignment (§4) and the step filter (§5): `frame` lists row
// positions in HTA's frame order, a row repeated when the join duplicates it.
struct RankFrame {
  const RankRows* rows = nullptr;
  std::vector<int64_t> partner;  // §3, by row position
  std::vector<uint32_t> frame;
};

std::vector<int64_t> Partners(const RankRows& r) {
  std::vector<int64_t> p(r.size());
  struct Last { int64_t cpu = -1, gpu = -1; };
  FlatIdMap ids(r.size() / 2);
  std::vector<Last> last;
  std::vector<uint32_t> id_of(r.size(), FlatIdMap::kNone);
  for (size_t i = 0; i < r.size(); ++i) {
    p[i] = std::min<int64_t>(r.correlation[i], 0);
    if (r.correlation[i] == -1) continue;
    bool added = false;
    id_of[i] = ids.Insert(r.correlation[i], &added);
    if (added) last.emplace_back();
    Last& l = last[id_of[i]];
    (r.IsGpu(i) ? l.gpu : l.cpu) = r.idx[i];
  }
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.correlation[i] == -1) continue;
    const Last& l = last[id_of[i]];
    int64_t other = r.IsGpu(i) ? l.cpu : l.gpu;
    if (other >= 0) p[i] = other;
  }
  return p;
}

std::vector<uint32_t> StepFilter(const RankRows& r) {
  std::vector<uint32_t> cpu, gpu;
  for (uint32_t i = 0; i < r.size(); ++i) (r.IsGpu(i) ? gpu : cpu).push_back(i);
  std::vector<uint32_t> frame;
  if (cpu.empty()) {
    for (uint32_t i = 0; i < r.size(); ++i) frame.push_back(i);
    return frame;
  }
  bool any_step = false;
  int64_t t_last = std::numeric_limits<int64_t>::min();
  for (uint32_t i : cpu) {
    if (r.bits[i] & kRowStepName) {
      any_step = true;
      t_last = std::max(t_last, r.ts[i]);
    }
  }
  if (!any_step) {
    t_last = std::numeric_limits<int64_t>::max();
    for (uint32_t i : cpu) t_last = std::min(t_last, r.ts[i]);
  }
  std::vector<uint32_t> kept_cpu;
  FlatIdMap kept_ids(cpu.size() / 2);
  std::vector<int64_t> kept_per_corr;
  for (uint32_t i : cpu) {
    if (r.ts[i] < t_last) {
      kept_cpu.push_back(i);
      bool added = false;
      uint32_t id = kept_ids.Insert(r.correlation[i], &added);
      if (added) kept_per_corr.push_back(0);
      ++kept_per_corr[id];
    }
  }
  // GPU rows grouped by correlation, groups in order of first appearance.
  FlatIdMap group_ids(gpu.size() / 2);
  std::vector<uint32_t> group_of(gpu.size());
  for (size_t k = 0; k < gpu.size(); ++k) group_of[k] = group_ids.Insert(r.correlation[gpu[k]]);
  const Buckets groups = Buckets::Build(gpu, group_of, group_ids.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    const uint32_t first = groups.rows[groups.begin[g]];
    const uint32_t kept = kept_ids.Find(r.correlation[first]);
    if (kept == FlatIdMap::kNone) continue;
    for (uint32_t k = groups.begin[g]; k < groups.begin[g + 1]; ++k) {
      for (int64_t c = 0; c < kept_per_corr[kept]; ++c) frame.push_back(groups.rows[k]);
    }
  }
  frame.insert(frame.end(), kept_cpu.begin(), kept_cpu.end());
  return frame;
}

// Merged groups of §6.4 over rows listed in `sorted` order.
struct Groups {
  std::vector<int64_t> start;
  std::vector<double> end;
};

// Sorts `rows` (positions, in the given order) by ts with numpy's argsort and
// returns them sorted.
std::vector<uint32_t> SortByTs(const RankRows& r, const std::vector<uint32_t>& rows) {
  std::vector<int64_t> keys(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) keys[i] = r.ts[rows[i]];
  std::vector<uint32_t> perm;
  NumpyArgsort(keys.data(), keys.size(), &perm);
  std::vector<uint32_t> out(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) out[i] = rows[perm[i]];
  return out;
}

Groups MergeSorted(const RankRows& r, const std::vector<uint32_t>& sorted) {
  Groups g;
  double max_end = 0;
  for (size_t k = 0; k < sorted.size(); ++k) {
    uint32_t i = sorted[k];
    double end = static_cast<double>(r.ts[i]) + r.dur[i];
    if (k == 0 || static_cast<double>(r.ts[i]) > max_end) {
      g.start.push_back(r.ts[i]);
      g.end.push_back(end);
      max_end = end;
    } else {
      max_end = std::max(max_end, end);
      g.end.back() = std::max(g.end.back(), end);
    }
  }
  return g;
}

double BusyTime(const Groups& g) {
  int64_t starts = 0;
  for (int64_t s : g.start) starts += s;
  return PairwiseSum(g.end.data(), g.end.size()) - static_cast<double>(starts);
}

double Pct(double x, double span) { return Round2(100.0 * (x / span)); }

// §7. Returns nullopt when HTA's call fails.
std::optional<Temporal> ComputeTemporal(const RankFrame& f, std::string* why) {
  const RankRows& r = *f.rows;
  std::vector<uint32_t> device;
  for (uint32_t i : f.frame) {
    if (r.stream[i] != -1) device.push_back(i);
  }
  if (device.empty()) {
    *why = "no device row";
    return std::nullopt;
  }
  std::vector<uint32_t> sorted = SortByTs(r, device);
  Groups all = MergeSorted(r, sorted);
  Temporal t;
  t.kernel_span_us = all.end.back() - static_cast<double>(all.start.front());
  t.idle_us = t.kernel_span_us - BusyTime(all);
  std::vector<uint32_t> compute;
  for (uint32_t i : sorted) {
    if (r.kclass[i] == KernelClass::kCompute) compute.push_back(i);
  }
  Groups cg = MergeSorted(r, SortByTs(r, compute));
  t.compute_us = BusyTime(cg);
  t.non_compute_us = (t.kernel_span_us - t.compute_us) - t.idle_us;
  if (!(t.idle_us <= t.kernel_span_us) || !(t.compute_us <= t.kernel_span_us) ||
      !(t.non_compute_us >= 0)) {
    *why = "HTA's sanity assertions fail (negative durations)";
    return std::nullopt;
  }
  t.idle_pct = Pct(t.idle_us, t.kernel_span_us);
  t.compute_pct = Pct(t.compute_us, t.kernel_span_us);
  t.non_compute_pct = Pct(t.non_compute_us, t.kernel_span_us);
  return t;
}

// §8.
double ComputeOverlap(const RankFrame& f) {
  const RankRows& r = *f.rows;
  std::vector<uint32_t> compute, comm;
  for (uint32_t i : f.frame) {
    if (r.stream[i] == -1) continue;
    if (r.kclass[i] == KernelClass::kCompute) compute.push_back(i);
    if (r.kclass[i] == KernelClass::kComm) comm.push_back(i);
  }
  Groups cg = MergeSorted(r, SortByTs(r, compute));
  Groups mg = MergeSorted(r, SortByTs(r, comm));
  std::vector<double> times;
  std::vector<int> weights;
  for (int64_t s : mg.start) times.push_back(static_cast<double>(s)), weights.push_back(1);
  for (double e : mg.end) times.push_back(e), weights.push_back(-1);
  for (int64_t s : cg.start) times.push_back(static_cast<double>(s)), weights.push_back(2);
  for (double e : cg.end) times.push_back(e), weights.push_back(-2);
  std::vector<uint32_t> perm;
  NumpyArgsort(times.data(), times.size(), &perm);
  std::vector<double> pieces;
  int total = 0;
  for (size_t k = 0; k < perm.size(); ++k) {
    total += weights[perm[k]];
    if (total == 3 && k + 1 < perm.size()) pieces.push_back(times[perm[k + 1]] - times[perm[k]]);
  }
  double overlap = PairwiseSum(pieces.data(), pieces.size());
  std::vector<double> lens(mg.start.size());
  for (size_t k = 0; k < lens.size(); ++k) lens[k] = mg.end[k] - static_cast<double>(mg.start[k]);
  double comm_us = PairwiseSum(lens.data(), lens.size());
  if (comm_us == 0) return kNaN;  // 0/0 in HTA
  return Round2(100.0 * (overlap / comm_us));
}

// §9. Returns nullopt when the rank has no kernel row (HTA fails).
std::optional<std::map<int64_t, IdleStream>> ComputeIdle(const RankFrame& f) {
  const RankRows& r = *f.rows;
  struct Current { int64_t ts; int64_t count; };
  FlatIdMap idx_ids(f.frame.size());
  std::vector<Current> by_idx;
  for (uint32_t i : f.frame) {
    bool added = false;
    uint32_t id = idx_ids.Insert(r.idx[i], &added);
    if (added) by_idx.push_back(Current{r.ts[i], 0});
    ++by_idx[id].count;
  }
  struct KRow { int64_t ts; double end; bool has_rt; double rt; };
  std::map<int64_t, std::vector<KRow>> streams;
  bool any = false;
  for (uint32_t i : f.frame) {
    if (r.stream[i] == -1 || !(r.bits[i] & kRowIdleCat)) continue;
    any = true;
    KRow k{r.ts[i], static_cast<double>(r.ts[i]) + r.dur[i], false, 0};
    const uint32_t id = idx_ids.Find(f.partner[i]);
    std::vector<KRow>& v = streams[r.stream[i]];
    if (id == FlatIdMap::kNone) {
      v.push_back(k);
    } else {
      k.has_rt = true;
      k.rt = static_cast<double>(by_idx[id].ts);
      for (int64_t c = 0; c < by_idx[id].count; ++c) v.push_back(k);
    }
  }
  if (!any) return std::nullopt;
  std::map<int64_t, IdleStream> out;
  std::vector<int64_t> keys;
  std::vector<uint32_t> perm;
  for (auto& [stream, v] : streams) {
    keys.resize(v.size());
    for (size_t k = 0; k < v.size(); ++k) keys[k] = v[k].ts;
    NumpyArgsort(keys.data(), keys.size(), &perm);
    KahanSum host, kernel, other;
    bool has_host = false, has_kernel = false;
    other.Add(0.0);  // the first row
    for (size_t k = 1; k < perm.size(); ++k) {
      const KRow& cur = v[perm[k]];
      double prev_end = v[perm[k - 1]].end;
      double gap = static_cast<double>(cur.ts) - prev_end;
      if (cur.has_rt && cur.rt > prev_end) {
        host.Add(gap);
        has_host = true;
      } else if (gap < 30) {
        kernel.Add(gap);
        has_kernel = true;
      } else {
        other.Add(gap);
      }
    }
    IdleStream s;
    if (has_host) s.host_wait_us = Round2(host.s);
    if (has_kernel) s.kernel_wait_us = Round2(kernel.s);
    s.other_us = Round2(other.s);
    out[stream] = s;
  }
  return out;
}

// §10.
LaunchStats ComputeLaunch(const RankFrame& f) {
  const RankRows& r = *f.rows;
  FlatIdMap launch_corr;
  for (uint32_t i : f.frame) {
    if (r.bits[i] & kRowLaunchName) launch_corr.Insert(r.correlation[i]);
  }
  auto is_launched = [&](uint32_t i) {
    return launch_corr.Find(r.correlation[i]) != FlatIdMap::kNone;
  };
  // The GPU rows of each launched correlation, in frame order.
  FlatIdMap gpu_ids;
  std::vector<uint32_t> gpu_rows, gpu_group;
  for (uint32_t i : f.frame) {
    if (r.stream[i] != -1 && is_launched(i)) {
      gpu_rows.push_back(i);
      gpu_group.push_back(gpu_ids.Insert(r.correlation[i]));
    }
  }
  const Buckets gpu_of = Buckets::Build(gpu_rows, gpu_group, gpu_ids.size());
  // Records grouped by correlation in order of first appearance among the
  // CPU rows.
  FlatIdMap cpu_ids;
  std::vector<uint32_t> cpu_rows, cpu_group;
  for (uint32_t i : f.frame) {
    if (r.stream[i] != -1 || !is_launched(i)) continue;
    cpu_rows.push_back(i);
    cpu_group.push_back(cpu_ids.Insert(r.correlation[i]));
  }
  const Buckets cpu_groups = Buckets::Build(cpu_rows, cpu_group, cpu_ids.size());
  std::vector<double> delays;
  for (size_t g = 0; g < cpu_groups.size(); ++g) {
    const uint32_t gpu = gpu_ids.Find(r.correlation[cpu_groups.rows[cpu_groups.begin[g]]]);
    if (gpu == FlatIdMap::kNone) continue;
    for (uint32_t k = cpu_groups.begin[g]; k < cpu_groups.begin[g + 1]; ++k) {
      const uint32_t c = cpu_groups.rows[k];
      for (uint32_t m = gpu_of.begin[gpu]; m < gpu_of.begin[gpu + 1]; ++m) {
        const uint32_t d = gpu_of.rows[m];
        double delay = static_cast<double>(r.ts[d] - r.ts[c]) - r.dur[c];
        delays.push_back(std::max(0.0, delay));
      }
    }
  }
  LaunchStats s;
  s.count = static_cast<int64_t>(delays.size());
  if (delays.empty()) return s;
  s.launch_delay_mean_us = PairwiseSum(delays.data(), delays.size()) / delays.size();
  std::sort(delays.begin(), delays.end());
  size_t n = delays.size();
  s.launch_delay_p50_us =
      n % 2 ? delays[n / 2] : (delays[n / 2 - 1] + delays[n / 2]) / 2.0;
  return s;
}

}  // namespace

FileFacts FactsOf(const RankRows& r) {
  FileFacts f;
  f.rank = r.rank;
  f.file = r.file;
  f.rows = r.size();
  f.bad_step_name = r.bad_step_name;
  f.steps = r.step_strings;
  for (int64_t t : r.ts) f.min_ts = std::min(f.min_ts, t);
  return f;
}

SetPlan PlanSet(const std::vector<FileFacts>& files) {
  SetPlan plan;
  // §1.3-1.4: later files replace earlier ones of the same rank; empty
  // ranks are dropped; ranks ascend.
  std::vector<size_t> kept;
  for (size_t i = 0; i < files.size(); ++i) {
    for (auto it = kept.begin(); it != kept.end(); ++it) {
      if (files[*it].rank == files[i].rank) {
        plan.warnings.push_back("rank " + std::to_string(files[i].rank) + ": " + files[i].file +
                                " replaces " + files[*it].file +
                                " (same rank, HTA keeps the later)");
        kept.erase(it);
        break;
      }
    }
    kept.push_back(i);
  }
  std::erase_if(kept, [&](size_t i) { return files[i].rows == 0; });
  std::sort(kept.begin(), kept.end(),
            [&](size_t a, size_t b) { return files[a].rank < files[b].rank; });
  for (size_t i : kept) {
    if (!files[i].bad_step_name.empty()) {
      ThrowInputError(files[i].file, "", "HTA cannot load this set: step name \"" +
                                             files[i].bad_step_name +
                                             "\" does not match ProfilerStep#<N>");
    }
  }
  // §4 alignment.
  plan.t0 = std::numeric_limits<int64_t>::max();
  for (size_t i : kept) plan.t0 = std::min(plan.t0, files[i].min_ts);
  // §5.1.
  std::set<std::string> steps;
  for (size_t i : kept) steps.insert(files[i].steps.begin(), files[i].steps.end());
  plan.step_filter = steps.size() >= 2;
  plan.kept = std::move(kept);
  return plan;
}

HtaRank ComputeRank(RankRows rows, const SetPlan& plan) {
  for (int64_t& t : rows.ts) t -= plan.t0;
  RankFrame f;
  f.rows = &rows;
  f.partner = Partners(rows);
  if (plan.step_filter) {
    f.frame = StepFilter(rows);
  } else {
    f.frame.resize(rows.size());
    for (uint32_t i = 0; i < f.frame.size(); ++i) f.frame[i] = i;
  }
  HtaRank out;
  out.rank = rows.rank;
  out.file = rows.file;
  std::string why;
  out.temporal = ComputeTemporal(f, &why);
  if (!out.temporal) {
    out.temporal_error = "rank " + std::to_string(out.rank) +
                         ": temporal breakdown fails in HTA for the whole set: " + why;
  }
  out.comm_comp_overlap_pct = ComputeOverlap(f);
  out.idle_by_stream = ComputeIdle(f);
  if (!out.idle_by_stream) {
    out.idle_error = "rank " + std::to_string(out.rank) +
                     ": idle breakdown fails in HTA for the whole set: no kernel row";
  }
  out.launch = ComputeLaunch(f);
  return out;
}

void FinishSet(HtaResult* result) {
  bool temporal_ok = true, idle_ok = true;
  for (const HtaRank& r : result->ranks) {
    if (!r.temporal_error.empty()) result->errors.push_back(r.temporal_error), temporal_ok = false;
    if (!r.idle_error.empty()) result->errors.push_back(r.idle_error), idle_ok = false;
  }
  // HTA fails these calls for every rank when one rank fails.
  for (HtaRank& out : result->ranks) {
    if (!temporal_ok) out.temporal.reset();
    if (!idle_ok) out.idle_by_stream.reset();
  }
}

HtaResult ComputeHtaOnRows(std::vector<RankRows> all) {
  std::vector<FileFacts> facts;
  for (const RankRows& r : all) facts.push_back(FactsOf(r));
  const SetPlan plan = PlanSet(facts);
  HtaResult result;
  result.warnings = plan.warnings;
  for (size_t i : plan.kept) result.ranks.push_back(ComputeRank(std::move(all[i]), plan));
  FinishSet(&result);
  return result;
}

HtaResult ComputeHta(const std::vector<std::string>& paths) { return ComputeHta(paths, nullptr); }

namespace {

size_t RowsBytes(const RankRows& r) {
  return r.idx.capacity() * sizeof(int64_t) + r.ts.capacity() * sizeof(int64_t) +
         r.dur.capacity() * sizeof(double) + r.stream.capacity() * sizeof(int64_t) +
         r.correlation.capacity() * sizeof(int64_t) +
         r.kclass.capacity() * sizeof(KernelClass) + r.bits.capacity();
}

}  // namespace

HtaResult ComputeHta(const std::vector<std::string>& paths, ImportedRows* imported,
                     size_t held_rows_bytes) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    for (std::string& f : ListTraceFiles(p)) files.push_back(std::move(f));
  }
  // The plan needs every file's facts before any rank's figures (t0, the
  // step filter, duplicate ranks). Rows are held for that wait only up to
  // `held_rows_bytes`; the rest are read again, one file at a time, when
  // their figures are computed: a few more seconds on sets of thousands of
  // ranks, instead of memory that grows with the set.
  std::vector<FileFacts> facts(files.size());
  std::vector<std::optional<RankRows>> held(files.size());
  std::vector<bool> seen(files.size());
  size_t held_bytes = 0;
  // A file that cannot be read fails the set; which one is named must not
  // depend on the order reads end: the first in listing order.
  std::vector<std::optional<InputError>> errors(files.size());
  auto see = [&](size_t i, std::optional<RankRows> r) {
    seen[i] = true;
    if (!r) {
      try {
        r = ParseKinetoRows(files[i], ReadMaybeGzip(files[i]));
      } catch (const InputError& e) {
        errors[i] = e;
        return;
      }
    }
    facts[i] = FactsOf(*r);
    const size_t bytes = RowsBytes(*r);
    if (held_bytes + bytes <= held_rows_bytes) {
      held_bytes += bytes;
      held[i] = std::move(r);
    }
  };
  if (imported) {
    // Files as the importer finishes them, whatever their order here.
    std::unordered_map<std::string, size_t> index;
    for (size_t i = 0; i < files.size(); ++i) index.emplace(ImportedRows::Key(files[i]), i);
    while (std::optional<std::string> key = imported->NextEnded()) {
      auto it = index.find(*key);
      if (it == index.end() || seen[it->second]) continue;
      see(it->second, imported->Take(files[it->second]));
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (!seen[i]) see(i, imported ? imported->Take(files[i]) : std::nullopt);
  }
  for (const std::optional<InputError>& e : errors) {
    if (e) throw *e;
  }
  const SetPlan plan = PlanSet(facts);
  HtaResult result;
  result.warnings = plan.warnings;
  for (size_t i : plan.kept) {
    RankRows rows = held[i] ? std::move(*held[i]) : ParseKinetoRows(files[i], ReadMaybeGzip(files[i]));
    held[i].reset();
    result.ranks.push_back(ComputeRank(std::move(rows), plan));
  }
  FinishSet(&result);
  return result;
}

}  // namespace moetrace::hta
