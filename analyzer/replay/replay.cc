#include "analyzer/replay/replay.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

#include <fmt/core.h>

#include "analyzer/analyze.h"
#include "analyzer/replay/roles.h"
#include "analyzer/replay/transforms/graph_knobs.h"
#include "analyzer/stable_json.h"
#include "formats/errors.h"
#include "formats/json_text.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace::replay {
namespace {

double ParsePositive(std::string_view assignment, std::string_view value) {
  std::string v(value);
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || !(d > 0) || d > 1e6) {
    ThrowInputError("--set", std::string(assignment), "expected a positive number");
  }
  return d;
}

std::string JsonQuote(std::string_view s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

analysis::Analysis AnalyzeTrace(const Trace& trace) {
  MemorySource source(trace);
  return Analyze(source);
}

int64_t PeakOf(const analysis::RankAnalysis& r) {
  return r.memory().has_peak_allocated_bytes() ? r.memory().peak_allocated_bytes() : -1;
}

// Role-reduced: each rank's step (and peak) moves by its representative's
// change, measured from `rep_before` (the envelope's own replay, or the
// recorded representative); the median and the peak are then taken over
// every rank, as for a whole replay.
void ExtrapolateRoles(const RoleMap& roles, const analysis::Analysis& whole,
                      const analysis::Analysis& rep_before, ReplayResult* res) {
  std::unordered_map<int32_t, const analysis::RankAnalysis*> before, after;
  for (const auto& r : rep_before.ranks()) before.emplace(r.rank(), &r);
  for (const auto& r : res->after.ranks()) after.emplace(r.rank(), &r);
  std::vector<int64_t> steps;
  int64_t peak = -1;
  for (const auto& r : whole.ranks()) {
    const int32_t rep = roles.RepresentativeOf(r.rank());
    auto b = before.find(rep);
    auto a = after.find(rep);
    if (b == before.end() || a == after.end()) continue;
    const int64_t step = MeanStepNs(r) + MeanStepNs(*a->second) - MeanStepNs(*b->second);
    res->ranks.push_back({r.rank(), MeanStepNs(r), step});
    if (r.breakdown().span_ns() > 0) steps.push_back(step);
    if (PeakOf(r) >= 0 && PeakOf(*a->second) >= 0 && PeakOf(*b->second) >= 0) {
      peak = std::max(peak, PeakOf(r) + PeakOf(*a->second) - PeakOf(*b->second));
    }
  }
  std::sort(steps.begin(), steps.end());
  res->step_after_ns = steps.empty() ? 0 : steps[(steps.size() - 1) / 2];
  res->peak_after_bytes = peak;
  res->reduction = fmt::format("{} representatives of {} ranks{}", roles.representative.size(),
                               roles.ranks, roles.envelope ? " (role envelopes)" : "");
}

}  // namespace

double ReplayResult::Gain() const {
  return step_before_ns > 0 ? double(step_before_ns - step_after_ns) / double(step_before_ns) : 0;
}

bool ParseReplayMethod(std::string_view name, ReplayMethod* out) {
  if (name == "auto") *out = ReplayMethod::kAuto;
  else if (name == "graph") *out = ReplayMethod::kGraph;
  else if (name == "regenerate") *out = ReplayMethod::kRegenerate;
  else return false;
  return true;
}

bool IsGraphKey(std::string_view key) {
  return key.rfind("speed.", 0) == 0 || key == "host.dispatch_factor" || key == "sync.remove";
}

std::vector<std::string> SplitSets(const std::vector<std::string>& sets, GraphModifications* mods) {
  std::vector<std::string> config_sets;
  for (const std::string& s : sets) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) ThrowInputError("--set", s, "expected KEY=VALUE");
    const std::string_view key(s.data(), eq);
    const std::string_view value(s.data() + eq + 1, s.size() - eq - 1);
    if (!IsGraphKey(key)) {
      config_sets.push_back(s);
    } else if (key == "sync.remove") {
      if (value.empty()) ThrowInputError("--set", s, "expected a sync name (or all)");
      mods->remove_syncs.emplace_back(value);
    } else if (key == "host.dispatch_factor") {
      mods->host_factor = ParsePositive(s, value);
    } else {
      OpClass c;
      if (!ParseOpClass(key.substr(6), &c)) {
        ThrowInputError("--set", s,
                        "unknown operator class (flash_attention, grouped_matmul, matmul, vector, "
                        "comm, alltoall, copy)");
      }
      mods->speed[int(c)] = ParsePositive(s, value);
    }
  }
  return config_sets;
}

int64_t MeanStepNs(const analysis::RankAnalysis& r) {
  const int64_t n = std::max<int64_t>(1, r.steps_size());
  return r.breakdown().span_ns() / n;
}

int64_t MedianStepNs(const analysis::Analysis& a) {
  std::vector<int64_t> v;
  for (const auto& r : a.ranks()) {
    if (r.breakdown().span_ns() > 0) v.push_back(MeanStepNs(r));
  }
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

int64_t PeakMemoryBytes(const analysis::Analysis& a) {
  int64_t peak = -1;
  for (const auto& r : a.ranks()) {
    if (r.memory().has_peak_allocated_bytes()) peak = std::max(peak, r.memory().peak_allocated_bytes());
  }
  return peak;
}

ReplayResult Replay(const Trace& trace, const std::vector<std::string>& sets,
                    const analysis::Analysis* before, const ReplayOptions& options) {
  ReplayResult res;
  res.sets = sets;
  GraphModifications mods;
  std::vector<std::string> config_sets, graph_knobs;
  for (std::string& s : SplitSets(sets, &mods)) {
    const std::string key = s.substr(0, s.find('='));
    (IsGraphOnlyKnob(key) ? graph_knobs : config_sets).push_back(std::move(s));
  }
  // Role-reduced: the cluster ratios before are the representatives' too, so
  // that before and after compare the same ranks; step times and peaks come
  // from every rank (`before`).
  res.before = before && !options.roles ? *before : AnalyzeTrace(trace);

  const bool tracegen = !trace.metadata.config_json.empty();
  if (!config_sets.empty() && options.method == ReplayMethod::kRegenerate && !tracegen) {
    ThrowInputError("--set", config_sets[0],
                    "regenerating needs a tracegen trace (metadata.config_json); the graph replay "
                    "models micro-batch size, all-to-all algorithm, expert placement, recompute, "
                    "swap, task queue and NUMA binding");
  }
  const bool regenerate = !config_sets.empty() && tracegen && options.method != ReplayMethod::kGraph;
  if (!regenerate) {
    graph_knobs.insert(graph_knobs.end(), config_sets.begin(), config_sets.end());
    config_sets.clear();
  }
  const Trace* base = &trace;
  Trace regenerated;
  if (regenerate) {
    tracegen::RunConfig config =
        tracegen::ParseConfigJson(trace.metadata.config_json, "metadata.config_json");
    for (const std::string& s : config_sets) tracegen::ApplyOverride(&config, s);
    tracegen::ResolveHardware(&config);
    tracegen::Validate(config);
    std::vector<int32_t> ranks;
    if (options.roles) {
      // Roles are pipeline stages of the recorded layout: a new one re-forms them.
      const tracegen::RunConfig old =
          tracegen::ParseConfigJson(trace.metadata.config_json, "metadata.config_json");
      const auto& p = config.parallel();
      const auto& q = old.parallel();
      if (p.world_size() != q.world_size() || p.dp() != q.dp() || p.tp() != q.tp() ||
          p.pp() != q.pp()) {
        ThrowInputError("--set", config_sets[0],
                        "a new world layout re-forms the roles the reduced replay keeps: replay "
                        "the whole trace (--reduce whole)");
      }
    }
    if (int(trace.ranks.size()) != config.parallel().world_size()) {
      for (const Rank& r : trace.ranks) {
        if (r.rank < config.parallel().world_size()) ranks.push_back(r.rank);
      }
      std::sort(ranks.begin(), ranks.end());
    }
    MemorySink sink;
    tracegen::GenerateSummary summary = tracegen::Generate(config, ranks, sink);
    for (auto& w : summary.warnings) res.warnings.push_back(w);
    regenerated = std::move(sink.trace());
    base = &regenerated;
    res.regenerated = true;
  }
  if (!graph_knobs.empty()) res.transforms = ApplyGraphKnobs(*base, graph_knobs, &mods);
  if (options.roles) mods.role_of = options.roles->role_of;
  if (!mods.IsIdentity() || !regenerate) {
    res.predicted = ReplayGraph(*base, mods, &res.graph, options.threads);
    res.graph_replayed = true;
  } else {
    res.predicted = std::move(regenerated);
  }
  res.after = AnalyzeTrace(res.predicted);

  const analysis::Analysis& whole = before ? *before : res.before;
  res.step_before_ns = MedianStepNs(whole);
  res.peak_before_bytes = PeakMemoryBytes(whole);
  if (options.roles) {
    // A regenerated run's representatives are tracegen's own ranks (no
    // envelope): their change counts from their recorded selves.
    const bool from_envelope = options.roles->envelope && !res.regenerated;
    ExtrapolateRoles(*options.roles, whole, from_envelope ? res.before : whole, &res);
    return res;
  }
  std::unordered_map<int32_t, int64_t> after_by_rank;
  for (const auto& r : res.after.ranks()) after_by_rank[r.rank()] = MeanStepNs(r);
  for (const auto& r : res.before.ranks()) {
    auto it = after_by_rank.find(r.rank());
    if (it == after_by_rank.end()) continue;
    res.ranks.push_back({r.rank(), MeanStepNs(r), it->second});
  }
  res.step_after_ns = MedianStepNs(res.after);
  res.peak_after_bytes = PeakMemoryBytes(res.after);
  return res;
}

std::string ReplayJson(const ReplayResult& r) {
  auto change = [](int64_t b, int64_t a) {
    return b > 0 ? FormatJsonDouble(double(a - b) / double(b)) : std::string("null");
  };
  std::string out = "{\n";
  std::string analysis = ToStableJson(r.after);
  while (!analysis.empty() && analysis.back() == '\n') analysis.pop_back();
  // Indent the embedded document by two spaces.
  std::string indented;
  for (char c : analysis) {
    indented += c;
    if (c == '\n') indented += "  ";
  }
  out += "  \"analysis\": " + indented + ",\n";
  const GraphStats& g = r.graph;
  out += fmt::format(
      "  \"graph\": {{\"collectives_matched\": {}, \"collectives_unmatched\": {}, "
      "\"cross_stream_waits\": {}, \"forced\": {}, \"nodes\": {}, \"recvs_matched\": {}, "
      "\"replayed\": {}, \"syncs_removed\": {}, \"syncs_with_release\": {}}},\n",
      g.collectives_matched, g.collectives_unmatched, g.cross_stream_waits, g.forced, g.nodes,
      g.recvs_matched, r.graph_replayed ? "true" : "false", g.syncs_removed, g.syncs_with_release);
  out += "  \"modifications\": [";
  for (size_t i = 0; i < r.sets.size(); ++i) {
    out += (i ? ", " : "") + JsonQuote(r.sets[i]);
  }
  out += "],\n";
  auto opt = [](int64_t v) { return v < 0 ? std::string("null") : std::to_string(v); };
  out += fmt::format("  \"peak_memory_bytes\": {{\"after\": {}, \"before\": {}}},\n",
                     opt(r.peak_after_bytes), opt(r.peak_before_bytes));
  out += "  \"ranks\": [";
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const RankPrediction& p = r.ranks[i];
    out += fmt::format("{}\n    {{\"change\": {}, \"rank\": {}, \"step_after_ns\": {}, "
                       "\"step_before_ns\": {}}}",
                       i ? "," : "", change(p.before_ns, p.after_ns), p.rank, p.after_ns,
                       p.before_ns);
  }
  out += r.ranks.empty() ? "],\n" : "\n  ],\n";
  if (!r.reduction.empty()) out += "  \"reduction\": " + JsonQuote(r.reduction) + ",\n";
  out += fmt::format("  \"regenerated\": {},\n", r.regenerated ? "true" : "false");
  out += "  \"transforms\": [";
  for (size_t i = 0; i < r.transforms.size(); ++i) out += (i ? ", " : "") + JsonQuote(r.transforms[i]);
  out += "],\n";
  out += fmt::format("  \"step_time_ns\": {{\"after\": {}, \"before\": {}, \"change\": {}}},\n",
                     r.step_after_ns, r.step_before_ns, change(r.step_before_ns, r.step_after_ns));
  out += "  \"warnings\": [";
  for (size_t i = 0; i < r.warnings.size(); ++i) out += (i ? ", " : "") + JsonQuote(r.warnings[i]);
  out += "]\n}\n";
  return out;
}

std::string FormatReplay(const ReplayResult& r) {
  std::string out;
  out += fmt::format("replay: {}{}\n", r.regenerated ? "regenerated with tracegen" : "graph replay",
                     r.regenerated && r.graph_replayed ? " + graph replay" : "");
  out += fmt::format("step time (median over ranks): {:.3f} ms -> {:.3f} ms ({:+.1f}%)\n",
                     r.step_before_ns / 1e6, r.step_after_ns / 1e6,
                     r.step_before_ns > 0 ? -100.0 * r.Gain() : 0.0);
  if (r.peak_before_bytes >= 0 && r.peak_after_bytes >= 0) {
    out += fmt::format("peak memory: {:.2f} GiB -> {:.2f} GiB\n", r.peak_before_bytes / 1073741824.0,
                       r.peak_after_bytes / 1073741824.0);
  }
  const auto& b = r.before.cluster().ratios();
  const auto& a = r.after.cluster().ratios();
  out += fmt::format("host-bound {:.1f}% -> {:.1f}%, unmasked comm {:.1f}% -> {:.1f}%, bubble "
                     "{:.1f}% -> {:.1f}%\n",
                     100 * b.host_bound(), 100 * a.host_bound(), 100 * b.unmasked_comm(),
                     100 * a.unmasked_comm(), 100 * b.bubble(), 100 * a.bubble());
  if (r.graph_replayed && r.graph.forced > 0) {
    out += fmt::format("note: {} nodes forced to break dependency cycles\n", r.graph.forced);
  }
  if (!r.reduction.empty()) out += "role-reduced: " + r.reduction + " replayed\n";
  for (const auto& t : r.transforms) out += "transform: " + t + "\n";
  for (const auto& w : r.warnings) out += "warning: " + w + "\n";
  return out;
}

}  // namespace moetrace::replay
