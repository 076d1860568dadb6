// Document lengths in packed sequences and EDPB's data re-arrangement
// across DP (RunConfig.data). Each sequence of `seq` tokens is packed with
// documents drawn from the configured distribution (the last one cut at the
// sequence end); causal attention runs within each document, so a
// sequence's attention work is sum(l_i^2) instead of seq^2. DP ranks then
// hold micro-batches of different attention work, and every collective
// that spans DP ranks (the EP all-to-alls, the gradient synchronisation)
// waits for the slowest. EDPB re-arranges the step's sequences across DP
// ranks and micro-batches so that each micro-batch index carries about the
// same attention work on every DP rank.
//
// `mixture` draws documents from a corpus's sources as a published data-mix
// table gives them (documents and tokens per source, tracegen/README.md):
// exponential lengths within a source (the maximum-entropy law given only
// its mean: no shape to choose), concatenated and chunked as Megatron's
// GPTDataset does, so a long document continues into the next sequence
// instead of being dropped at the cut.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace moetrace::tracegen {

// One source of a mixture: its share of the documents (any unit) and their
// mean length in tokens.
struct DocSource {
  double docs = 0;
  double mean = 0;
  bool operator==(const DocSource&) const = default;
};

// "docs:mean,docs:mean,...", e.g. "3150:1432,83.8:9606". Empty on a
// malformed list, with *error saying why (both > 0 and finite, at most 64
// sources).
std::vector<DocSource> ParseDocMix(const std::string& text, std::string* error);

// Mean document length of a mixture, documents weighted by their count
// (the mean a corpus's total tokens / total documents gives).
double MixtureMeanLength(const std::vector<DocSource>& sources);

struct DocumentModel {
  std::string distribution;  // "" (one document per sequence) | fixed | lognormal | mixture
  int mean = 0;              // tokens
  double sigma = 0;          // lognormal shape
  std::vector<DocSource> sources;  // mixture
  int seq = 1;               // tokens per sequence
  int mbs = 1;               // sequences per micro-batch
  int dp = 1;
  int micro_batches = 1;     // per DP rank and step
  uint64_t seed = 1;
  bool rearrange = false;    // EDPB's re-arrangement across DP

  bool Active() const { return !distribution.empty(); }
  // Attention work of one sequence (sum of its documents' l^2, tokens^2):
  // sequence `index` of `step` in the data loader's order.
  double SequenceLoad(int step, int64_t index) const;
  // Per (DP rank, micro-batch), dp-major: the micro-batch's attention work
  // relative to one document per sequence (mbs * seq^2), after the
  // re-arrangement when `rearrange`. The data loader gives DP rank d the
  // sequences d*M*mbs .. (d+1)*M*mbs - 1 of the step, in order.
  std::vector<double> AttentionFactors(int step) const;
};

// The re-arrangement: sequences sorted by attention work (heaviest first)
// are dealt in rounds of `dp`, one to each DP rank; round k goes to
// micro-batch k % micro_batches (its sequence k / micro_batches), so each
// micro-batch index gets sequences of about the same work on every DP rank,
// and the order alternates (snake) from round to round and between the
// rounds of one micro-batch, so the ranks' totals, and each micro-batch's,
// differ by at most about one round's spread.
// Returns, per slot (dp-major, then micro-batch, then sequence within it),
// the index of the sequence placed there. Token counts are unchanged (every
// sequence has `seq` tokens); only which rank trains which sequence moves.
std::vector<int64_t> RearrangeSequences(const std::vector<double>& loads, int dp, int micro_batches,
                                        int mbs);

}  // namespace moetrace::tracegen
