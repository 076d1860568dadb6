#include "tracegen/documents.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>

#include "tracegen/rng.h"

namespace moetrace::tracegen {

std::vector<DocSource> ParseDocMix(const std::string& text, std::string* error) {
  std::vector<DocSource> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const size_t colon = item.find(':');
    DocSource s;
    char* end = nullptr;
    bool ok = colon != std::string::npos && colon > 0 && colon + 1 < item.size();
    if (ok) {
      const std::string docs = item.substr(0, colon), mean = item.substr(colon + 1);
      s.docs = std::strtod(docs.c_str(), &end);
      ok = end == docs.c_str() + docs.size();
      s.mean = std::strtod(mean.c_str(), &end);
      ok = ok && end == mean.c_str() + mean.size();
    }
    // Bounded so that the sums over 64 sources stay finite (their shares are what counts).
    if (!ok || !std::isfinite(s.docs) || !std::isfinite(s.mean) || !(s.docs > 0 && s.docs <= 1e15) ||
        !(s.mean >= 1 && s.mean <= 1e9)) {
      *error = "'" + item + "' is not documents:mean_tokens (documents > 0 up to 1e15, mean 1 to 1e9 tokens)";
      return {};
    }
    out.push_back(s);
    if (out.size() > 64) {
      *error = "at most 64 sources";
      return {};
    }
    at = comma + 1;
  }
  return out;
}

double MixtureMeanLength(const std::vector<DocSource>& sources) {
  double docs = 0, tokens = 0;
  for (const DocSource& s : sources) {
    docs += s.docs;
    tokens += s.docs * s.mean;
  }
  return docs > 0 ? tokens / docs : 0;
}

namespace {

// Attention work of one sequence packed from a mixture's documents,
// concatenated and chunked: the sequence starts inside a document, which a
// token picks with probability proportional to its source's tokens; with
// exponential lengths what is left of it is again exponential with its
// source's mean (memoryless), so no earlier sequence needs drawing. Later
// documents start whole, their source picked by document count.
double MixtureLoad(const std::vector<DocSource>& sources, int64_t seq, Rng& rng) {
  double docs = 0, tokens = 0;
  for (const DocSource& s : sources) {
    docs += s.docs;
    tokens += s.docs * s.mean;
  }
  auto pick = [&](bool by_tokens) {
    double u = rng.Uniform() * (by_tokens ? tokens : docs);
    for (const DocSource& s : sources) {
      u -= by_tokens ? s.docs * s.mean : s.docs;
      if (u < 0) return s.mean;
    }
    return sources.back().mean;  // rounding at the top end
  };
  double load = 0;
  int64_t left = seq;
  for (bool first = true; left > 0; first = false) {
    const double mean = pick(first);
    int64_t len = std::max<int64_t>(1, std::llround(-mean * std::log1p(-rng.Uniform())));
    len = std::min(len, left);  // the rest continues in the next sequence
    load += double(len) * double(len);
    left -= len;
  }
  return load;
}

}  // namespace

double DocumentModel::SequenceLoad(int step, int64_t index) const {
  const double s = seq;
  if (!Active()) return s * s;
  // lognormal: mu chosen so that the mean length is `mean`.
  const double mu = std::log(double(mean)) - 0.5 * sigma * sigma;
  Rng rng(Key(seed, 0xd0c5, uint64_t(step), uint64_t(index)));
  if (distribution == "mixture") return MixtureLoad(sources, seq, rng);
  if (distribution != "lognormal") {
    // Fixed lengths: floor(s/m) whole documents and the cut remainder.
    const double m = double(mean), q = std::floor(s / m), r = s - q * m;
    return q * m * m + r * r;
  }
  double load = 0;
  int64_t left = seq;
  while (left > 0) {
    int64_t len = mean;
    if (distribution == "lognormal")
      len = std::max<int64_t>(1, std::llround(std::exp(mu + sigma * rng.Normal())));
    len = std::min(len, left);  // the packer cuts the last document
    load += double(len) * double(len);
    left -= len;
  }
  return load;
}

std::vector<int64_t> RearrangeSequences(const std::vector<double>& loads, int dp, int micro_batches,
                                        int mbs) {
  const int64_t n = int64_t(dp) * micro_batches * mbs;
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  // Ties keep the loader's order: the result is the same on every platform.
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return loads[size_t(a)] > loads[size_t(b)]; });
  std::vector<int64_t> slot(static_cast<size_t>(n));
  const int64_t rounds = int64_t(micro_batches) * mbs;
  for (int64_t k = 0; k < rounds; ++k) {
    const int mb = int(k % micro_batches), within = int(k / micro_batches);
    for (int i = 0; i < dp; ++i) {
      // Alternate from one round to the next, and between the rounds of one
      // micro-batch (k / micro_batches), so ranks' totals and each
      // micro-batch's spread both stay within one round's spread.
      const int d = (k + k / micro_batches) % 2 == 0 ? i : dp - 1 - i;
      slot[size_t((int64_t(d) * micro_batches + mb) * mbs + within)] = order[size_t(k * dp + i)];
    }
  }
  return slot;
}

std::vector<double> DocumentModel::AttentionFactors(int step) const {
  const int64_t n = int64_t(dp) * micro_batches * mbs;
  std::vector<double> out(size_t(dp) * micro_batches, Active() ? 0.0 : 1.0);
  if (!Active()) return out;
  std::vector<double> loads(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) loads[size_t(i)] = SequenceLoad(step, i);
  std::vector<int64_t> slot;
  if (rearrange) slot = RearrangeSequences(loads, dp, micro_batches, mbs);
  const double full = double(mbs) * double(seq) * double(seq);
  for (int64_t i = 0; i < n; ++i) {
    const double l = loads[size_t(rearrange ? slot[size_t(i)] : i)];
    out[size_t(i / mbs)] += l / full;
  }
  return out;
}

}  // namespace moetrace::tracegen
