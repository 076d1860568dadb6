#include "analyzer/replay/replay_input.h"

namespace moetrace::replay {

bool ParseReduce(std::string_view name, Reduce* out) {
  if (name == "auto") *out = Reduce::kAuto;
  else if (name == "roles") *out = Reduce::kRoles;
  else if (name == "whole") *out = Reduce::kWhole;
  else return false;
  return true;
}

ReplayInput LoadReplayInput(const TraceSource& source, Reduce reduce,
                            const AnalyzeOptions& options) {
  ReplayInput in;
  RoleSignatureSource signed_source(source);
  in.before = Analyze(signed_source, options);
  const bool big = signed_source.events() > kWholeEvents;
  if (reduce == Reduce::kRoles || (reduce == Reduce::kAuto && big)) {
    const auto coupling = signed_source.Coupling();
    RoleMap roles = GroupRoles(signed_source.Signatures(), in.before, &coupling);
    if (roles.Reduces()) {
      in.trace = ReadRepresentatives(source, roles);
      roles.envelope = ApplyEnvelopes(signed_source, roles, &in.trace);
      in.roles = std::move(roles);
      return in;
    }
  }
  in.trace = ReadAll(source);  // every rank its own role, or small enough
  return in;
}

}  // namespace moetrace::replay
