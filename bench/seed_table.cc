// seed_table: reproduces ASCEND.md's published effects on the
// pangu-ultra-moe-718b preset, each as a pair of runs that differ only in
// one knob, and prints a Markdown table (committed in bench/README.md).
//
// To keep it minutes on a shared machine, DP is reduced from 48 to 4 (one EP
// group per pipeline stage): every device does exactly the per-device work
// of the 6,144-card job (same micro-batches per pipeline, same layers and
// expert groups); only the DP gradient collectives see 4 instead of 48
// members, whose ring time (n-1)/n * S/B changes by < 25% and sits in the
// optimizer tail. Ranks kept whole: rank 0 of every pipeline stage (spans,
// host stalls, memory: the step span is common to a stage's ranks). The EP
// rows (unmasked share, hierarchical all-to-all) sum every rank of each
// stage's EP group instead (Run's ep_groups, bench/ep_sample.h): one rank per
// stage is a biased sample of who waits in an all-to-all under skew.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string_view>
#include <tuple>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "bench/ep_sample.h"
#include "bench/seed_layout.h"
#include "bench/seed_rows.h"
#include "bench/seed_table_rl.h"
#include "formats/errors.h"
#include "formats/trace_io.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"
#include "tracegen/model.h"

namespace {

using moetrace::tracegen::BuildConfig;
using moetrace::tracegen::RunConfig;

struct Result {
  double span = 0, compute = 0, mfu = 0, hfu = 0, tokens_per_s = 0, tokens_per_s_per_card = 0, ep_total = 0,
         ep_exposed = 0, host_bound = 0, act_peak = 0, mem_peak = 0;
  // EDPB's expert migration (EP class, in the step prologue): time and the
  // part no compute overlaps. Not the token all-to-alls Adaptive Pipe masks.
  double mig_total = 0, mig_exposed = 0;
  // Host-bound by kind (share of the span) and the mean host-bound-sync time
  // per blocking host sync of the measured step (the length of one stall).
  double host_sync = 0, host_dispatch = 0, stall_ns = 0;
  // Device idle from the counts' arrival to the first op issued after the read
  // (the output_splits read), and from the router's last op to the counts'
  // all-gather (the input_splits read).
  double stall_device_ns = 0, stall1_device_ns = 0;
  int64_t syncs = 0;
  bool oom = false;
  // ep_total .. mig_exposed are over `ep` (EP groups or the kept ranks);
  // `ep0` is always the kept ranks' (rank 0 of each stage), for comparison.
  moetrace::bench::EpSum ep, ep0;
  // Unmasked share of the MoE layers' EP all-to-alls (migration apart).
  double A2AUnmasked() const { return ep.A2AUnmasked(); }
};

// `seed_table --set KEY=VALUE`: keys applied to every pre-training run
// before the row's own (a row's knob still wins), for sensitivity studies,
// e.g. the Adaptive Pipe rows at another routing.skew. The table itself
// uses none.
std::vector<std::string> g_sets;

// `ep_groups`: generate every rank of each stage's EP group and take the EP
// figures over them (events of the kept ranks only; the others reduced to
// labels and migration time by the sink). Otherwise over the kept ranks.
Result Run(std::vector<std::string> sets, bool full_dp = false, const std::string& preset = "pangu-ultra-moe-718b",
           bool ep_groups = false) {
  std::vector<std::string> all = {"steps=2"};
  if (!full_dp) {
    all.push_back("parallel.dp=4");
    all.push_back("parallel.world_size=512");
  } else {
    all = {"steps=1"};
  }
  all.insert(all.end(), g_sets.begin(), g_sets.end());
  for (auto& s : sets) all.push_back(s);
  // The preset's sequences per DP rank (bench/seed_layout.h): at MBS 1 a
  // pipeline runs 128 micro-batches, as the full-size job does.
  all = moetrace::bench::WithSeedGlobalBatch(preset, all);
  RunConfig c = BuildConfig({preset, "", all, 0});
  std::vector<int32_t> kept, ranks;
  std::vector<std::vector<int32_t>> groups;  // per stage, sorted
  const int per_stage = c.parallel().dp() * c.parallel().tp();
  const moetrace::tracegen::ModelShape shape(c);
  for (int s = 0; s < c.parallel().pp(); ++s) {
    kept.push_back(s * per_stage);
    // The EP group of the stage's rank 0 (at DP 4 x TP 8 with EP 4 x TP 8,
    // the stage's 32 ranks): from the model's layout, not assumed.
    groups.push_back(ep_groups ? shape.EpGroup(s * per_stage) : std::vector<int32_t>{s * per_stage});
    std::sort(groups.back().begin(), groups.back().end());
    ranks.insert(ranks.end(), groups.back().begin(), groups.back().end());
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  const int step = full_dp ? 0 : 1;  // second step: routing drifted, EDPB migrated
  moetrace::bench::SampleSink sink(kept, step);
  auto summary = moetrace::tracegen::Generate(c, ranks, sink);
  const auto& t = sink.trace();
  Result r;
  r.oom = !summary.warnings.empty();
  auto ep_over = [&](const std::vector<int32_t>& rs) {
    moetrace::bench::EpSum e = sink.Migration(rs);
    moetrace::bench::AddEpLabels(t.metadata.ground_truth, step, rs, &e);
    return e;
  };
  r.ep = ep_over(ranks);
  r.ep0 = ep_over(kept);
  if (ep_groups) {
    // Each stage's group against its rank 0, for the README's note.
    std::string line = "    per stage, all-to-alls unmasked, EP group (rank 0):";
    for (const auto& g : groups)
      line += fmt::format(" {:.2f} ({:.2f})", 100 * ep_over(g).A2AUnmasked(), 100 * ep_over({g[0]}).A2AUnmasked());
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  r.ep_total = r.ep.total;
  r.ep_exposed = r.ep.exposed;
  r.mig_total = r.ep.mig_total;
  r.mig_exposed = r.ep.mig_exposed;
  std::map<std::string, double> sum;
  int n = 0;
  for (const auto& l : t.metadata.ground_truth) {
    if (l.step != step || !std::binary_search(kept.begin(), kept.end(), l.rank)) continue;
    sum[l.key] += l.value;
    if (l.key == "breakdown.span_ns") ++n;
    if (l.key == "memory.peak_allocated_bytes") r.mem_peak = std::max(r.mem_peak, l.value);
  }
  r.span = sum["breakdown.span_ns"] / n;
  r.compute = sum["breakdown.compute_ns"] / n;
  r.host_bound = sum["breakdown.host_bound_ns"] / sum["breakdown.span_ns"];
  r.host_sync = sum["breakdown.host_bound_sync_ns"] / sum["breakdown.span_ns"];
  r.host_dispatch = sum["breakdown.host_bound_dispatch_ns"] / sum["breakdown.span_ns"];
  // Stalls: every blocking host sync of the measured step (token-count reads,
  // the loss read) over the ranks written.
  for (const auto& rank : t.ranks)
    for (const auto& tr : rank.tracks) {
      if (tr.kind != moetrace::TrackKind::kHostThread) continue;
      for (size_t i = 0; i < tr.events.size(); ++i)
        if (tr.events.category[i] == moetrace::Category::kSync && (tr.events.flags[i] & moetrace::kFlagBlocking) &&
            tr.events.step[i] == (full_dp ? 0 : 1))
          ++r.syncs;
    }
  r.stall_ns = r.syncs > 0 ? sum["breakdown.host_bound_sync_ns"] / double(r.syncs) : 0;
  // One synchronous stall, measured on the device: from the end of the
  // token-count all-gather the host waited for to the start of the first op
  // it issued after the read (same micro-batch and layer).
  double stall_sum = 0, stall1_sum = 0;
  int64_t stalls = 0, stalls1 = 0;
  for (const auto& rank : t.ranks) {
    std::map<std::tuple<int32_t, int32_t, int>, int64_t> gather_end, router_end;
    std::map<std::tuple<int32_t, int32_t, int>, int64_t> first_ts;
    std::vector<std::tuple<int32_t, int32_t, int, int64_t>> gather_start;
    for (const auto& tr : rank.tracks) {
      if (tr.kind != moetrace::TrackKind::kDeviceStream) continue;
      for (size_t i = 0; i < tr.events.size(); ++i) {
        if (tr.events.step[i] != (full_dp ? 0 : 1)) continue;
        const std::string_view n = rank.strings.Get(tr.events.name[i]);
        auto key = std::make_tuple(tr.events.micro_batch[i], tr.events.layer[i], int(tr.events.phase[i]));
        if (n == "HcomAllGather_token_counts") {
          gather_end[key] = tr.events.End(i);
          gather_start.emplace_back(std::get<0>(key), std::get<1>(key), std::get<2>(key), tr.events.ts[i]);
        }
        if (n == "ReduceSum_aux_loss") router_end[key] = tr.events.End(i);
        // The first op issued after the read: the per-local-expert sum with
        // host.count_copy_syncs, else the argsort (both on the compute stream).
        if (n == "ReduceSum_tokens_per_local_expert" || n == "ArgSort_topk_indices") {
          auto [it, fresh] = first_ts.emplace(key, tr.events.ts[i]);
          if (!fresh) it->second = std::min(it->second, tr.events.ts[i]);
        }
      }
    }
    for (auto& [key, ts] : first_ts) {
      auto it = gather_end.find(key);
      if (it == gather_end.end()) continue;
      stall_sum += double(ts - it->second);
      ++stalls;
    }
    for (auto& [mb, layer, ph, ts] : gather_start) {
      auto it = router_end.find({mb, layer, ph});
      if (it == router_end.end()) continue;
      stall1_sum += double(ts - it->second);
      ++stalls1;
    }
  }
  r.stall_device_ns = stalls > 0 ? stall_sum / double(stalls) : 0;
  r.stall1_device_ns = stalls1 > 0 ? stall1_sum / double(stalls1) : 0;
  double devices = c.parallel().world_size();
  r.mfu = t.metadata.model_flops_per_step / (r.span * 1e-9 * t.metadata.device_peak_flops * devices);
  for (const auto& [key, value] : t.metadata.attributes)
    if (key == "tracegen.hardware_flops_per_step")
      r.hfu = std::stod(value) / (r.span * 1e-9 * t.metadata.device_peak_flops * devices);
  r.tokens_per_s_per_card = double(t.metadata.tokens_per_step) / (r.span * 1e-9) / devices;
  // Throughput of the full 6,144-card job (every device does the same work).
  r.tokens_per_s = double(t.metadata.tokens_per_step) / (r.span * 1e-9) * 6144 / devices;
  for (const auto& rank : t.ranks)
    for (const auto& tr : rank.tracks)
      if (tr.kind == moetrace::TrackKind::kCounter && tr.counter == moetrace::CounterKind::kMemActivations)
        for (double v : tr.sample_value) r.act_peak = std::max(r.act_peak, v);
  std::fprintf(stderr, "  run done: span %.1f ms mfu %.3f hfu %.3f ep %.1f/%.1f ms host-bound %.4f (sync %.4f, %lld syncs, "
               "%.3f ms each; reads to next op %.3f / %.3f ms) act %.1f GiB peak %.1f GiB%s\n"
               "    EP over %d ranks: %.1f/%.1f ms, all-to-alls unmasked %.2f%%; over the %d stage rank 0s: "
               "%.1f/%.1f ms, %.2f%%; migration %.1f/%.1f ms vs %.1f/%.1f ms\n",
               r.span / 1e6, r.mfu, r.hfu, r.ep_exposed / 1e6, r.ep_total / 1e6, r.host_bound, r.host_sync,
               static_cast<long long>(r.syncs), r.stall_ns / 1e6, r.stall1_device_ns / 1e6, r.stall_device_ns / 1e6,
               r.act_peak / (1 << 30), r.mem_peak / (1 << 30), r.oom ? " OOM" : "", r.ep.ranks, r.ep.exposed / 1e6,
               r.ep.total / 1e6, 100 * r.ep.A2AUnmasked(), r.ep0.ranks, r.ep0.exposed / 1e6, r.ep0.total / 1e6,
               100 * r.ep0.A2AUnmasked(), r.ep.mig_exposed / 1e6, r.ep.mig_total / 1e6, r.ep0.mig_exposed / 1e6,
               r.ep0.mig_total / 1e6);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  // Row filter: `seed_table adaptive edpb mfu` runs only the named rows
  // (mfu, hier, adaptive, edpb, both, ops, memory, host, rl) and the runs
  // they need; no argument runs every row. --json prints the rows as one
  // JSON array (bench/seed_rows.h) instead of the Markdown table. --set
  // KEY=VALUE (repeatable) applies to every pre-training run (g_sets).
  std::vector<std::string> want;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") {
      json = true;
    } else if (a == "--set") {
      if (i + 1 >= argc || std::string_view(argv[i + 1]).find('=') == std::string_view::npos) {
        std::fprintf(stderr, "seed_table: --set wants KEY=VALUE\n");
        return 2;
      }
      g_sets.push_back(argv[++i]);
    } else {
      want.push_back(a);
    }
  }
  try {  // an unknown key or bad value exits 2 with the config's message, before any run
    BuildConfig({"pangu-ultra-moe-718b", "", g_sets, 0});
  } catch (const moetrace::InputError& e) {
    std::fprintf(stderr, "seed_table: %s\n", e.what());
    return 2;
  }
  for (const auto& k : g_sets) std::fprintf(stderr, "every pre-training run with %s (not the table's configuration)\n", k.c_str());
  moetrace::bench::SeedFigures fig;
  auto on = [&](std::string name) {
    auto named = [&](const std::string& n) { return std::find(want.begin(), want.end(), n) != want.end(); };
    // Aliases: a2a = hier, rs = memory.
    return want.empty() || named(name) || (name == "hier" && named("a2a")) ||
           (name == "memory" && named("rs"));
  };
  // The arXiv system: interleaved VPP 2, hierarchical all-to-all, no EDPB.
  const std::vector<std::string> arxiv = {};
  const std::vector<std::string> optimized = {"schedule.kind=adaptive_pipe", "routing.edpb=true",
                                              "parallel.balance_stages=true",
                                              "compute.optimized_kernels=true"};
  std::vector<std::string> rows;
  auto row = [&](std::string technique, std::string pair, std::string published,
                 std::string measured, std::string note) {
    rows.push_back(fmt::format("| {} | {} | {} | {} | {} |", technique, pair, published, measured, note));
  };
  Result base;
  if (on("mfu") || on("hier") || on("adaptive") || on("ops") || on("host")) {
    std::fprintf(stderr, "arXiv layout\n");
    // Its EP figures feed the hier and adaptive rows: over the EP groups then.
    base = Run(arxiv, false, "pangu-ultra-moe-718b", on("hier") || on("adaptive"));
  }
  if (on("mfu")) {
  std::fprintf(stderr, "optimized system\n");
  Result opt = Run(optimized);
  row("MFU, arXiv layout", "preset (interleaved, hierarchical a2a)", "30.0% (1.46 M tokens/s)",
      fmt::format("{:.1f}% MFU, {:.1f}% HFU ({:.2f} M tokens/s on 6,144 NPUs)", base.mfu * 100, base.hfu * 100,
                  base.tokens_per_s / 1e6),
      "");
  row("MFU, optimized system", "+ adaptive pipe + EDPB + accelerated kernels", "41%",
      fmt::format("{:.1f}% MFU, {:.1f}% HFU ({:.2f} M tokens/s)", opt.mfu * 100, opt.hfu * 100,
                  opt.tokens_per_s / 1e6),
      "");
  // The 41% run as published (preset pangu-ultra-moe-718b-41: MBS 4, the
  // optimised system), compared in MFU and in tokens/s per card against the
  // published 41% converted with the arXiv report's own FLOPs per token.
  std::fprintf(stderr, "the 41%% run\n");
  Result r41 = Run({}, false, "pangu-ultra-moe-718b-41");
  const double p41 = moetrace::bench::Published41TokensPerCard();
  row("MFU, the 41% run", "preset pangu-ultra-moe-718b-41 (seq 8K, PP 16 TP 8 VPP 2, EP 32, MBS 4, optimized system)",
      fmt::format("41% ({:.0f} tokens/s per card at the arXiv FLOPs/token)", p41),
      fmt::format("{:.1f}% MFU, {:.1f}% HFU ({:.0f} tokens/s per card, {:+.1f}%)", r41.mfu * 100, r41.hfu * 100,
                  r41.tokens_per_s_per_card, 100 * (r41.tokens_per_s_per_card / p41 - 1)),
      "published tokens/s derived: 41% x 353.9 TFLOPS / 446.8 GFLOP per token (30.0% at 1.46 M on 6,144)");
  fig.arxiv_mfu_pct = 100 * base.mfu;
  fig.arxiv_tokens_per_s = base.tokens_per_s;
  fig.run41_mfu_pct = 100 * r41.mfu;
  fig.run41_tokens_per_s_per_card = r41.tokens_per_s_per_card;
  }

  if (on("hier")) {
  std::fprintf(stderr, "flat all-to-all\n");
  Result flat = Run({"comm.a2a=flat"}, false, "pangu-ultra-moe-718b", true);
  row("Hierarchical all-to-all", "comm.a2a flat -> hierarchical", "~2x faster EP communication",
      fmt::format("{:.2f}x (EP comm {:.0f} -> {:.0f} ms over the 16 stages' EP groups, {} ranks)",
                  flat.ep_total / base.ep_total, flat.ep_total / 1e6, base.ep_total / 1e6, base.ep.ranks),
      "expected de-duplication of top-8 copies per destination node");
  fig.hier_speedup = flat.ep_total / base.ep_total;
  }

  if (on("adaptive")) {
  std::fprintf(stderr, "adaptive pipe\n");
  Result adaptive = Run({"schedule.kind=adaptive_pipe"}, false, "pangu-ultra-moe-718b", true);
  row("Adaptive Pipe", "schedule.kind interleaved -> adaptive_pipe",
      "EP comm > 98% masked (2% unmasked)",
      fmt::format("unmasked {:.1f}% -> {:.1f}% (step {:.1f} -> {:.1f} s)", 100 * base.ep_exposed / base.ep_total,
                  100 * adaptive.ep_exposed / adaptive.ep_total, base.span / 1e9, adaptive.span / 1e9),
      "");
  // The same pair under balanced routing: what the overlap masks when no EP
  // rank waits for a more loaded one.
  std::fprintf(stderr, "adaptive pipe, balanced routing\n");
  Result flat_i = Run({"routing.skew=0"}, false, "pangu-ultra-moe-718b", true);
  Result flat_a = Run({"routing.skew=0", "schedule.kind=adaptive_pipe"}, false, "pangu-ultra-moe-718b", true);
  row("Adaptive Pipe, balanced routing", "as above, routing.skew 0", "(same)",
      fmt::format("unmasked {:.1f}% -> {:.1f}% (step {:.1f} -> {:.1f} s)", 100 * flat_i.ep_exposed / flat_i.ep_total,
                  100 * flat_a.ep_exposed / flat_a.ep_total, flat_i.span / 1e9, flat_a.span / 1e9),
      "");
  fig.adaptive_unmasked_balanced_pct = 100 * flat_a.ep_exposed / flat_a.ep_total;
  // At the preset's skew with EDPB balancing the EP ranks. The migration
  // EDPB runs in the step prologue is EP traffic no schedule overlaps; the
  // row gives the MoE layers' all-to-alls apart from it.
  std::fprintf(stderr, "adaptive pipe + EDPB, preset skew\n");
  Result edpb_i = Run({"routing.edpb=true"}, false, "pangu-ultra-moe-718b", true);
  Result edpb_a = Run({"routing.edpb=true", "schedule.kind=adaptive_pipe"}, false, "pangu-ultra-moe-718b", true);
  row("Adaptive Pipe + EDPB, preset skew", "schedule.kind interleaved -> adaptive_pipe, routing.edpb true (skew 0.6)",
      "(same)",
      fmt::format("all-to-alls unmasked {:.1f}% -> {:.1f}% (step {:.1f} -> {:.1f} s)", 100 * edpb_i.A2AUnmasked(),
                  100 * edpb_a.A2AUnmasked(), edpb_i.span / 1e9, edpb_a.span / 1e9),
      fmt::format("+ EDPB's expert migration {:.1f} s over the 16 stages' EP groups, {:.0f}% exposed; with it, EP "
                  "unmasked {:.1f}%",
                  edpb_a.mig_total / 1e9, 100 * edpb_a.mig_exposed / std::max(1.0, edpb_a.mig_total),
                  100 * edpb_a.ep_exposed / edpb_a.ep_total));
  fig.adaptive_unmasked_skew_edpb_pct = 100 * edpb_a.A2AUnmasked();
  }

  // EDPB's rows: every run of them on packed documents and with the MTP
  // layer simulated, so that each of EDPB's parts has its imbalance in both
  // runs; EDPB on = expert migration + data re-arrangement (routing.edpb)
  // + the cost-balanced layer split (parallel.balance_stages). The documents
  // are a published pre-training mix's (Dolma 3 Mix, OLMo 3's 6T tokens:
  // documents and tokens per source, tracegen/README.md), concatenated and
  // chunked into 8K sequences: Pangu's own mix is not published.
  const std::vector<std::string> edpb_data = {
      "routing.skew=1.0", "data.doc_distribution=mixture",
      "data.doc_mix=3150:1432,83.8:9606,526:778,9.10:5582,95.5:1592,4.24:592", "model.mtp_modelled=true"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::vector<std::string> edpb_on = with(edpb_data, {"routing.edpb=true", "parallel.balance_stages=true"});
  Result skew;
  if (on("edpb") || on("both")) {
    std::fprintf(stderr, "skew, interleaved, no EDPB\n");
    skew = Run(edpb_data);
  }
  if (on("edpb")) {
  std::fprintf(stderr, "EDPB under skew\n");
  Result skew_edpb = Run(edpb_on);
  // The baseline's layer split is the preset's: MindSpeed's padding to 64
  // layers (--noop-layers 61,62,63, its DeepSeek-V3 recipe for a 61-layer +
  // MTP model; Megatron's VPP cannot split 61 layers over 32 stages
  // unpadded), what a user without EDPB runs. The note gives the gain over
  // the balanced split alone too (bench/README.md).
  std::fprintf(stderr, "balanced split alone, no EDPB\n");
  Result split_only = Run(with(edpb_data, {"parallel.balance_stages=true"}));
  row("EDP Balance",
      "routing.edpb + parallel.balance_stages false -> true (routing.skew 1.0, documents, MTP; "
      "baseline split: MindSpeed's noop layers 61,62,63)",
      "+25.5% throughput", fmt::format("{:+.1f}%", 100 * (skew.span / skew_edpb.span - 1)),
      fmt::format("the split alone {:+.1f}%; vs the balanced split as baseline {:+.1f}%",
                  100 * (skew.span / split_only.span - 1), 100 * (split_only.span / skew_edpb.span - 1)));
  fig.edpb_gain_pct = 100 * (skew.span / skew_edpb.span - 1);
  }

  if (on("both")) {
  std::fprintf(stderr, "adaptive + EDPB under skew\n");
  Result both = Run(with(edpb_on, {"schedule.kind=adaptive_pipe"}));
  row("Adaptive Pipe + EDPB", "both, vs interleaved without EDPB (routing.skew 1.0)", "+72.6%",
      fmt::format("{:+.1f}%", 100 * (skew.span / both.span - 1)), "");
  fig.adaptive_edpb_gain_pct = 100 * (skew.span / both.span - 1);
  }

  if (on("ops")) {
  std::fprintf(stderr, "operator acceleration\n");
  Result ops = Run({"compute.optimized_kernels=true"});
  row("Operator acceleration", "compute.optimized_kernels false -> true", "+15% end-to-end",
      fmt::format("{:+.1f}%", 100 * (base.span / ops.span - 1)), "");
  fig.ops_gain_pct = 100 * (base.span / ops.span - 1);
  }

  if (on("memory")) {
  std::fprintf(stderr, "recompute/swap\n");
  // Peaks need the real DP 48 (optimizer states are sharded over DP / EDP).
  Result sel = Run({"memory.recompute=selective", "memory.swap=false"}, true);
  Result rs = Run({"memory.recompute=selective", "memory.swap=true"}, true);
  Result rs2 = Run({"memory.recompute=selective", "memory.swap=true", "parallel.micro_batch_size=4"}, true);
  row("Selective R/S", "memory.swap false -> true (selective recompute in both), DP 48",
      "-70% activation memory; 2x micro-batch fits",
      fmt::format("{:+.0f}% activations ({:.1f} -> {:.1f} GiB, peak {:.1f}{} -> {:.1f} GiB{}); MBS 4 with R/S: peak {:.1f} GiB{}",
                  100 * (rs.act_peak / sel.act_peak - 1), sel.act_peak / (1 << 30),
                  rs.act_peak / (1 << 30), sel.mem_peak / (1 << 30), sel.oom ? " OOM" : "",
                  rs.mem_peak / (1 << 30), rs.oom ? " OOM" : "", rs2.mem_peak / (1 << 30),
                  rs2.oom ? " OOM" : " fits"),
      "swap of the attention module and the dispatched tokens, bounded by the host link during the layer's forward");
  fig.rs_activation_change_pct = 100 * (rs.act_peak / sel.act_peak - 1);
  }

  if (on("host")) {
  // None of the host knobs: no task queue, no NUMA binding, MBS 1, the
  // token counts read on the host before every dispatch. The preset has all
  // of them (task queue, binding, MBS 2, no token-count read). Without the
  // knobs there is no swap either: MBS 1 fits without it, and swap is the
  // memory technique (Selective R/S, its own rows) that made MBS 2 fit, so
  // the system before the host work did not run it. Every run of
  // these rows issues the MoE layer's small routing ops one by one (the
  // unfused dispatcher, host.unfused_routing_ops), the "with" run too: the
  // rows measure the host knobs, not operator fusion. The preset itself
  // keeps them fused, so its full-size trace keeps its ~200 M events.
  // host.count_copy_syncs likewise in every run: where the counts are read
  // on the host, MindSpeed's path also copies them back with blocking
  // copies (four stream syncs per MoE forward); without the reads (the
  // preset) it has no effect.
  const std::vector<std::string> no_knobs = {"host.task_queue=false", "host.numa_affinity=false",
                                             "host.sync_before_a2a=true", "parallel.micro_batch_size=1",
                                             "host.unfused_routing_ops=true", "memory.swap=false",
                                             "host.count_copy_syncs=true"};
  std::fprintf(stderr, "host dispatch, the knobs (unfused routing ops)\n");
  Result host_good = Run({"host.unfused_routing_ops=true"});
  std::fprintf(stderr, "host dispatch, none of the knobs\n");
  Result host_bad = Run(no_knobs);
  std::fprintf(stderr, "host dispatch, NUMA binding alone\n");
  std::vector<std::string> bind = no_knobs;
  bind.push_back("host.numa_affinity=true");
  Result host_bind = Run(bind);
  std::fprintf(stderr, "host dispatch, the knobs with the token-count reads kept\n");
  Result host_sync = Run({"host.sync_before_a2a=true", "host.unfused_routing_ops=true", "host.count_copy_syncs=true"});
  auto pct = [](const Result& r) {
    return fmt::format("{:.2f}% (sync {:.2f}%, dispatch {:.2f}%)", 100 * r.host_bound, 100 * r.host_sync,
                       100 * r.host_dispatch);
  };
  row("Host-device dispatch", "none of the knobs (no task queue, no binding, MBS 1 without swap, two token-count reads and four blocking count copies per MoE forward) -> preset (all of them)",
      "host-bound < 2% of step", fmt::format("{} -> {}", pct(host_bad), pct(host_good)),
      fmt::format("{:.2f} s host-bound per step and stage at {:.1f}% MFU: the same time would be {:.1f}% of a step at "
                  "the published 30% MFU",
                  host_bad.host_bound * host_bad.span / 1e9, 100 * host_bad.mfu,
                  100 * host_bad.host_bound * 0.30 / host_bad.mfu));
  row("One synchronous stall", "as above -> task queue + binding + MBS 2 with the token-count syncs kept",
      "2.1 ms -> 0.6 ms",
      fmt::format("{:.2f} ms -> {:.2f} ms (the input_splits read before it {:.2f} -> {:.2f} ms; host-bound-sync per "
                  "sync {:.2f} -> {:.2f} ms; {} syncs)",
                  host_bad.stall_device_ns / 1e6, host_sync.stall_device_ns / 1e6, host_bad.stall1_device_ns / 1e6,
                  host_sync.stall1_device_ns / 1e6, host_bad.stall_ns / 1e6, host_sync.stall_ns / 1e6,
                  host_bad.syncs),
      "the output_splits read: device idle from the gathered counts' arrival to the first op issued after the read, "
      "mean over the 16 stages");
  row("Kunpeng NUMA binding", "none of the knobs -> + host.numa_affinity", "+4% (approx.)",
      fmt::format("{:+.1f}% (host-bound {:.2f}% -> {:.2f}%)", 100 * (host_bad.span / host_bind.span - 1),
                  100 * host_bad.host_bound, 100 * host_bind.host_bound),
      "");
  fig.host_bound_with_pct = 100 * host_good.host_bound;
  fig.host_bound_without_pct = 100 * host_bad.host_bound;
  }

  moetrace::bench::RlRows([&](const std::string& n) { return on(n); }, row, &fig);

  if (json) {
    // The Markdown table goes to stderr, so one run gives both.
    std::fprintf(stderr, "| technique | pair of runs | published | measured | note |\n|---|---|---|---|---|\n");
    for (auto& r : rows) std::fprintf(stderr, "%s\n", r.c_str());
    std::printf("%s", moetrace::bench::SeedRowsJson(moetrace::bench::BuildSeedRows(fig)).c_str());
    return 0;
  }
  std::printf("| technique | pair of runs | published | measured | note |\n|---|---|---|---|---|\n");
  for (auto& r : rows) std::printf("%s\n", r.c_str());
  return 0;
}
