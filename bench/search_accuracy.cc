// search_accuracy PRESET CARDS [N] [SEED] [--gbs G] [--from K]: the layout
// search's estimator against tracegen's full simulation on N random layouts
// of the default space that fit in HBM (by the estimate). Prints a Markdown
// row per layout as it is simulated (flushed: redirected to a file, the rows
// are a checkpoint), then the share within 10% and Spearman's rank
// correlation (the table of bench/README.md). --gbs sets the global batch
// (a smaller card count with the batch per card kept: a simulation costs
// about global batch x TP / MBS, whatever the cards); --from K skips the
// first K layouts that fit (a run resumed after its K rows).
// search_accuracy --reestimate PRESET TABLE.md [--cards C] [--gbs G]: the
// same table from the simulated steps of an earlier run's rows, estimated
// again (after an estimator change; the simulations are the expensive
// part). Rows of several runs concatenated are numbered again.
// search_accuracy --resimulate PRESET TABLE.md [--gbs G]: the table's rows
// simulated and estimated again, numbers kept (after a simulation change,
// for the rows it affects).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "analyzer/search/estimate.h"
#include "analyzer/search/space.h"
#include "analyzer/search/verify.h"
#include "bench/rank_stats.h"
#include "tracegen/config.h"

using namespace moetrace;
using moetrace::bench::Spearman;

namespace {

// Parses search::Describe's text back into a layout.
bool ParseLayout(const std::string& text, search::Layout* l) {
  std::istringstream in(text);
  std::string w;
  *l = search::Layout();
  while (in >> w) {
    auto num = [&](int* v) { in >> *v; };
    if (w == "TP") num(&l->tp);
    else if (w == "PP") num(&l->pp);
    else if (w == "VPP") num(&l->vpp);
    else if (w == "EP") num(&l->ep);
    else if (w == "DP") num(&l->dp);
    else if (w == "MBS") num(&l->mbs);
    else if (w == "(x") { l->extend = true; in >> w >> w; }
    else if (w == "swap") l->swap = true;
    else if (w.rfind("recompute-", 0) == 0) {
      for (int i = 0; i < 3; ++i)
        if (w.substr(10) == search::kRecompute[i]) l->recompute = uint8_t(i);
    } else {
      bool known = false;
      for (int i = 0; i < 4; ++i)
        if (w == search::kSchedules[i]) l->schedule = uint8_t(i), known = true;
      for (int i = 0; i < 2; ++i)
        if (w == search::kA2A[i]) l->a2a = uint8_t(i), known = true;
      if (!known) return false;
    }
  }
  return true;
}

// The rows of an earlier table (`| n | layout | est | sim | err | est peak |
// sim peak |`) whose layout parses: the cells and the layout.
struct TableRow {
  std::vector<std::string> cells;
  search::Layout layout;
};
std::vector<TableRow> ReadTable(const std::string& table) {
  std::vector<TableRow> rows;
  std::ifstream in(table);
  for (std::string line; std::getline(in, line);) {
    TableRow r;
    std::istringstream row(line);
    for (std::string c; std::getline(row, c, '|');) r.cells.push_back(c);
    if (r.cells.size() < 8 || r.cells[1].find_first_not_of(" 0123456789") != std::string::npos) continue;
    if (ParseLayout(r.cells[2], &r.layout)) rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

// The preset with the global batch set (not through --set overrides: the
// preset's own layout need not divide another batch; every estimated
// layout is checked by the space).
tracegen::RunConfig Base(const std::string& preset, int64_t gbs) {
  tracegen::RunConfig base = tracegen::BuildConfig({preset, "", {}, 1});
  if (gbs > 0) base.mutable_parallel()->set_global_batch_size(gbs);
  return base;
}

int Reestimate(const std::string& preset, const std::string& table, int64_t gbs) {
  tracegen::RunConfig base = Base(preset, gbs);
  search::Estimator estimator(base);
  std::vector<double> est, sim;
  int within = 0;
  fmt::print("| # | layout | estimated step s | simulated step s | error | est. peak GiB | sim. peak GiB |\n");
  fmt::print("|---|---|---|---|---|---|---|\n");
  for (const TableRow& row : ReadTable(table)) {
    const std::vector<std::string>& cells = row.cells;
    const search::Layout& l = row.layout;
    search::Figures e;
    estimator.Estimate(l, &e);
    const double s = std::stod(cells[4]);
    const double err = e.step_s / s - 1;
    within += std::abs(err) <= 0.10;
    est.push_back(e.step_s);
    sim.push_back(s);
    fmt::print("| {} | {} | {:.3f} | {:.3f} | {:+.1f}% | {:.1f} |{}|\n", est.size(), search::Describe(l), e.step_s,
               s, 100 * err, e.peak_bytes / double(1ull << 30), cells[7]);
  }
  fmt::print("\nwithin 10%: {} of {} ({:.0f}%); Spearman rank correlation {:.3f}\n", within, est.size(),
             100.0 * within / std::max<size_t>(1, est.size()), Spearman(est, sim));
  return 0;
}

// Simulates again (and estimates) the layouts of an earlier table's rows:
// after a change to the simulation itself, for the rows it affects.
int Resimulate(const std::string& preset, const std::string& table, int64_t gbs) {
  tracegen::RunConfig base = Base(preset, gbs);
  search::Estimator estimator(base);
  for (const TableRow& row : ReadTable(table)) {
    const std::vector<std::string>& cells = row.cells;
    const search::Layout& l = row.layout;
    search::Figures e;
    estimator.Estimate(l, &e);
    const search::Figures s = search::Simulate(search::ApplyLayout(base, l));
    fmt::print("|{}| {} | {:.3f} | {:.3f} | {:+.1f}% | {:.1f} | {:.1f} |\n", cells[1], search::Describe(l), e.step_s,
               s.step_s, 100 * (e.step_s / s.step_s - 1), e.peak_bytes / double(1ull << 30),
               s.peak_bytes / double(1ull << 30));
    std::fflush(stdout);
  }
  return 0;
}

int main(int argc, char** argv) {
  std::vector<std::string> pos;
  int64_t gbs = 0;
  int from = 0;
  bool reestimate = false, resimulate = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reestimate") reestimate = true;
    else if (a == "--resimulate") resimulate = true;
    else if (a == "--gbs" && i + 1 < argc) gbs = std::atoll(argv[++i]);
    else if (a == "--from" && i + 1 < argc) from = std::atoi(argv[++i]);
    else pos.push_back(a);
  }
  if (reestimate && pos.size() == 2) return Reestimate(pos[0], pos[1], gbs);
  if (resimulate && pos.size() == 2) return Resimulate(pos[0], pos[1], gbs);
  if (reestimate || resimulate || pos.size() < 2) {
    std::fprintf(stderr,
                 "usage: search_accuracy PRESET CARDS [N=30] [SEED=1] [--gbs G] [--from K]\n"
                 "       search_accuracy --reestimate PRESET TABLE.md [--gbs G]\n"
                 "       search_accuracy --resimulate PRESET TABLE.md [--gbs G]\n");
    return 2;
  }
  const std::string preset = pos[0];
  const int cards = std::atoi(pos[1].c_str());
  const int n = pos.size() > 2 ? std::atoi(pos[2].c_str()) : 30;
  const unsigned seed = pos.size() > 3 ? unsigned(std::atoi(pos[3].c_str())) : 1;
  tracegen::RunConfig base = Base(preset, gbs);
  search::Space space = search::MakeSpace(base, cards, {});
  std::vector<search::Layout> valid;
  search::Enumerate(space, base, [&](const search::Layout& l) { valid.push_back(l); },
                    [](std::string_view) {});
  search::Estimator estimator(base);
  std::mt19937_64 rng(seed);
  std::shuffle(valid.begin(), valid.end(), rng);
  fmt::print("{} on {} cards, global batch {}: {} valid layouts; {} random ones that fit, estimate vs simulation\n\n",
             preset, cards, base.parallel().global_batch_size(), valid.size(), n);
  fmt::print("| # | layout | estimated step s | simulated step s | error | est. peak GiB | sim. peak GiB |\n");
  fmt::print("|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  std::vector<double> est, sim;
  int within = 0;
  int skipped = 0;
  for (const search::Layout& l : valid) {
    if (int(est.size()) + from >= n) break;
    search::Figures e;
    if (!estimator.Estimate(l, &e) || !e.fits) continue;
    if (skipped < from) {
      ++skipped;
      continue;
    }
    search::Figures s = search::Simulate(search::ApplyLayout(base, l));
    const double err = e.step_s / s.step_s - 1;
    within += std::abs(err) <= 0.10;
    est.push_back(e.step_s);
    sim.push_back(s.step_s);
    fmt::print("| {} | {} | {:.3f} | {:.3f} | {:+.1f}% | {:.1f} | {:.1f} |\n", from + est.size(), search::Describe(l),
               e.step_s, s.step_s, 100 * err, e.peak_bytes / double(1ull << 30),
               s.peak_bytes / double(1ull << 30));
    std::fflush(stdout);
  }
  fmt::print("\nwithin 10%: {} of {} ({:.0f}%); Spearman rank correlation {:.3f}\n", within, est.size(),
             100.0 * within / std::max<size_t>(1, est.size()), Spearman(est, sim));
  return 0;
}
