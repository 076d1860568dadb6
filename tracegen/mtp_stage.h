// Where the MTP modules' layers may run (parallel.mtp_stage): Megatron's
// --pipeline-model-parallel-layout (ported to MindSpeed) lets a layout put
// the MTP layers ("m") on a virtual stage before the loss stage ("L"),
// as in its DeepSeek-V3 recipe "Et*3|(tt|)*29,m|L"; the MTP's output head
// and loss still run in post-processing, on the loss stage
// (tracegen/README.md, "The MTP layer on its own stage", with sources).
#pragma once

#include <string>
#include <vector>

namespace moetrace::tracegen {

// Why `stage` cannot hold the MTP layers of a model cut into `model_stages`
// slices, slice s on pipeline rank s % pp; "" when it can. Megatron's rules:
// the last virtual stage of its rank (the last chunk), not on the first
// pipeline rank, after every decoder layer (`counts`, layers per slice,
// when known: the slices after it hold none). Modelled here: the last
// slice or the one before it (the last then runs the losses only).
std::string MtpStageError(int stage, int model_stages, int pp, const std::vector<int>& counts = {});

// The slices EDPB's split may put the MTP layers on, today's (the last)
// first: the last and, where MtpStageError allows it, the one before.
std::vector<int> MtpStageCandidates(int model_stages, int pp);

}  // namespace moetrace::tracegen
