// The two sides of `moetrace diff` (each a trace or a saved `analyze
// --json`), loaded side by side where that is safe: `diff` of two saved
// analyses of the 718B trace was two 1.5 s parses on one core.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "analyzer/mpi/communicator.h"
#include "analyzer/proto/analysis.pb.h"

namespace moetrace {

struct InputPair {
  analysis::Analysis a, b;
};

struct InputPairProgress {
  // Ranks analysed (done, total) of side A / B when it is a trace
  // (AnalyzeOptions::progress: from worker threads, serialized).
  std::function<void(size_t, size_t)> analyze_a, analyze_b;
  // Saved analyses parsed (done, total), on process 0's calling thread.
  std::function<void(size_t, size_t)> parse;
};

// LoadInputs({a}) then LoadInputs({b}), with the same results and the same
// errors (A's first when both are bad), but:
//  - two saved analyses are parsed on two threads of process 0 (each cut
//    into slices on half the threads when there are more than two:
//    analyzer/split_analysis_json.h);
//  - A a trace, B saved: B is parsed on a thread of process 0 while A is
//    analysed (a bad B was reported after A's analysis before too);
//  - A saved, B a trace: A is parsed first, on every thread (in slices),
//    so that a bad A still fails before B's (possibly long) analysis;
//  - two traces: analysed in turn, each on every core (AnalyzeDistributed),
//    the first trace released before the second is opened.
// `threads` == 1 parses in turn too. Collective over `comm`: process 0
// gets both analyses, the others empty ones. Throws InputError.
InputPair LoadInputPair(const std::string& a, const std::string& b, int threads,
                        const InputPairProgress& progress, Communicator& comm);

}  // namespace moetrace
