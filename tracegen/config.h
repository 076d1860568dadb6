// RunConfig: presets, JSON configs, --set overrides, hardware resolution and
// validation. Every error is an InputError naming the file or the key, so
// the command line reports it with exit code 2.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tracegen/proto/run_config.pb.h"

namespace moetrace::tracegen {

struct PresetInfo {
  std::string name;
  std::string description;
};

// Run presets (tracegen/presets/*.json), sorted by name.
std::vector<PresetInfo> ListPresets();
std::vector<std::string> ListHardwarePresets();

// The preset `name` as written (hardware not yet resolved).
RunConfig PresetConfig(std::string_view name);
// A JSON RunConfig; when it names a "preset", its keys override that preset.
RunConfig ParseConfigJson(std::string_view json, std::string_view file);
RunConfig LoadConfigFile(const std::string& path);
// Applies "dotted.key=value" through reflection; unknown keys and values of
// the wrong type are rejected naming the key.
void ApplyOverride(RunConfig* config, std::string_view assignment);
// Fills every hardware figure not set explicitly from the calibration of
// hardware.preset.
void ResolveHardware(RunConfig* config);
// Rejects impossible layouts and unknown enum strings, naming the key.
void Validate(const RunConfig& config);
// Whether EDPB's balanced split (EngineImpl::BalanceStages) will replace
// the layer split: parallel.balance_stages on, no parallel.layers_per_stage,
// not DualPipe, at least two model stages, not an RL run. Validate checks
// parallel.noop_layers whenever it will not, since the padding is then the
// split that runs. Keep in step with BalanceStages' early return.
bool BalancedSplitRuns(const RunConfig& config);

// The issuing threads' own time per op, host.python_op_ns and
// host.autograd_op_ns of the Pangu presets (tracegen/README.md). On the
// real torch_npu trace shared/traces/ascend/advisor-timeline (task queue
// on) the mean interval from the previous enqueue of any op to an aclnn
// op's enqueue (intervals < 1 ms: none spans a blocking wait) is 31.1 us on the Python thread
// (forward, optimizer) and 62.3 us on the autograd thread (backward). The
// mean, not the median (21.8 / 55.8 us): the engine sums these costs over
// thousands of ops, and the upper quartile is where the host-side
// aclnnXxxGetWorkspaceSize runs (aten::div, addcdiv_, autograd's add_:
// 45-118 us against add_ / mul_'s 12). The framework cost and the enqueue
// of atlas-800t-a2 (12 + 2.5 us, same trace) are already per op, the rest
// is the thread's own: Python model code between ops, the autograd
// engine's bookkeeping (views, AccumulateGrad), the host-side tiling.
inline constexpr double kPythonOpNs = 31100 - 14500;
inline constexpr double kAutogradOpNs = 62300 - 14500;

// preset or config file, then overrides, then --steps, resolved and validated.
struct ConfigRequest {
  std::string preset;
  std::string config_path;
  std::vector<std::string> overrides;
  int steps = 0;  // 0 = as configured; an RL config: rl.iterations
};
RunConfig BuildConfig(const ConfigRequest& request);

std::string ConfigToJson(const RunConfig& config);

}  // namespace moetrace::tracegen
