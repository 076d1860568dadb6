// The seed table's reduced layout (bench/seed_table, bench/ep_exposure): DP
// cut to a few replicas, each device still doing the per-device work of the
// preset's full-size job. That work is the preset's sequences per DP rank
// (global batch / DP), kept whatever the run's micro-batch size: at MBS 1 a
// pipeline runs twice the micro-batches it runs at MBS 2, as the real job
// does at a fixed global batch.
#ifndef MOETRACE_BENCH_SEED_LAYOUT_H_
#define MOETRACE_BENCH_SEED_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tracegen/config.h"

namespace moetrace::bench {

// The global batch that gives `run` (the preset with the run's keys, e.g.
// its reduced DP) the preset's own sequences per DP rank.
int64_t SeedGlobalBatch(const std::string& preset, const tracegen::RunConfig& run);

// `sets` with "parallel.global_batch_size=..." appended (SeedGlobalBatch of
// the preset with `sets` applied); throws the config's InputError on a bad key.
std::vector<std::string> WithSeedGlobalBatch(const std::string& preset, std::vector<std::string> sets);

}  // namespace moetrace::bench

#endif  // MOETRACE_BENCH_SEED_LAYOUT_H_
