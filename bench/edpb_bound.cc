// edpb_bound: per MoE layer of a seed_table-size run, EDPB's migration plan
// against the whole-expert bound (bench/expert_bound.h). Runs no simulation:
// the layer's popularity at the measured step, the placement EDPB plans for
// it (as the engine does: from the previous step's popularity, starting from
// the previous migration point's placement), and which EP rank (and node)
// carries the most. Usage: edpb_bound KEY=VALUE... (the seed_table layout,
// pangu-ultra-moe-718b at DP 4, routing.edpb=true; `steps=N` measures the
// last of N steps, default 2; `preset=NAME` another preset in the same
// layout; `routing.redundant_experts=N` adds the most loaded rank with
// N copies per layer, alone, on top of EDPB's plan, and planned with it).
// Bad keys or values exit 2 with the config's message. Pipeline stage of a layer: its model stage
// modulo PP (interleaved and adaptive_pipe; not dualpipe).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/expert_bound.h"
#include "formats/errors.h"
#include "tracegen/config.h"
#include "tracegen/model.h"
#include "tracegen/routing.h"

int main(int argc, char** argv) {
  using namespace moetrace;
  std::vector<std::string> keys = {"steps=2", "parallel.dp=4", "parallel.world_size=512", "routing.edpb=true"};
  std::string preset = "pangu-ultra-moe-718b";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("steps=", 0) == 0) keys[0] = a;
    else if (a.rfind("preset=", 0) == 0) preset = a.substr(7);
    else keys.push_back(a);
  }
  tracegen::RunConfig c;
  try {
    c = tracegen::BuildConfig({preset, "", keys, 0});
  } catch (const InputError& e) {
    std::fprintf(stderr, "edpb_bound: %s\n", e.what());
    return 2;
  }
  const tracegen::ModelShape shape(c);
  if (shape.schedule == "dualpipe") {
    std::fprintf(stderr, "edpb_bound: dualpipe places model stages differently; not supported\n");
    return 2;
  }
  tracegen::RoutingModel m;
  m.seed = c.seed();
  m.experts = shape.experts;
  m.top_k = shape.top_k;
  m.skew = c.routing().skew();
  m.drift = c.routing().drift();
  const int g = shape.expert_group, step = std::max(1, int(c.steps())) - 1;
  const int interval = std::max(1, c.routing().edpb_interval());
  std::printf("step %d, skew %.2f, drift %.2f, %d experts over %d EP ranks; loads over the mean EP rank's\n", step,
              m.skew, m.drift, m.experts, g);
  // With routing.redundant_experts: the most loaded rank with the copies,
  // alone (contiguous, copies from step 0's popularity), added on top of
  // EDPB's plan (the engine before branch redundant) and planned with it
  // (MigrationPlanWithCopies, the engine's EngineImpl::Placement now).
  const int copies = c.routing().redundant_experts();
  std::printf("layer stage | planned max | actual max (EP pos, rank, node in group) | whole-expert bound | hottest expert%s\n",
              copies > 0 ? " | copies alone | copies on the plan | planned with copies" : "");
  for (int ms = 0; ms < shape.model_stages; ++ms) {
    const int stage = ms % shape.pp;
    const std::vector<int32_t> members = shape.EpGroup(shape.RankOf(stage, 0, 0));
    for (int l = shape.stage_first_layer[ms]; l < shape.stage_first_layer[ms] + shape.stage_layers[ms]; ++l) {
      if (l >= shape.layers || !shape.IsMoe(l)) continue;
      // The engine's placement: contiguous until the first migration point,
      // then each point's plan from the step before it (engine_routing.cc).
      std::vector<int32_t> place = tracegen::ContiguousPlacement(m.experts, g);
      tracegen::PlannedPlacement with{place, {}};
      std::vector<double> planned_from;
      for (int at = interval; at <= step; at += interval) {
        planned_from = m.Popularity(l, at - 1);
        place = tracegen::MigrationPlan(planned_from, place, g);
        if (copies > 0) with = tracegen::MigrationPlanWithCopies(planned_from, with.placement, g, copies);
      }
      const std::vector<double> pop = m.Popularity(l, step);
      const std::vector<double> actual = bench::RelativeRankLoads(pop, place, g);
      double planned = 0;  // the plan's own (predicted) maximum; 0 before any migration
      if (!planned_from.empty())
        for (double v : bench::RelativeRankLoads(planned_from, place, g)) planned = std::max(planned, v);
      const int hi = int(std::max_element(actual.begin(), actual.end()) - actual.begin());
      int rank = -1;
      for (int32_t r : members)
        if (shape.EpPosition(r) == hi) rank = r;
      const int node = rank < 0 ? -1 : shape.Node(rank) - shape.Node(members.front());
      const double hottest = *std::max_element(pop.begin(), pop.end()) * g;
      std::printf("%5d %5d | %11.3f | %10.3f (%2d, %4d, %d) | %18.3f | %14.3f", l, stage, planned, actual[size_t(hi)],
                  hi, rank, node, bench::WholeExpertBound(pop, g), hottest);
      if (copies > 0) {
        const std::vector<int32_t> contiguous = tracegen::ContiguousPlacement(m.experts, g);
        const double alone = bench::MaxLoadWithCopies(
            pop, contiguous, tracegen::ReplicateExperts(m.Popularity(l, 0), contiguous, g, copies), g);
        const std::vector<double>& from = planned_from.empty() ? m.Popularity(l, 0) : planned_from;
        const double on_top =
            bench::MaxLoadWithCopies(pop, place, tracegen::ReplicateExperts(from, place, g, copies), g);
        const double together = planned_from.empty() ? alone : bench::MaxLoadWithCopies(pop, with.placement, with.copies, g);
        std::printf(" | %12.3f | %18.3f | %20.3f", alone, on_top, together);
      }
      std::printf("\n");
    }
  }
}
