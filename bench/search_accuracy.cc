// search_accuracy PRESET CARDS [N] [SEED]: the layout search's estimator
// against tracegen's full simulation on N random layouts of the default
// space that fit in HBM (by the estimate). Prints a Markdown row per
// layout as it is simulated, then the share within 10% and Spearman's rank
// correlation (the table of bench/README.md).
// search_accuracy --reestimate PRESET TABLE.md: the same table from the
// simulated steps of an earlier run's rows, estimated again (after an
// estimator change; the simulations are the expensive part).
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

}  // namespace

int Reestimate(const std::string& preset, const std::string& table) {
  tracegen::RunConfig base = tracegen::BuildConfig({preset, "", {}, 1});
  search::Estimator estimator(base);
  std::ifstream in(table);
  std::string line;
  std::vector<double> est, sim;
  int within = 0;
  fmt::print("| # | layout | estimated step s | simulated step s | error | est. peak GiB | sim. peak GiB |\n");
  fmt::print("|---|---|---|---|---|---|---|\n");
  while (std::getline(in, line)) {
    // | n | layout | est | sim | err | est peak | sim peak |
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string c; std::getline(row, c, '|');) cells.push_back(c);
    if (cells.size() < 8 || cells[1].find_first_not_of(" 0123456789") != std::string::npos) continue;
    search::Layout l;
    if (!ParseLayout(cells[2], &l)) continue;
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

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--reestimate") return Reestimate(argv[2], argv[3]);
  if (argc < 3) {
    std::fprintf(stderr, "usage: search_accuracy PRESET CARDS [N=30] [SEED=1]\n");
    return 2;
  }
  const std::string preset = argv[1];
  const int cards = std::atoi(argv[2]);
  const int n = argc > 3 ? std::atoi(argv[3]) : 30;
  const unsigned seed = argc > 4 ? unsigned(std::atoi(argv[4])) : 1;
  tracegen::RunConfig base = tracegen::BuildConfig({preset, "", {}, 1});
  search::Space space = search::MakeSpace(base, cards, {});
  std::vector<search::Layout> valid;
  search::Enumerate(space, base, [&](const search::Layout& l) { valid.push_back(l); },
                    [](std::string_view) {});
  search::Estimator estimator(base);
  std::mt19937_64 rng(seed);
  std::shuffle(valid.begin(), valid.end(), rng);
  fmt::print("{} on {} cards: {} valid layouts; {} random ones that fit, estimate vs simulation\n\n",
             preset, cards, valid.size(), n);
  fmt::print("| # | layout | estimated step s | simulated step s | error | est. peak GiB | sim. peak GiB |\n");
  fmt::print("|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  std::vector<double> est, sim;
  int within = 0;
  for (const search::Layout& l : valid) {
    if (int(est.size()) >= n) break;
    search::Figures e;
    if (!estimator.Estimate(l, &e) || !e.fits) continue;
    search::Figures s = search::Simulate(search::ApplyLayout(base, l));
    const double err = e.step_s / s.step_s - 1;
    within += std::abs(err) <= 0.10;
    est.push_back(e.step_s);
    sim.push_back(s.step_s);
    fmt::print("| {} | {} | {:.3f} | {:.3f} | {:+.1f}% | {:.1f} | {:.1f} |\n", est.size(), search::Describe(l),
               e.step_s, s.step_s, 100 * err, e.peak_bytes / double(1ull << 30),
               s.peak_bytes / double(1ull << 30));
    std::fflush(stdout);
  }
  fmt::print("\nwithin 10%: {} of {} ({:.0f}%); Spearman rank correlation {:.3f}\n", within, est.size(),
             100.0 * within / std::max<size_t>(1, est.size()), Spearman(est, sim));
  return 0;
}
