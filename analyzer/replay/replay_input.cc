#include "analyzer/replay/replay_input.h"

#include <algorithm>
#include <thread>

#include "analyzer/distributed.h"
#include "formats/ordered_ranks.h"

namespace moetrace::replay {

bool ParseReduce(std::string_view name, Reduce* out) {
  if (name == "auto") *out = Reduce::kAuto;
  else if (name == "roles") *out = Reduce::kRoles;
  else if (name == "whole") *out = Reduce::kWhole;
  else return false;
  return true;
}

namespace {

// What follows the analysis: the representatives, with their roles'
// envelopes, when roles reduce the trace (and it is big, for kAuto), else
// every rank. `signed_source` has seen every rank.
void ReadTrace(const TraceSource& source, Reduce reduce, const RoleSignatureSource& signed_source,
               int threads, ReplayInput* in) {
  const bool big = signed_source.events() > kWholeEvents;
  if (reduce == Reduce::kRoles || (reduce == Reduce::kAuto && big)) {
    const auto coupling = signed_source.Coupling();
    RoleMap roles = GroupRoles(signed_source.Signatures(), in->before, &coupling);
    if (roles.Reduces()) {
      in->trace = ReadRepresentatives(source, roles);
      roles.envelope = ApplyEnvelopes(signed_source, roles, &in->trace, threads);
      in->roles = std::move(roles);
      return;
    }
  }
  in->trace = ReadAll(source);  // every rank its own role, or small enough
}

}  // namespace

ReplayInput LoadReplayInput(const TraceSource& source, Reduce reduce,
                            const AnalyzeOptions& options) {
  ReplayInput in;
  if (reduce == Reduce::kWhole) {  // no roles: nothing to sign or envelope
    in.before = Analyze(source, options);
    in.trace = ReadAll(source);
    return in;
  }
  RoleSignatureSource signed_source(source);
  in.before = Analyze(signed_source, options);
  ReadTrace(source, reduce, signed_source, options.threads, &in);
  return in;
}

ReplayInput LoadReplayInput(const TraceSource& source, Reduce reduce, Communicator& comm,
                            const AnalyzeOptions& options) {
  if (comm.size() == 1) return LoadReplayInput(source, reduce, options);
  ReplayInput in;
  in.before = AnalyzeShares(source, options, comm);
  // The replays run on process 0, which signs every rank again for their
  // roles and envelopes (the envelopes are per-op durations of every role:
  // cheaper to read again than to send). Same input as one process.
  OnFirstProcess(comm, [&] {
    RoleSignatureSource signed_source(source);
    if (reduce != Reduce::kWhole) {
      const size_t threads = size_t(std::max(1, options.threads > 0
                                                    ? options.threads
                                                    : int(std::thread::hardware_concurrency())));
      ForEachRankInOrder(signed_source, threads, 2 * threads, [](size_t, const Rank&) {});
    }
    ReadTrace(source, reduce, signed_source, options.threads, &in);
  });
  return in;
}

}  // namespace moetrace::replay
