// MindSpeed's --noop-layers: the layer stack padded with identity layers so
// that an even split divides it (Megatron's VPP needs num_layers divisible
// by pp x vpp: 61 layers on PP 16, VPP 2 do not run without it). This is the
// layer split a user without a balancing tool runs; MindSpeed-LLM's
// DeepSeek-V3 recipe (61 layers + 1 MTP) pads to 64 with
// `--noop-layers 61,62,63` (tracegen/README.md, "The baseline layer split").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace moetrace::tracegen {

// Parses "61,62,63" (indices in the padded numbering, 0-based). Returns
// false with a reason in *error for a non-integer, a negative or repeated
// index, or an empty entry (a leading, trailing or doubled comma). ""
// parses to no index.
bool ParseNoopLayers(std::string_view s, std::vector<int>* out, std::string* error);

// Real (non-noop) layers per model stage: the padded stack of
// layers + noop.size() layers cut into `slices` equal runs, each run's noop
// indices taken out. Empty, with a reason in *error, when the padded count
// does not divide into the slices or an index is past the padded stack.
std::vector<int> NoopPaddedSplit(int layers, const std::vector<int>& noop, int slices, std::string* error);

}  // namespace moetrace::tracegen
