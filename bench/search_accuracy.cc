// search_accuracy PRESET CARDS [N] [SEED]: the layout search's estimator
// against tracegen's full simulation on N random layouts of the default
// space that fit in HBM (by the estimate). Prints a Markdown row per
// layout as it is simulated, then the share within 10% and Spearman's rank
// correlation (the table of bench/README.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include <fmt/core.h>

#include "analyzer/search/estimate.h"
#include "analyzer/search/space.h"
#include "analyzer/search/verify.h"
#include "tracegen/config.h"

using namespace moetrace;

namespace {

std::vector<double> Ranks(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[idx[k]] = (double(i) + double(j)) / 2 + 1;  // ties: mean rank
    i = j + 1;
  }
  return r;
}

double Spearman(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> x = Ranks(a), y = Ranks(b);
  double mx = std::accumulate(x.begin(), x.end(), 0.0) / x.size();
  double my = std::accumulate(y.begin(), y.end(), 0.0) / y.size();
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

}  // namespace

int main(int argc, char** argv) {
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
