#include "analyzer/advise/recorded_model.h"

#include <algorithm>

#include <fmt/core.h>

#include "formats/errors.h"

namespace moetrace::advise {

std::vector<std::string> CheckModelAgrees(const Trace& trace, const tracegen::RunConfig& config,
                                          int ranks) {
  const auto& par = config.parallel();
  const WorldLayout& rec = trace.metadata.layout;
  auto differs = [&](const char* what, const char* key, int recorded, int configured) {
    if (recorded > 0 && configured > 0 && recorded != configured) {
      throw InputError(fmt::format(
          "advise: the given model cannot be this trace's job: the trace records {} {}, the "
          "configuration {} = {}",
          what, recorded, key, configured));
    }
  };
  differs("world size", "parallel.world_size", rec.world_size, par.world_size());
  differs("tensor parallel size", "parallel.tp", rec.tp, par.tp());
  differs("pipeline parallel size", "parallel.pp", rec.pp, par.pp());
  differs("data parallel size", "parallel.dp", rec.dp, par.dp());
  differs("expert parallel size", "parallel.ep", rec.ep, par.ep());
  int32_t max_rank = -1;
  for (const Rank& r : trace.ranks) max_rank = std::max(max_rank, r.rank);
  if (max_rank >= par.world_size()) {
    throw InputError(fmt::format(
        "advise: the given model cannot be this trace's job: the trace has rank {}, the "
        "configuration parallel.world_size = {}",
        max_rank, par.world_size()));
  }
  // The experts a MoE layer routes to are the model's (a record of another
  // count is another model).
  for (const Rank& r : trace.ranks) {
    for (const RoutingRecord& rec_r : r.routing) {
      const int n = int(rec_r.tokens_per_expert.size());
      if (n > 0 && n != config.model().num_experts()) {
        throw InputError(fmt::format(
            "advise: the given model cannot be this trace's job: rank {} routes layer {} to {} "
            "experts, the configuration model.num_experts = {}",
            r.rank, rec_r.layer, n, config.model().num_experts()));
      }
    }
  }
  // The micro-batches of a step, where the trace numbers them (tracegen's
  // and MindSpeed's micro_batch field): more than the configuration's
  // global batch / (DP x micro-batch size) is another batch; fewer can be a
  // cropped trace, so it is said, not refused.
  int32_t max_mb = -1;
  for (const Rank& r : trace.ranks) {
    for (const Track& t : r.tracks) {
      for (int32_t mb : t.events.micro_batch) max_mb = std::max(max_mb, mb);
    }
  }
  const int64_t per_batch = int64_t(std::max(1, par.micro_batch_size())) * std::max(1, par.dp());
  const int64_t micro_batches = par.global_batch_size() / per_batch;
  if (max_mb >= 0 && max_mb + 1 > micro_batches) {
    throw InputError(fmt::format(
        "advise: the given model cannot be this trace's job: the trace runs {} micro-batches a step, "
        "the configuration {} (parallel.global_batch_size {} / (parallel.dp {} x "
        "parallel.micro_batch_size {}))",
        max_mb + 1, micro_batches, par.global_batch_size(), par.dp(), par.micro_batch_size()));
  }
  std::vector<std::string> notes;
  if (max_mb >= 0 && max_mb + 1 < micro_batches) {
    notes.push_back(fmt::format("the trace shows {} of the configured {} micro-batches a step", max_mb + 1,
                                micro_batches));
  }
  if (ranks < par.world_size()) {
    notes.push_back(fmt::format("the trace holds {} of the configured {} ranks", ranks, par.world_size()));
  }
  // tracegen models Ascend hardware: on another device the comparison of
  // the recorded step with the model's says how far the model is off.
  const std::string& device = trace.metadata.device;
  if (!device.empty() && device.find("Ascend") == std::string::npos) {
    notes.push_back(fmt::format("the trace ran on {}, the model on hardware preset {}", device,
                                config.hardware().preset()));
  }
  return notes;
}

}  // namespace moetrace::advise
