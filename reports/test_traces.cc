#include "reports/test_traces.h"

#include "formats/sample_trace.h"

namespace moetrace {
namespace {

void AddPhase(analysis::RlIteration* it, const std::string& task, const std::string& role, int64_t start,
              int64_t time, int32_t cards, int64_t card_ns) {
  analysis::RlPhase* p = it->add_phases();
  p->set_task(task);
  p->set_role(role);
  p->set_start_ns(start);
  p->set_time_ns(time);
  p->set_share(double(time) / it->time_ns());
  p->set_cards(cards);
  p->set_card_ns(card_ns);
}

}  // namespace

Trace MakeHostileTrace() {
  Trace t = MakeSampleTrace(2, 32, 7);
  t.metadata.origin = kHostileName;
  for (Rank& r : t.ranks) {
    const StringId evil = r.strings.Intern(kHostileName);
    for (Track& track : r.tracks) {
      for (CommRecord& c : track.comms) c.group = evil;
      if (track.kind != TrackKind::kDeviceStream) continue;
      for (size_t i = 0; i < track.events.size(); ++i) {
        if (track.events.category[i] == Category::kCompute) track.events.name[i] = evil;
      }
    }
  }
  return t;
}

// See test_traces.h. A colocated job on 8 cards, staleness 1. Iteration 0 (window 0-10 s):
// rollout 0-4 s with 4 s of long-tail idle card-time (0.5 s per card),
// log-probs 4-5 s, reference 5-6 s, reshard 6-6.5 s, update 6.5-9.5 s,
// reshard back 9.5-10 s. Iteration 1 (window 10-18 s): its rollout
// started at 9 s (stale), a reward role with a hostile name, an unknown
// task, then the update.
analysis::Analysis MakeRlAnalysis() {
  analysis::Analysis a;
  analysis::Rl* rl = a.mutable_rl();
  rl->set_present(true);
  rl->set_placement("colocated");
  rl->set_cards(8);
  rl->set_staleness(1);
  rl->set_iteration_time_ns(8'000'000'000);
  rl->set_utilization(0.8125);
  rl->set_long_tail_idle_share(4.0 / (8 * 18));
  rl->set_switch_share(1.0 / 18);
  rl->set_generated_tokens_per_s(14'000);
  rl->set_trained_tokens_per_s(35'000);
  analysis::RlIteration* i0 = rl->add_iterations();
  i0->set_iteration(0);
  i0->set_start_ns(0);
  i0->set_time_ns(10'000'000'000);
  i0->set_busy_card_ns(76'000'000'000);
  i0->set_utilization(0.95);
  i0->set_long_tail_idle_card_ns(4'000'000'000);
  i0->set_switch_ns(1'000'000'000);
  i0->set_generated_tokens(123'456);
  AddPhase(i0, "generate_sequences", "rollout", 0, 4'000'000'000, 8, 28'000'000'000);
  AddPhase(i0, "compute_log_prob", "actor", 4'000'000'000, 1'000'000'000, 8, 8'000'000'000);
  AddPhase(i0, "compute_ref_log_prob", "ref", 5'000'000'000, 1'000'000'000, 8, 8'000'000'000);
  AddPhase(i0, "reshard_to_train", "actor", 6'000'000'000, 500'000'000, 8, 4'000'000'000);
  AddPhase(i0, "update_actor", "actor", 6'500'000'000, 3'000'000'000, 8, 24'000'000'000);
  AddPhase(i0, "reshard_to_infer", "actor", 9'500'000'000, 500'000'000, 8, 4'000'000'000);
  analysis::RlIteration* i1 = rl->add_iterations();
  i1->set_iteration(1);
  i1->set_start_ns(10'000'000'000);
  i1->set_time_ns(8'000'000'000);
  i1->set_utilization(0.625);
  i1->set_staleness(1);
  AddPhase(i1, "generate_sequences", "rollout", 9'000'000'000, 3'000'000'000, 8, 24'000'000'000);
  AddPhase(i1, "compute_rm_score", "rew<ard>|\"x\"", 12'000'000'000, 1'000'000'000, 4, 4'000'000'000);
  AddPhase(i1, "my<task>", "actor", 13'000'000'000, 1'000'000'000, 1, 1'000'000'000);
  AddPhase(i1, "update_actor", "actor", 14'000'000'000, 4'000'000'000, 8, 32'000'000'000);
  return a;
}

}  // namespace moetrace
