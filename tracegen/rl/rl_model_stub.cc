// STUB, to be dropped when branch rl-model (the real BuildPlan, rl_model.cc)
// is merged: lets the emitter and the generate wiring link on branch
// rl-emit. An RL config is refused as bad input (exit 2) until then.
#include "formats/errors.h"
#include "tracegen/rl/rl_plan.h"

namespace moetrace::tracegen::rl {

Plan BuildPlan(const RunConfig& config, int) {
  ThrowInputError("rl.algorithm", config.rl().algorithm(),
                  "the RL model (BuildPlan) is not in this build yet");
}

}  // namespace moetrace::tracegen::rl
