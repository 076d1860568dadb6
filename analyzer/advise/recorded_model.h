// The model a user gives for a recorded trace (issue #15 part 2): a
// recorded trace (Kineto, Ascend) carries no RunConfig, so the layout rule
// has nothing to search from until the user says which model, cluster and
// layout ran (`advise --config FILE` / `--preset NAME [--set K=V]...`, the
// configuration `generate` reads). Before any advice is built on it, the
// configuration is checked against what the trace itself says of the job.
#pragma once

#include <string>
#include <vector>

#include "formats/trace.h"
#include "tracegen/proto/run_config.pb.h"

namespace moetrace::advise {

// Throws InputError, naming the field and both values, when `config`
// cannot be the job `trace` recorded: a world size (or a parallel size of
// the recorded layout) that differs, a rank id the configured world does
// not have, a routing record with another expert count than the model's,
// more micro-batches a step than the configured batch holds.
// Returns the softer disagreements the proposal should mention (a device
// other than the model's hardware, a trace holding only some ranks).
// `ranks`: how many ranks were analysed (a role-reduced trace holds fewer).
std::vector<std::string> CheckModelAgrees(const Trace& trace, const tracegen::RunConfig& config,
                                          int ranks);

}  // namespace moetrace::advise
