// `moetrace advise`: rules fed by the analysis propose corrective settings
// in the users' vocabulary (MindSpeed flags, torch_npu environment; see
// shared/docs/ASCEND.md), each only when its evidence is present, each with
// the effect predicted by replaying the trace under the change (tracegen
// traces: generated again with the RunConfig equivalent; recorded traces:
// the graph replay with speed / host / sync modifications).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/proto/analysis.pb.h"
#include "formats/trace.h"
#include "tracegen/proto/run_config.pb.h"

namespace moetrace {
namespace replay { struct RoleMap; }
namespace advise {

struct Evidence {
  std::string metric;  // JSON path of METRICS.md, e.g. cluster.ratios.host_bound
  double value = 0;
};

struct Proposal {
  std::string rule;        // dispatch_host_bound, sync_host_bound, exposed_ep_comm, ...
  // One readable line: the rule's action, then the effect computed from the
  // prediction (effect_text.h), never a promise written in advance.
  std::string title;
  std::string knob;        // in ASCEND.md's vocabulary, e.g. "TASK_QUEUE_ENABLE=2"
  std::vector<std::string> config;  // RunConfig equivalent (empty when none)
  std::vector<std::string> replay;  // the --set keys replay ran (empty = not predicted)
  std::vector<Evidence> evidence;
  std::string detail;      // e.g. the expert migration plan
  std::string fixes;       // the metric it fixes (JSON path)
  bool predicted = false;
  int64_t step_before_ns = 0, step_after_ns = 0;
  double gain = 0;         // (before - after) / before
  double fixes_before = 0, fixes_after = 0;
  int64_t peak_before_bytes = -1, peak_after_bytes = -1;
  double confidence = 0;   // 0..1
  std::string not_proposed;  // why it was dropped (AdviseOptions::dropped only)
};

struct AdviseOptions {
  bool replay = true;  // predict each proposal's effect (one replay each)
  // Search the layouts of a tracegen trace's card count (layout_rule.h):
  // seconds of estimates, then one full simulation per verified layout.
  bool layout = true;
  // Role-reduced (analyzer/replay/roles.h): `trace` holds one representative
  // per role and `analysis` is the whole trace's; the rules that read events
  // (top sync, dispatch threads, routing records) see the representatives.
  const replay::RoleMap* roles = nullptr;
  // When set, receives the candidates the advisor dropped, each with its
  // reason in `not_proposed` (its replay did not lower its own metric or
  // the step time, it would not fit in memory, its plan changes nothing).
  std::vector<Proposal>* dropped = nullptr;
  int threads = 0;  // replays at once and the layout search's threads; 0: one per core
  // The model, cluster and layout of a recorded trace, as the user gives
  // them (advise --config / --preset): checked against the trace
  // (recorded_model.h: InputError when it cannot be the same job), then
  // searched by the layout rule, whose proposal is model-based
  // (layout_rule.h, RecordedStep). Only the layout rule and the bubble rule's
  // evidence (the pipeline's p and m) use it: the other rules still replay
  // the recorded events. InputError on a tracegen trace, which carries its
  // own configuration.
  const tracegen::RunConfig* model = nullptr;
};

// `analysis` is Analyze() of `trace`. Proposals ordered by predicted gain, best first
// (unpredicted ones last).
std::vector<Proposal> Advise(const Trace& trace, const analysis::Analysis& analysis,
                             const AdviseOptions& options = {});

std::string ProposalsJson(const std::vector<Proposal>& proposals);  // {"proposals": [...]}
std::string FormatProposals(const std::vector<Proposal>& proposals);
// "not proposed:" lines for dropped candidates ("" when none).
std::string FormatDropped(const std::vector<Proposal>& dropped);

}  // namespace advise
}  // namespace moetrace
