// What replay and advise read: the whole trace when it fits, else one
// representative per role (roles.h), and in both cases the analysis of every
// rank, computed streaming (bounded memory) in the same pass that signs roles.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "analyzer/analyze.h"
#include "analyzer/mpi/communicator.h"
#include "analyzer/replay/roles.h"

namespace moetrace::replay {

enum class Reduce : uint8_t {
  kAuto,   // roles when the trace exceeds kWholeEvents and some ranks share one
  kRoles,  // roles whenever some ranks share one
  kWhole,  // always the whole trace
};
bool ParseReduce(std::string_view name, Reduce* out);  // "auto", "roles", "whole"

// Above this many events the whole graph (~150 B a node, plus the trace and
// its predicted copy) would not fit a few GB.
inline constexpr int64_t kWholeEvents = 10'000'000;

struct ReplayInput {
  Trace trace;                 // every rank, or the representatives
  analysis::Analysis before;   // of every rank
  std::optional<RoleMap> roles;  // set when `trace` holds representatives
};

ReplayInput LoadReplayInput(const TraceSource& source, Reduce reduce,
                            const AnalyzeOptions& options = {});

// The same over the processes of `comm` (collective; every process opened
// `source` alike): each analyses and signs its share of the ranks
// (AnalyzeShares), process 0 groups the roles and reads the trace or the
// representatives. Process 0 returns what LoadReplayInput returns, the
// others an empty input; a failure anywhere throws everywhere
// (AgreeOnError). One process: LoadReplayInput.
ReplayInput LoadReplayInput(const TraceSource& source, Reduce reduce, Communicator& comm,
                            const AnalyzeOptions& options = {});

}  // namespace moetrace::replay
