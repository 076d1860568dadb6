#include "bench/seed_layout.h"

namespace moetrace::bench {

int64_t SeedGlobalBatch(const std::string& preset, const tracegen::RunConfig& run) {
  const tracegen::RunConfig own = tracegen::BuildConfig({preset, "", {}, 0});
  return own.parallel().global_batch_size() / own.parallel().dp() * run.parallel().dp();
}

std::vector<std::string> WithSeedGlobalBatch(const std::string& preset, std::vector<std::string> sets) {
  const tracegen::RunConfig probe = tracegen::BuildConfig({preset, "", sets, 0});
  sets.push_back("parallel.global_batch_size=" + std::to_string(SeedGlobalBatch(preset, probe)));
  return sets;
}

}  // namespace moetrace::bench
