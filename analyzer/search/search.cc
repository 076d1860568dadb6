#include "analyzer/search/search.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include <fmt/core.h>

#include "analyzer/search/verify.h"
#include "analyzer/stable_json.h"

namespace moetrace::search {
namespace {

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

int IndexOf(const char* const* names, int n, const std::string& v) {
  for (int i = 0; i < n; ++i)
    if (v == names[i]) return i;
  return 0;
}

bool SameLayout(const Layout& a, const Layout& b) {
  return a.tp == b.tp && a.pp == b.pp && a.vpp == b.vpp && a.ep == b.ep && a.dp == b.dp &&
         a.mbs == b.mbs && a.extend == b.extend && a.swap == b.swap && a.schedule == b.schedule &&
         a.a2a == b.a2a && a.recompute == b.recompute;
}

struct Entry {
  Layout layout;
  Figures f;
  bool ok = false;
};

}  // namespace

Layout LayoutOf(const tracegen::RunConfig& c) {
  const auto& p = c.parallel();
  Layout l;
  l.tp = p.tp(), l.pp = p.pp(), l.vpp = std::max(1, p.vpp()), l.ep = p.ep(), l.dp = p.dp();
  l.mbs = p.micro_batch_size(), l.extend = p.tp_extend_ep() && p.tp() > 1;
  l.swap = c.memory().swap();
  l.schedule = uint8_t(IndexOf(kSchedules, 4, c.schedule().kind()));
  if (l.schedule == 1 && l.vpp == 1) l.schedule = 0;  // interleaved with one virtual stage
  l.a2a = uint8_t(IndexOf(kA2A, 2, c.comm().a2a()));
  l.recompute = uint8_t(IndexOf(kRecompute, 3, c.memory().recompute()));
  return l;
}

SearchResult RunSearch(const tracegen::RunConfig& base, const Space& space, const SearchOptions& o) {
  SearchResult r;
  r.model = base.model().name();
  r.cards = space.cards;
  r.global_batch = base.parallel().global_batch_size();
  r.seq = base.model().seq_length();
  r.hbm_bytes = base.hardware().hbm_bytes();
  std::vector<Entry> entries;
  Enumerate(
      space, base, [&](const Layout& l) { entries.push_back({l, {}, false}); },
      [&](std::string_view why) {
        auto it = r.rejected.find(why);
        if (it == r.rejected.end()) it = r.rejected.emplace(std::string(why), 0).first;
        ++it->second;
      });
  r.space_size = int64_t(entries.size());
  for (const auto& [k, n] : r.rejected) r.space_size += n;

  // Estimates on every core; the calling thread reports progress.
  const Estimator estimator(base);
  const int threads = o.threads > 0 ? o.threads : int(std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<size_t> next{0}, done{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < entries.size();) {
      entries[i].ok = estimator.Estimate(entries[i].layout, &entries[i].f);
      done.fetch_add(1);
    }
  };
  const double cpu0 = CpuSeconds();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(work);
  while (o.progress && done.load() < entries.size()) {
    o.progress("estimating", int64_t(done.load()), int64_t(entries.size()));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (auto& t : pool) t.join();
  r.estimate_cpu_s = CpuSeconds() - cpu0;
  if (o.progress) o.progress("estimating", int64_t(entries.size()), int64_t(entries.size()));

  std::vector<const Entry*> ranked;
  for (const Entry& e : entries) {
    if (!e.ok) {
      ++r.rejected["schedule"];
      continue;
    }
    ++r.valid;
    if (!e.f.fits) {
      ++r.rejected[std::string(kMemory)];
      continue;
    }
    ranked.push_back(&e);
  }
  r.feasible = int64_t(ranked.size());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const Entry* a, const Entry* b) { return a->f.step_s < b->f.step_s; });
  const Layout mine = LayoutOf(base);
  for (size_t i = 0; i < ranked.size(); ++i) {
    if (int(i) < o.top) r.top.push_back({int(i) + 1, ranked[i]->layout, ranked[i]->f, {}});
    if (SameLayout(ranked[i]->layout, mine) && !r.configured)
      r.configured = Ranked{int(i) + 1, ranked[i]->layout, ranked[i]->f, {}};
  }
  const int verify = std::min<int>(o.verify, int(r.top.size()));
  for (int i = 0; i < verify; ++i) {
    if (o.progress) o.progress("simulating", i, verify);
    r.top[i].simulated = Simulate(ApplyLayout(base, r.top[i].layout), threads);
  }
  // The configured layout too, when the search prefers others: both
  // simulated, side by side.
  if (verify > 0 && r.configured && r.configured->rank > verify)
    r.configured->simulated = Simulate(ApplyLayout(base, r.configured->layout), threads);
  if (o.progress && verify > 0) o.progress("simulating", verify, verify);
  return r;
}

namespace {

std::string FiguresJson(const Figures& f) {
  return fmt::format(
      "{{\"step_s\": {}, \"tokens_per_s\": {}, \"mfu\": {}, \"peak_bytes\": {}, "
      "\"ep_exposed_s\": {}, \"bubble_s\": {}}}",
      FormatJsonDouble(f.step_s), FormatJsonDouble(f.tokens_per_s), FormatJsonDouble(f.mfu),
      FormatJsonDouble(f.peak_bytes), FormatJsonDouble(f.ep_exposed_s), FormatJsonDouble(f.bubble_s));
}

std::string LayoutJson(const Layout& l) {
  return fmt::format(
      "{{\"tp\": {}, \"pp\": {}, \"vpp\": {}, \"ep\": {}, \"tp_extend_ep\": {}, \"dp\": {}, "
      "\"micro_batch_size\": {}, \"schedule\": \"{}\", \"a2a\": \"{}\", \"recompute\": \"{}\", "
      "\"swap\": {}}}",
      l.tp, l.pp, l.vpp, l.ep, l.extend, l.dp, l.mbs, kSchedules[l.schedule], kA2A[l.a2a],
      kRecompute[l.recompute], l.swap);
}

std::string RankedJson(const Ranked& x, int layers, const char* indent) {
  std::string s = fmt::format("{}{{\"rank\": {}, \"layout\": {}, \"mindspeed_args\": \"{}\", \"estimate\": {}",
                              indent, x.rank, LayoutJson(x.layout), MindSpeedArgs(x.layout, layers),
                              FiguresJson(x.estimate));
  if (x.simulated) s += fmt::format(", \"simulated\": {}", FiguresJson(*x.simulated));
  return s + "}";
}

std::string Gib(double b) { return fmt::format("{:.1f}", b / double(1ull << 30)); }

// For people: "12.345 s", "9.21 ms"; "3.48 M" (tokens/s).
std::string Seconds(double s) {
  return s >= 1 ? fmt::format("{:.3f} s", s) : fmt::format("{:.2f} ms", s * 1e3);
}
std::string Rate(double v) {
  return v >= 1e6 ? fmt::format("{:.2f} M", v / 1e6) : v >= 1e3 ? fmt::format("{:.1f} k", v / 1e3)
                                                                  : fmt::format("{:.0f}", v);
}

}  // namespace

std::string SearchJson(const SearchResult& r, int layers) {
  std::string s = "{\n";
  s += fmt::format("  \"model\": \"{}\",\n  \"cards\": {},\n  \"global_batch\": {},\n  \"seq_length\": {},\n",
                   r.model, r.cards, r.global_batch, r.seq);
  s += fmt::format("  \"hbm_bytes\": {},\n  \"space_size\": {},\n  \"valid\": {},\n  \"feasible\": {},\n",
                   FormatJsonDouble(r.hbm_bytes), r.space_size, r.valid, r.feasible);
  s += "  \"rejected\": {";
  bool first = true;
  for (const auto& [k, n] : r.rejected) {
    s += fmt::format("{}\"{}\": {}", first ? "" : ", ", k, n);
    first = false;
  }
  s += "},\n";
  s += fmt::format("  \"estimate_cpu_s\": {},\n", FormatJsonDouble(r.estimate_cpu_s));
  s += "  \"configured\": " + (r.configured ? RankedJson(*r.configured, layers, "") : std::string("null")) + ",\n";
  s += "  \"top\": [";
  for (size_t i = 0; i < r.top.size(); ++i) s += (i ? ",\n" : "\n") + RankedJson(r.top[i], layers, "    ");
  s += r.top.empty() ? "]\n" : "\n  ]\n";
  return s + "}\n";
}

std::string SearchText(const SearchResult& r, int layers) {
  std::string s = fmt::format("search: {} on {} cards, global batch {} x {} tokens, {} GiB HBM\n", r.model,
                              r.cards, r.global_batch, r.seq, Gib(r.hbm_bytes));
  s += fmt::format("space: {} candidates, {} valid layouts, {} fit in HBM\n", r.space_size, r.valid,
                   r.feasible);
  if (!r.rejected.empty()) {
    s += "rejected:";
    for (const auto& [k, n] : r.rejected) s += fmt::format(" {} {},", k, n);
    s.back() = '\n';
  }
  if (r.estimate_cpu_s > 0 && r.valid > 0)
    s += fmt::format("estimator: {} layouts in {:.2f} s CPU ({:.0f} per CPU second)\n", r.valid,
                     r.estimate_cpu_s, double(r.valid) / r.estimate_cpu_s);
  auto row = [&](const char* what, const Figures& f) {
    return fmt::format("     {:<9} step {:>9}  {:>8} tokens/s  MFU {:4.1f}%  peak {:>5} GiB  EP exposed {:>9}  "
                       "bubble {:>9}\n",
                       what, Seconds(f.step_s), Rate(f.tokens_per_s), 100 * f.mfu, Gib(f.peak_bytes),
                       Seconds(f.ep_exposed_s), Seconds(f.bubble_s));
  };
  for (const Ranked& x : r.top) {
    s += fmt::format("#{:<3} {}\n", x.rank, Describe(x.layout));
    s += row("estimated", x.estimate);
    if (x.simulated) {
      s += row("simulated", *x.simulated);
      s += fmt::format("     estimate error {:+.1f}% (step time)\n",
                       100 * (x.estimate.step_s / x.simulated->step_s - 1));
    }
    s += "     " + MindSpeedArgs(x.layout, layers) + "\n";
  }
  if (r.configured) {
    s += fmt::format("configured layout ({}): rank {} of {}\n", Describe(r.configured->layout),
                     r.configured->rank, r.feasible);
    s += row("estimated", r.configured->estimate);
    if (r.configured->simulated) s += row("simulated", *r.configured->simulated);
  }
  else
    s += "configured layout: not in the space, or does not fit in HBM\n";
  return s;
}

}  // namespace moetrace::search
