// The prediction of advise's RL rules (rl_rules.h): the `rl` section
// analyze would compute on the trace a changed RunConfig generates.
//
// Why the plan and not a full generate + analyze: the plan decides every
// phase range (tracegen/rl/README.md: the emitter changes no time), and the
// `rl` section is a function of those ranges alone, so PredictRl gives
// analyze's figures without emitting events. On the 718B RL preset a full
// generate is ~28 s CPU and ~350 MB per candidate, its plan ~10 s and ~80 MB
// (the training engine's pass 1; bench/README.md). rl_predict_test checks the
// two agree field for field on tiny-rl variants.
#pragma once

#include <string>
#include <vector>

#include "analyzer/proto/analysis.pb.h"
#include "tracegen/proto/run_config.pb.h"

namespace moetrace::advise {

// The `rl` section analyze computes for the trace `config` generates
// (config resolved and validated, rl.algorithm set): the plan's phase ranges
// through analyze's FillRl. `threads`: the training engine's pass 1.
analysis::Rl PredictRl(const tracegen::RunConfig& config, int threads = 1);

// `config` with `sets` applied ("rl.placement=colocated", ...) and
// validated; InputError naming the key when the result is not a valid run.
tracegen::RunConfig WithSets(const tracegen::RunConfig& config, const std::vector<std::string>& sets);

}  // namespace moetrace::advise
