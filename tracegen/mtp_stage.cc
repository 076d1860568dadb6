#include "tracegen/mtp_stage.h"

#include <fmt/core.h>

namespace moetrace::tracegen {

std::string MtpStageError(int stage, int model_stages, int pp, const std::vector<int>& counts) {
  const int last = model_stages - 1;
  if (stage < 0 || stage > last)
    return fmt::format("must be -1 (the last stage) or a (virtual) stage 0..{} (got {})", last, stage);
  if (stage == last) return "";
  // Megatron's PipelineParallelLayerLayout.validate_layer_layout: the MTP
  // sits in the last virtual stage of its rank, not on the first rank.
  if (stage < model_stages - pp)
    return fmt::format("stage {} is not in the last virtual chunk (stages {}..{}): Megatron's layouts put the MTP "
                       "in the last virtual stage of its rank",
                       stage, model_stages - pp, last);
  if (stage % pp == 0) return fmt::format("stage {} is on the first pipeline rank, which Megatron's layouts forbid", stage);
  // Stages between the MTP's and the loss stage would run nothing but p2p:
  // not modelled.
  if (stage != last - 1)
    return fmt::format("only the last stage ({}) or the one before it ({}) is modelled (got {})", last, last - 1,
                       stage);
  if (!counts.empty() && int(counts.size()) == model_stages && counts[size_t(last)] != 0)
    return fmt::format("the last stage holds {} decoder layer(s), which would come after the MTP layer: the split "
                       "must leave it the losses only (parallel.noop_layers padding it, or parallel.balance_stages=true)",
                       counts[size_t(last)]);
  return "";
}

std::vector<int> MtpStageCandidates(int model_stages, int pp) {
  std::vector<int> out{model_stages - 1};
  if (model_stages >= 2 && MtpStageError(model_stages - 2, model_stages, pp).empty()) out.push_back(model_stages - 2);
  return out;
}

}  // namespace moetrace::tracegen
