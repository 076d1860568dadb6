// search_exhaustive PRESET CARDS CHECKPOINT.tsv [--space KEY=V1,V2,...]... [--verify K]
//                   [--limit N] [--stride S] [--reverse] [--rows OUT.tsv]
// Issue #15's "verified top-1 within 2% of the true best": simulates in full
// (search::Simulate, one thread) every valid layout of the space and compares
// the true best with what `moetrace search --space ... --verify K` verifies.
//
// Each simulation is appended to CHECKPOINT.tsv as it finishes (a killed run
// resumes where it stopped: layouts already in the file are not simulated
// again). Layouts are simulated in order of their estimate, those the
// estimate fits in HBM first, so a run stopped early has covered the
// candidates most likely to be the best. --limit N stops after N new
// simulations; --stride S simulates every S-th layout only (a timing sample
// of the whole space; no report); --reverse starts from the other end of the
// order (a second process with its own checkpoint file works towards the
// first; `cat` the two files for the report). --rows writes every layout's
// estimate and simulation (layout, est. step, est. fits, sim. step, sim.
// fits) for a look at where the estimator errs. When every layout is in the file, prints
// the Markdown of bench/README.md ("mid-size model: verified top-1 vs the
// true best").
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <fmt/format.h>

#include "analyzer/search/estimate.h"
#include "analyzer/search/search.h"
#include "analyzer/search/space.h"
#include "analyzer/search/verify.h"
#include "bench/rank_stats.h"
#include "tracegen/config.h"

using namespace moetrace;

namespace {

double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

struct Row {
  search::Layout layout;
  search::Figures est;
  bool est_ok = false;
  bool simulated = false;
  double sim_step = 0, sim_peak = 0, cpu_s = 0;
  bool sim_fits = false;
};

// CHECKPOINT.tsv: layout \t simulated step s \t simulated peak bytes \t fits \t CPU s.
std::map<std::string, std::vector<std::string>> ReadCheckpoint(const std::string& path) {
  std::map<std::string, std::vector<std::string>> done;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string c; std::getline(row, c, '\t');) cells.push_back(c);
    if (cells.size() == 5) done[cells[0]] = cells;  // a line cut by a kill is ignored
  }
  return done;
}

std::string Gib(double bytes) { return fmt::format("{:.1f}", bytes / double(1ull << 30)); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: search_exhaustive PRESET CARDS CHECKPOINT.tsv [--space KEY=V1,V2,...]... "
                 "[--verify K] [--limit N] [--stride S] [--reverse] [--rows OUT.tsv]\n");
    return 2;
  }
  const std::string preset = argv[1], checkpoint = argv[3];
  const int cards = std::atoi(argv[2]);
  std::vector<std::string> space_args;
  int verify = 3;
  long limit = -1, stride = 1;
  bool reverse = false;
  std::string rows_out;
  for (int i = 4; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--reverse") {
      reverse = true;
      --i;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "search_exhaustive: %s needs a value\n", flag.c_str());
      return 2;
    }
    if (flag == "--space") space_args.push_back(argv[i + 1]);
    else if (flag == "--verify") verify = std::atoi(argv[i + 1]);
    else if (flag == "--limit") limit = std::atol(argv[i + 1]);
    else if (flag == "--rows") rows_out = argv[i + 1];
    else if (flag == "--stride") stride = std::max(1L, std::atol(argv[i + 1]));
    else {
      std::fprintf(stderr, "search_exhaustive: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  const tracegen::RunConfig base = tracegen::BuildConfig({preset, "", {}, 1});
  const search::Space space = search::MakeSpace(base, cards, space_args);
  const double hbm = base.hardware().hbm_bytes();

  // Every valid layout, estimated as RunSearch does (same enumeration order,
  // so ties of the estimate break the same way).
  std::vector<Row> rows;
  search::Enumerate(space, base, [&](const search::Layout& l) { rows.push_back({l, {}}); },
                    [](std::string_view) {});
  const search::Estimator estimator(base);
  const double est_cpu0 = CpuSeconds();
  for (Row& r : rows) r.est_ok = estimator.Estimate(r.layout, &r.est);
  const double est_cpu = CpuSeconds() - est_cpu0;

  // The search's ranking: estimated fits, by estimated step, stable.
  std::vector<size_t> by_est;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].est_ok && rows[i].est.fits) by_est.push_back(i);
  std::stable_sort(by_est.begin(), by_est.end(),
                   [&](size_t a, size_t b) { return rows[a].est.step_s < rows[b].est.step_s; });
  // Simulation order: the ranking, then what the estimate rejects for memory
  // (the simulation may fit some of them), by estimated step too.
  std::vector<size_t> order = by_est;
  {
    std::vector<size_t> rest;
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i].est_ok && !rows[i].est.fits) rest.push_back(i);
    std::stable_sort(rest.begin(), rest.end(),
                     [&](size_t a, size_t b) { return rows[a].est.step_s < rows[b].est.step_s; });
    order.insert(order.end(), rest.begin(), rest.end());
  }
  if (reverse) std::reverse(order.begin(), order.end());

  auto done = ReadCheckpoint(checkpoint);
  for (Row& r : rows) {
    auto it = done.find(search::Describe(r.layout));
    if (it == done.end()) continue;
    r.simulated = true;
    r.sim_step = std::stod(it->second[1]);
    r.sim_peak = std::stod(it->second[2]);
    r.sim_fits = it->second[3] == "1";
    r.cpu_s = std::stod(it->second[4]);
  }
  std::fprintf(stderr, "%s on %d cards: %zu valid layouts (%zu fit by the estimate), %zu already simulated\n",
               preset.c_str(), cards, rows.size(), by_est.size(), done.size());

  std::ofstream out(checkpoint, std::ios::app);
  long fresh = 0;
  for (size_t k = 0; k < order.size(); k += size_t(stride)) {
    Row& r = rows[order[k]];
    if (r.simulated) continue;
    if (limit >= 0 && fresh >= limit) break;
    const double c0 = CpuSeconds();
    const search::Figures s = search::Simulate(search::ApplyLayout(base, r.layout), 1);
    r.cpu_s = CpuSeconds() - c0;
    r.simulated = true;
    r.sim_step = s.step_s;
    r.sim_peak = s.peak_bytes;
    r.sim_fits = s.fits;
    // %.9f: the step in ns, exactly what Simulate measured.
    out << fmt::format("{}\t{:.9f}\t{:.0f}\t{}\t{:.4f}\n", search::Describe(r.layout), r.sim_step, r.sim_peak,
                       r.sim_fits ? 1 : 0, r.cpu_s);
    out.flush();
    if (++fresh % 100 == 0) std::fprintf(stderr, "%ld simulated (%zu of %zu in order)\n", fresh, k + 1, order.size());
  }

  size_t n_sim = 0;
  double sim_cpu = 0;
  for (const Row& r : rows) n_sim += r.simulated, sim_cpu += r.simulated ? r.cpu_s : 0;
  if (stride > 1 || n_sim < order.size()) {
    std::vector<double> cpu;
    for (const Row& r : rows)
      if (r.simulated) cpu.push_back(r.cpu_s);
    std::sort(cpu.begin(), cpu.end());
    fmt::print("{} of {} simulated, {:.1f} CPU s (median {:.3f} s, mean {:.3f} s per layout): no report until "
               "every layout is simulated\n",
               n_sim, order.size(), sim_cpu, cpu.empty() ? 0.0 : cpu[cpu.size() / 2],
               cpu.empty() ? 0.0 : sim_cpu / double(cpu.size()));
    return 0;
  }

  // The true best: fastest simulated layout that fits in HBM by the simulation.
  std::vector<size_t> by_sim;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].simulated && rows[i].sim_fits) by_sim.push_back(i);
  std::stable_sort(by_sim.begin(), by_sim.end(),
                   [&](size_t a, size_t b) { return rows[a].sim_step < rows[b].sim_step; });
  std::vector<int> sim_rank(rows.size(), 0), est_rank(rows.size(), 0);
  for (size_t i = 0; i < by_sim.size(); ++i) sim_rank[by_sim[i]] = int(i) + 1;
  for (size_t i = 0; i < by_est.size(); ++i) est_rank[by_est[i]] = int(i) + 1;
  const Row& best = rows[by_sim.front()];

  // What `moetrace search --verify K` shows, run as a user runs it.
  search::SearchOptions so;
  so.top = std::max(1, verify);
  so.verify = verify;
  so.threads = 1;
  const search::SearchResult sr = search::RunSearch(base, space, so);

  fmt::print("{} on {} cards, space `{}`: {} valid layouts, {} fit by the estimate, {} fit by the simulation; "
             "all {} simulated in {:.1f} CPU s ({:.3f} s each on average); {} estimates in {:.2f} CPU s\n\n",
             preset, cards, fmt::format("{}", fmt::join(space_args, " ")), rows.size(), by_est.size(), by_sim.size(),
             n_sim, sim_cpu, sim_cpu / double(n_sim), rows.size(), est_cpu);
  fmt::print("true best (simulated): {}: {:.6f} s, peak {} GiB; estimated {:.6f} s, rank {} by the estimate\n",
             search::Describe(best.layout), best.sim_step, Gib(best.sim_peak), best.est.step_s,
             est_rank[by_sim.front()]);
  double best_verified = std::numeric_limits<double>::infinity();
  for (const search::Ranked& t : sr.top) {
    if (!t.simulated) continue;
    best_verified = std::min(best_verified, t.simulated->step_s);
    fmt::print("search #{}: {}: estimated {:.6f} s, simulated {:.6f} s ({:+.3f}% from the true best)\n", t.rank,
               search::Describe(t.layout), t.estimate.step_s, t.simulated->step_s,
               100 * (t.simulated->step_s / best.sim_step - 1));
  }
  fmt::print("best verified of the top {}: {:+.3f}% from the true best\n", verify,
             100 * (best_verified / best.sim_step - 1));
  if (sr.configured) {
    size_t i = 0;
    for (; i < rows.size(); ++i)
      if (search::Describe(rows[i].layout) == search::Describe(sr.configured->layout)) break;
    fmt::print("preset's layout {}: rank {} of {} by the estimate ({:.6f} s), rank {} of {} by the simulation "
               "({:.6f} s)\n",
               search::Describe(rows[i].layout), sr.configured->rank, by_est.size(), rows[i].est.step_s,
               sim_rank[i], by_sim.size(), rows[i].sim_step);
  }

  // Estimate vs simulation over every layout both runs accept (schedule
  // composed), and over those both fit in HBM.
  std::vector<double> est_all, sim_all, est_fit, sim_fit;
  int within2 = 0, within10 = 0, est_rejects_sim_fits = 0, est_fits_sim_rejects = 0;
  size_t faster_missed = 0;
  for (const Row& r : rows) {
    if (!r.est_ok) continue;
    est_all.push_back(r.est.step_s);
    sim_all.push_back(r.sim_step);
    const double err = std::abs(r.est.step_s / r.sim_step - 1);
    within2 += err <= 0.02, within10 += err <= 0.10;
    if (r.est.fits && r.sim_fits) est_fit.push_back(r.est.step_s), sim_fit.push_back(r.sim_step);
    if (!r.est.fits && r.sim_fits) {
      ++est_rejects_sim_fits;
      if (sr.top.size() && sr.top[0].simulated && r.sim_step < sr.top[0].simulated->step_s) ++faster_missed;
    }
    est_fits_sim_rejects += r.est.fits && !r.sim_fits;
  }
  fmt::print("Spearman (estimate vs simulation): {:.4f} over all {}, {:.4f} over the {} both fit in HBM; "
             "step within 2%: {} ({:.1f}%), within 10%: {} ({:.1f}%)\n",
             bench::Spearman(est_all, sim_all), est_all.size(), bench::Spearman(est_fit, sim_fit), est_fit.size(),
             within2, 100.0 * within2 / double(est_all.size()), within10, 100.0 * within10 / double(est_all.size()));
  fmt::print("memory: {} rejected by the estimate fit by the simulation ({} of them faster than the search's "
             "verified top-1), {} fit by the estimate exceed HBM in the simulation (HBM {} GiB)\n\n",
             est_rejects_sim_fits, faster_missed, est_fits_sim_rejects, Gib(hbm));

  if (!rows_out.empty()) {
    std::ofstream rows_file(rows_out);
    for (const Row& r : rows)
      if (r.est_ok)
        rows_file << fmt::format("{}\t{:.9f}\t{}\t{:.9f}\t{}\n", search::Describe(r.layout), r.est.step_s,
                                 r.est.fits ? 1 : 0, r.sim_step, r.sim_fits ? 1 : 0);
  }

  fmt::print("| sim. rank | layout | simulated step s | estimated step s | est. rank | sim. peak GiB |\n");
  fmt::print("|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < std::min<size_t>(10, by_sim.size()); ++i) {
    const Row& r = rows[by_sim[i]];
    fmt::print("| {} | {} | {:.6f} | {:.6f} | {} | {} |\n", i + 1, search::Describe(r.layout), r.sim_step,
               r.est.step_s, est_rank[by_sim[i]] ? fmt::format("{}", est_rank[by_sim[i]]) : "memory",
               Gib(r.sim_peak));
  }
  return 0;
}
