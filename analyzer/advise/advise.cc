#include "analyzer/advise/advise.h"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <exception>
#include <map>
#include <optional>
#include <thread>

#include <fmt/core.h>

#include "analyzer/advise/effect_text.h"
#include "analyzer/advise/expert_placement.h"
#include "analyzer/advise/expert_replication.h"
#include "analyzer/advise/layout_rule.h"
#include "analyzer/advise/recorded_model.h"
#include "analyzer/advise/rl_rules.h"
#include "analyzer/label_check.h"
#include "analyzer/replay/replay.h"
#include "analyzer/replay/transforms/graph_knobs.h"
#include "analyzer/stable_json.h"
#include "formats/errors.h"
#include "formats/json_text.h"
#include "tracegen/config.h"
#include "tracegen/rl/rl_config.h"

namespace moetrace::advise {
namespace {

// Evidence thresholds: below them a rule stays silent.
constexpr double kDispatchHostBound = 0.02;  // ASCEND.md: host-bound < 2% of the step
constexpr double kSyncHostBound = 0.01;
constexpr double kEpExposed = 0.03;          // exposed EP time / span
constexpr double kEpUnmasked = 0.10;
constexpr double kEpMaxVio = 0.15;
constexpr double kHeadroom = 0.40;           // of device memory
constexpr double kPressure = 0.05;
constexpr double kBubble = 0.05;

double Ratio(int64_t a, int64_t b) { return b > 0 ? double(a) / double(b) : 0; }

std::optional<tracegen::RunConfig> ConfigOf(const Trace& trace) {
  if (trace.metadata.config_json.empty()) return std::nullopt;
  try {
    return tracegen::ParseConfigJson(trace.metadata.config_json, "metadata.config_json");
  } catch (const InputError&) {
    return std::nullopt;
  }
}

double ClusterMetric(const analysis::Analysis& a, const std::string& path) {
  double v = 0;
  if (path.rfind("cluster.", 0) == 0 && LookupNumber(a.cluster(), path.substr(8), &v)) return v;
  return 0;
}

struct SyncName {
  std::string name;
  int64_t count = 0;
  int64_t total_ns = 0;
};

// The host sync that blocked longest in total.
std::optional<SyncName> TopSync(const Trace& trace) {
  std::map<std::string, SyncName> by_name;
  for (const Rank& r : trace.ranks) {
    for (const Track& t : r.tracks) {
      if (t.kind != TrackKind::kHostThread) continue;
      for (size_t i = 0; i < t.events.size(); ++i) {
        if (t.events.category[i] != Category::kSync && !(t.events.flags[i] & kFlagBlocking)) continue;
        SyncName& s = by_name[std::string(r.strings.Get(t.events.name[i]))];
        ++s.count;
        s.total_ns += t.events.dur[i];
      }
    }
  }
  std::optional<SyncName> best;
  for (auto& [name, s] : by_name) {
    if (!best || s.total_ns > best->total_ns) {
      best = s;
      best->name = name;
    }
  }
  return best;
}

bool HasDispatchThread(const Trace& trace) {
  for (const Rank& r : trace.ranks) {
    for (const Track& t : r.tracks) {
      if (t.role == TrackRole::kHostDispatch) return true;
    }
  }
  return false;
}

// A layer whose plan does not lower its EP MaxVio (at 2 decimals, as
// printed) gains nothing from moving experts: its moves are not proposed.
bool PlanLowers(const LayerPlan& p) {
  return std::round(100 * p.ep_max_vio_after) < std::round(100 * p.ep_max_vio_before);
}

std::string PlanText(const std::vector<LayerPlan>& plans) {
  std::string out;
  for (const LayerPlan& p : plans) {
    if (!PlanLowers(p)) {
      out += fmt::format("layer {}: EP MaxVio {:.2f}, no migration found that lowers it\n", p.layer,
                         p.ep_max_vio_before);
      continue;
    }
    out += fmt::format("layer {}: EP MaxVio {:.2f} -> {:.2f}, {} experts move", p.layer,
                       p.ep_max_vio_before, p.ep_max_vio_after, p.moves.size());
    const size_t shown = std::min<size_t>(p.moves.size(), 6);
    for (size_t i = 0; i < shown; ++i) {
      const ExpertMove& m = p.moves[i];
      out += fmt::format("{} e{} {}->{}", i ? "," : ":", m.expert, m.from_rank, m.to_rank);
    }
    if (shown < p.moves.size()) out += ", ...";
    out += "\n";
  }
  return out;
}

class Advisor {
 public:
  Advisor(const Trace& trace, const analysis::Analysis& a) : trace_(trace), a_(a), cfg_(ConfigOf(trace)) {}

  std::vector<Proposal> Run(const AdviseOptions& options) {
    // A user's model for a recorded trace must be able to be its job; a
    // tracegen trace has its own and two would contradict each other.
    std::vector<std::string> model_notes;
    if (options.model) {
      if (cfg_) {
        throw InputError(
            "advise: this trace carries its own run configuration (tracegen); --config / --preset "
            "give the model of a recorded trace");
      }
      if (!a_.rl().present()) model_notes = CheckModelAgrees(trace_, *options.model, a_.ranks_size());
    }
    // An RL trace gets the RL rules only. The pre-training rules read step
    // windows that in an RL trace hold the actor update alone, and their
    // predictions (regenerating the whole RL job, the layout search of a
    // pre-training run on the training layout) would judge an update-only
    // figure or search a run that is not this one.
    if (a_.rl().present()) {
      RlRules(options);
    } else {
      PretrainingRules(options, model_notes);
    }
    return Finish(options);
  }

 private:
  void RlRules(const AdviseOptions& options) {
    const tracegen::RunConfig* model = nullptr;
    if (cfg_ && tracegen::rl::HasRl(*cfg_)) model = &*cfg_;
    if (options.model) {
      if (!tracegen::rl::HasRl(*options.model)) {
        throw InputError("advise: the trace has RL phases; --config / --preset must be an RL config (rl.algorithm)");
      }
      const int cards = tracegen::rl::TotalCards(*options.model);
      if (cards != a_.rl().cards()) {
        throw InputError(fmt::format("advise: the RL model has {} cards, the trace's RL phases ran on {}", cards,
                                     a_.rl().cards()));
      }
      model = options.model;
    }
    for (Proposal& p : RlProposals(a_.rl(), model, options.replay, options.threads)) {
      candidates_.push_back(std::move(p));
    }
  }

  void PretrainingRules(const AdviseOptions& options, const std::vector<std::string>& model_notes) {
    const auto& c = a_.cluster();
    const int64_t span = c.breakdown().span_ns();
    DispatchRules(Ratio(c.breakdown().host_bound_dispatch_ns(), span));
    SyncRule(Ratio(c.breakdown().host_bound_sync_ns(), span));
    EpRules(Ratio(c.comm_by_class().ep().exposed_ns(), span), c.comm_by_class().ep().unmasked_fraction());
    ExpertRule(c.expert_imbalance().ep_max_vio_mean());
    ReplicationRule(c.expert_imbalance().ep_max_vio_mean());
    MemoryRules();
    BubbleRule(c.ratios().bubble(), cfg_ ? &*cfg_ : options.model);
    SlowRankRule(span);
    if (cfg_ && options.layout) {
      std::optional<Proposal> p = LayoutProposal(*cfg_, options.replay, options.threads);
      if (p) candidates_.push_back(std::move(*p));
    } else if (options.model && options.layout) {
      const RecordedStep recorded{c.step_time_ns().max(), model_notes};
      std::optional<Proposal> p = LayoutProposal(*options.model, options.replay, options.threads, recorded);
      if (p) candidates_.push_back(std::move(*p));
    }
  }

  std::vector<Proposal> Finish(const AdviseOptions& options) {
    std::vector<Outcome> outcomes(candidates_.size());
    if (options.replay) ReplayAll(options, &outcomes);
    std::vector<Proposal> out;
    auto drop = [&](Proposal& p, std::string why) {
      if (!options.dropped) return;
      p.not_proposed = std::move(why);
      options.dropped->push_back(std::move(p));
    };
    for (size_t k = 0; k < candidates_.size(); ++k) {
      Proposal& p = candidates_[k];
      if (!p.not_proposed.empty()) {  // dropped by its rule before any replay
        drop(p, p.not_proposed);
        continue;
      }
      if (options.replay && !p.replay.empty()) {
        try {
          if (outcomes[k].error) std::rethrow_exception(outcomes[k].error);
          const Outcome& r = outcomes[k];
          p.predicted = true;
          p.step_before_ns = r.step_before_ns;
          p.step_after_ns = r.step_after_ns;
          p.gain = r.gain;
          p.peak_before_bytes = r.peak_before_bytes;
          p.peak_after_bytes = r.peak_after_bytes;
          p.fixes_before = r.fixes_before;
          p.fixes_after = r.fixes_after;
          // Regenerated by tracegen: its own model. A graph transform of the
          // knob itself (transforms/graph_knobs.h, within 5% of tracegen on
          // the knobs it validates): good. Graph replay of an exact change
          // (a removed sync, a rank at its peers' speed): good. A speed or
          // host-factor stand-in for a knob: a rough estimate.
          const bool transform = !r.regenerated && !p.config.empty() && p.replay == p.config;
          const bool stand_in = !r.regenerated && !p.config.empty() && !transform;
          p.confidence = r.regenerated ? 0.9 : transform ? 0.7 : stand_in ? 0.4 : 0.6;
          // A recorded trace does not say whether its dispatch threads are
          // bound: the NUMA transform assumes they are not.
          if (transform && !cfg_ && p.config == std::vector<std::string>{"host.numa_affinity=true"}) {
            p.confidence = std::min(p.confidence, 0.4);
          }
          if (r.forced > 0) p.confidence = std::min(p.confidence, 0.3);
        } catch (const InputError& e) {
          if (cfg_) {  // not applicable to this run (the changed config is invalid)
            drop(p, std::string("not applicable here: ") + e.what());
            continue;
          }
          // The graph cannot replay it on this trace (e.g. an odd micro-batch count).
          p.replay.clear();
          p.confidence = 0.3;
          p.title += " (effect not predicted)";
          out.push_back(std::move(p));
          continue;
        }
        // A proposal must do what it is for: lower its own metric (a memory
        // fix: the peak, by 5% at least) and, unless it trades time for
        // memory, the step time. Otherwise it is dropped, with the reason.
        if (std::string why = DropReason(p); !why.empty()) {
          drop(p, std::move(why));
          continue;
        }
        // Nor is one whose predicted peak no longer fits in the device's
        // memory (e.g. "stop recomputing" on 718B: 930 GiB of 64): it would
        // not run.
        if (const int64_t capacity = Capacity();
            capacity > 0 && p.peak_after_bytes > capacity && p.peak_after_bytes > p.peak_before_bytes) {
          drop(p, fmt::format("predicted peak memory {:.2f} GiB exceeds the device's {:.2f} GiB",
                              p.peak_after_bytes / 1073741824.0, capacity / 1073741824.0));
          continue;
        }
        // The title's effect clause is computed from the prediction.
        if (std::string e = EffectText(p); !e.empty()) p.title += "; predicted " + e;
      } else if (p.predicted) {
        // Predicted by its rule (layout_rule.h: tracegen's full simulation),
        // kept or dropped like the replayed ones.
        if (std::string why = DropReason(p); !why.empty()) {
          drop(p, std::move(why));
          continue;
        }
        if (std::string e = EffectText(p); !e.empty()) p.title += "; predicted " + e;
      } else {
        p.confidence = 0.3;
        if (options.replay) p.title += " (effect not predicted)";
      }
      out.push_back(std::move(p));
    }
    // Under memory pressure its fixes come first (most memory saved first);
    // then by predicted gain; unpredicted proposals last.
    std::stable_sort(out.begin(), out.end(), [](const Proposal& x, const Proposal& y) {
      const bool xm = x.rule == "memory_pressure" && x.predicted;
      const bool ym = y.rule == "memory_pressure" && y.predicted;
      if (xm != ym) return xm;
      if (xm) return x.peak_after_bytes < y.peak_after_bytes;
      if (x.predicted != y.predicted) return x.predicted;
      return x.gain > y.gain;
    });
    return out;
  }

  // What a proposal keeps of its replay (not the predicted trace).
  struct Outcome {
    std::exception_ptr error;
    bool regenerated = false;
    int64_t step_before_ns = 0, step_after_ns = 0, forced = 0;
    int64_t peak_before_bytes = -1, peak_after_bytes = -1;
    double gain = 0, fixes_before = 0, fixes_after = 0;
  };

  // The proposals' replays are independent: one per core at a time (a
  // regeneration of thousands of ranks is a long single-threaded pass 1).
  void ReplayAll(const AdviseOptions& options, std::vector<Outcome>* outcomes) {
    std::atomic<size_t> next{0};
    int replay_threads = 1;  // set below, before a worker starts
    auto worker = [&] {
      for (size_t k; (k = next.fetch_add(1)) < candidates_.size();) {
        const Proposal& p = candidates_[k];
        if (p.replay.empty()) continue;
        Outcome& o = (*outcomes)[k];
        try {
          replay::ReplayOptions ro;
          ro.roles = options.roles;
          ro.threads = replay_threads;
          const replay::ReplayResult r = replay::Replay(trace_, p.replay, &a_, ro);
          o.regenerated = r.regenerated;
          o.step_before_ns = r.step_before_ns;
          o.step_after_ns = r.step_after_ns;
          o.gain = r.Gain();
          o.forced = r.graph.forced;
          o.peak_before_bytes = r.peak_before_bytes;
          o.peak_after_bytes = r.peak_after_bytes;
          o.fixes_before = ClusterMetric(r.before, p.fixes);  // same ranks as r.after
          o.fixes_after = ClusterMetric(r.after, p.fixes);
        } catch (...) {
          o.error = std::current_exception();
        }
      }
    };
    // A replay holds its graph (~200 B a node) and the predicted copy of
    // the trace besides the shared input: on the 718B trace's 192 envelope
    // representatives (6.7 M events) ~2 GB, and two at once took advise to
    // 4.4 GB peak. Run as many at once as kReplayBudget holds (at least one).
    size_t events = 0;
    for (const Rank& r : trace_.ranks) events += r.EventCount();
    constexpr size_t kReplayBudget = size_t(2560) << 20;
    const size_t by_memory = std::max<size_t>(1, kReplayBudget / std::max<size_t>(1, 300 * events));
    const size_t cores = options.threads > 0 ? size_t(options.threads)
                                             : size_t(std::max(1u, std::thread::hardware_concurrency()));
    const size_t threads = std::min({candidates_.size(), by_memory, cores});
    // Each replay's graph gets the cores the pool leaves (one each when full).
    replay_threads = int(std::max<size_t>(1, cores / std::max<size_t>(1, threads)));
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (std::thread& t : pool) t.join();
  }

  Proposal& Add(std::string rule, std::string title, std::string knob, std::vector<std::string> config,
                std::vector<std::string> graph_sets, std::string fixes, std::vector<Evidence> ev) {
    Proposal p;
    p.rule = std::move(rule);
    p.title = std::move(title);
    p.knob = std::move(knob);
    p.config = std::move(config);
    // Tracegen traces replay the RunConfig change itself (regenerated);
    // recorded traces the graph transform of that change where the graph
    // models it, else the graph stand-in.
    bool modelled = !p.config.empty();
    for (const std::string& s : p.config) modelled &= replay::IsGraphKnob(s.substr(0, s.find('=')));
    p.replay = !p.config.empty() && (cfg_ || modelled) ? p.config : std::move(graph_sets);
    p.fixes = std::move(fixes);
    p.evidence = std::move(ev);
    candidates_.push_back(std::move(p));
    return candidates_.back();
  }

  void DispatchRules(double v) {
    if (v < kDispatchHostBound) return;
    std::vector<Evidence> ev = {{"cluster.breakdown.host_bound_dispatch_ns / span_ns", v},
                                {"cluster.ratios.host_bound", a_.cluster().ratios().host_bound()}};
    // The time, not the ratio: a fix that shortens the step with the
    // host-bound time keeps the ratio where it was.
    const std::string fixes = "cluster.breakdown.host_bound_dispatch_ns";
    const bool tq_off = cfg_ ? !cfg_->host().task_queue() : !HasDispatchThread(trace_);
    // The knobs are torch_npu's; a GPU trace gets the same advice with its equivalent named.
    const std::string& dev = trace_.metadata.device;
    const bool gpu = dev.find("NVIDIA") != std::string::npos || dev.find("AMD") != std::string::npos ||
                     (trace_.metadata.source == "kineto" && dev.find("Ascend") == std::string::npos);
    if (tq_off) {
      Add("dispatch_host_bound", "enable the task queue: split launch into enqueue + dispatch thread",
          gpu ? "TASK_QUEUE_ENABLE=2 (torch_npu; on GPUs cut launches: CUDA graphs, torch.compile)"
              : "TASK_QUEUE_ENABLE=2",
          {"host.task_queue=true"}, {"host.dispatch_factor=0.6"}, fixes, ev);
    }
    if (!cfg_ || !cfg_->host().numa_affinity()) {
      Add("dispatch_host_bound", "bind the dispatch threads to the NPU's NUMA-local Kunpeng cores",
          gpu ? "CPU_AFFINITY_CONF=1 (torch_npu; on GPUs: numactl/taskset to the GPU's NUMA node)"
              : "CPU_AFFINITY_CONF=1",
          {"host.numa_affinity=true"}, {"host.dispatch_factor=0.8"}, fixes, ev);
    }
    if (cfg_) {
      const int mbs = cfg_->parallel().micro_batch_size();
      mbs_proposed_ = true;
      Add("dispatch_host_bound",
          fmt::format("double the micro-batch (to {}): the same host work per operator for twice "
                      "the device work", 2 * mbs),
          fmt::format("--micro-batch-size {}", 2 * mbs),
          {fmt::format("parallel.micro_batch_size={}", 2 * mbs)}, {}, fixes, ev);
    } else {
      Add("dispatch_host_bound", "a larger micro-batch amortises the host cost per operator",
          "--micro-batch-size (x2)", {}, {"micro_batch.scale=2"}, fixes, ev);
    }
  }

  void SyncRule(double v) {
    if (v < kSyncHostBound) return;
    std::optional<SyncName> s = TopSync(trace_);
    if (!s) return;
    std::vector<Evidence> ev = {{"cluster.breakdown.host_bound_sync_ns / span_ns", v},
                                {"host sync '" + s->name + "' total_ns", double(s->total_ns)},
                                {"host sync '" + s->name + "' count", double(s->count)}};
    std::vector<std::string> config;
    if (cfg_ && cfg_->host().sync_before_a2a() && s->name.find("token counts") != std::string::npos) {
      config = {"host.sync_before_a2a=false"};
    }
    Proposal& p = Add("sync_host_bound",
                      fmt::format("remove the host synchronisation '{}' ({} call{})", s->name, s->count,
                                  s->count == 1 ? "" : "s"),
                      fmt::format("remove sync '{}' (keep token counts on device, e.g. "
                                  "--moe-permutation-async-comm)", s->name),
                      config, {"sync.remove=" + s->name}, "cluster.breakdown.host_bound_sync_ns", ev);
    if (config.empty()) p.replay = {"sync.remove=" + s->name};
  }

  void EpRules(double exposed, double unmasked) {
    if (exposed < kEpExposed || unmasked < kEpUnmasked) return;
    std::vector<Evidence> ev = {{"cluster.comm_by_class.EP.exposed_ns / span_ns", exposed},
                                {"cluster.comm_by_class.EP.unmasked_fraction", unmasked}};
    const std::string fixes = "cluster.comm_by_class.EP.unmasked_fraction";
    if (!cfg_ || cfg_->comm().a2a() == "flat") {
      Add("exposed_ep_comm", "hierarchical all-to-all: de-duplicate tokens across nodes, then HCCS",
          "hierarchical EP dispatch (--moe-token-dispatcher-type alltoall, hierarchical a2a)",
          // ASCEND.md: about 2x faster EP communication than flat all-to-all.
          {"comm.a2a=hierarchical"}, {"speed.alltoall=2"}, fixes, ev);
    }
    if (!cfg_ || (cfg_->schedule().kind() != "adaptive" && cfg_->schedule().kind() != "adaptive_pipe" &&
                  cfg_->schedule().kind() != "dualpipe")) {
      std::vector<std::string> config = {"schedule.kind=adaptive"};
      if (cfg_ && cfg_->parallel().vpp() < 2) config.push_back("parallel.vpp=2");
      Add("exposed_ep_comm", "overlap the all-to-all of one micro-batch with another's compute",
          "--moe-alltoall-overlap-comm --moe-fb-overlap (adaptive overlap)", config, {}, fixes, ev);
    }
    if (cfg_ && !cfg_->comm().shared_expert_overlap()) {
      Add("exposed_ep_comm", "run the shared expert during the dispatch all-to-all",
          "--moe-shared-expert-overlap", {"comm.shared_expert_overlap=true"}, {}, fixes, ev);
    }
    if (cfg_ && cfg_->parallel().tp() > 1 && !cfg_->parallel().tp_extend_ep()) {
      Add("exposed_ep_comm", "spread experts over TP x EP ranks (fewer tokens per all-to-all)",
          "--moe-tp-extend-ep", {"parallel.tp_extend_ep=true"}, {}, fixes, ev);
    }
  }

  void ExpertRule(double ep_max_vio) {
    if (ep_max_vio < kEpMaxVio) return;
    if (cfg_ && cfg_->routing().edpb()) return;
    std::vector<const RoutingRecord*> records;
    for (const Rank& r : trace_.ranks) {
      for (const RoutingRecord& rec : r.routing) records.push_back(&rec);
    }
    std::vector<LayerPlan> plans = PlanExpertPlacement(records);
    // Only the layers the migration balances better; none: nothing to propose
    // (one expert heavier than a rank's share: ReplicationRule).
    std::erase_if(plans, [](const LayerPlan& l) { return l.ep_max_vio_after > l.ep_max_vio_before - 0.01; });
    if (plans.empty() && !records.empty()) return;
    Proposal& p = Add("expert_imbalance",
                      "migrate hot experts between EP ranks (placement planned on the measured loads)",
                      "--enable-expert-placement --expert-placement-freq 1", {"routing.edpb=true"},
                      {}, "cluster.expert_imbalance.ep_max_vio_mean",
                      {{"cluster.expert_imbalance.ep_max_vio_mean", ep_max_vio}});
    p.detail = plans.empty() ? "no routing records: plan from the next profiled step"
                             : "greedy migration on the measured loads:\n" + PlanText(plans);
    // A plan that lowers no layer's EP MaxVio changes nothing: not proposed
    // (e.g. one expert alone outweighs an EP rank's share; replication can
    // help there, migration cannot).
    if (!plans.empty() && std::none_of(plans.begin(), plans.end(), PlanLowers)) {
      p.not_proposed = "the migration plan lowers no layer's EP MaxVio";
    }
  }

  // Redundant copies of the experts migration cannot balance
  // (analyzer/advise/expert_replication.h).
  void ReplicationRule(double ep_max_vio) {
    if (ep_max_vio < kEpMaxVio) return;
    std::vector<const RoutingRecord*> records;
    for (const Rank& r : trace_.ranks) {
      for (const RoutingRecord& rec : r.routing) records.push_back(&rec);
    }
    const std::optional<ReplicationPlan> plan = PlanReplication(records, kEpMaxVio);
    if (!plan) return;
    Proposal& p = Add("expert_replication",
                      fmt::format("replicate the hottest experts: {} copies per MoE layer on the "
                                  "least-loaded EP ranks",
                                  plan->copies),
                      fmt::format("{} redundant experts per MoE layer (DeepSeek EPLB "
                                  "num_redundant_experts; placement in the detail)",
                                  plan->copies),
                      {fmt::format("routing.redundant_experts={}", plan->copies)}, {},
                      "cluster.expert_imbalance.ep_max_vio_mean",
                      {{"cluster.expert_imbalance.ep_max_vio_mean", ep_max_vio},
                       {"planned EP MaxVio after migration alone", plan->ep_max_vio_migrated},
                       {"planned EP MaxVio with the copies", plan->ep_max_vio_after}});
    p.detail = ReplicationText(*plan);
  }

  // The device memory of the ranks (0 when the trace does not say).
  int64_t Capacity() const {
    int64_t capacity = 0;
    for (const auto& r : a_.ranks()) {
      if (r.memory().has_capacity_bytes()) capacity = std::max(capacity, r.memory().capacity_bytes());
    }
    return capacity;
  }

  void MemoryRules() {
    const auto& c = a_.cluster();
    const int64_t capacity = Capacity();
    const int64_t peak = c.memory().peak_bytes();
    if (capacity <= 0 || peak <= 0) return;
    const double headroom = double(capacity - peak) / double(capacity);
    std::vector<Evidence> ev = {{"cluster.memory.peak_bytes", double(peak)},
                                {"headroom / capacity", headroom}};
    const std::string recompute = cfg_ ? cfg_->memory().recompute() : "";
    if (headroom >= kHeadroom) {
      if (recompute == "full") {
        Add("memory_headroom",
            fmt::format("{:.0f} % of memory to spare: recompute only attention instead of whole layers",
                        100 * headroom),
            "--recompute-granularity selective", {"memory.recompute=selective"}, {},
            "cluster.breakdown.compute_ns", ev);
      } else if (recompute == "selective") {
        Add("memory_headroom", fmt::format("{:.0f} % of memory to spare: stop recomputing", 100 * headroom),
            "(drop --recompute-granularity)",
            {"memory.recompute=none"}, {}, "cluster.breakdown.compute_ns", ev);
      } else if (cfg_ && !mbs_proposed_) {
        const int mbs = cfg_->parallel().micro_batch_size();
        Add("memory_headroom",
            fmt::format("{:.0f} % of memory to spare: double the micro-batch (to {})", 100 * headroom,
                        2 * mbs),
            fmt::format("--micro-batch-size {}", 2 * mbs),
            {fmt::format("parallel.micro_batch_size={}", 2 * mbs)}, {}, "cluster.ratios.free", ev);
      }
    } else if (headroom < kPressure) {
      if (recompute == "none" || recompute.empty()) {
        Add("memory_pressure", "recompute attention (FlashAttention) in the backward",
            "--recompute-granularity selective --recompute-activation-function",
            {"memory.recompute=selective"}, {}, "cluster.memory.peak_bytes", ev);
      }
      if (!cfg_ || !cfg_->memory().swap()) {
        Add("memory_pressure", "swap activations to the host between forward and backward",
            "--swap-attention", {"memory.swap=true"}, {}, "cluster.memory.peak_bytes", ev);
      }
    }
  }

  // Interleaving shortens the pipeline's fill and drain, (p-1)/(m+p-1) of
  // the step at 1F1B and (p-1)/(v*m+p-1) with v virtual stages (ASCEND.md),
  // not the rest of what the bubble metric counts: a stage that computes
  // more than the others (its neighbours wait on their receives whatever
  // the schedule) and waits behind other collectives while a receive is
  // posted (interleaving posts twice the receives, so that part grows). On
  // tiny-moe VPP 2 shortens the step 13.859 -> 13.646 ms while the bubble
  // rises 36.8 % -> 40.8 %; with balanced stages 8.547 -> 7.833 ms while it
  // rises 32.7 % -> 35.2 % (analyzer/replay/README.md, "The bubble rule").
  // So the rule is judged by the step it shortens, the slowest rank's, and
  // the bubble is its evidence, not its promise.
  // `job`: the trace's configuration, or the model the user gave for a
  // recorded trace (its layout says p, m and the schedule; nullptr: unknown).
  void BubbleRule(double bubble, const tracegen::RunConfig* job) {
    if (bubble < kBubble) return;
    if (job && job->parallel().pp() < 2) return;
    std::vector<Evidence> ev = {{"cluster.ratios.bubble", bubble}};
    std::string detail;
    if (job) {
      const auto& par = job->parallel();
      const int64_t per_batch = int64_t(std::max(1, par.micro_batch_size())) * std::max(1, par.dp());
      const double m = double(std::max<int64_t>(1, par.global_batch_size() / per_batch));
      const double p = par.pp(), v = 2;
      const double fill = (p - 1) / (m + p - 1), fill_v = (p - 1) / (v * m + p - 1);
      ev.push_back({"pipeline fill/drain share of the step at 1F1B, (p-1)/(m+p-1)", fill});
      ev.push_back({"the same with 2 virtual stages, (p-1)/(2m+p-1)", fill_v});
      detail = fmt::format(
          "PP {} with {} micro-batches a step: the fill and drain are {:.1f} % of an ideal 1F1B step "
          "and {:.1f} % with 2 virtual stages; the rest of the measured bubble ({:.1f} %) is stage "
          "imbalance and waits behind other collectives, which interleaving does not remove",
          par.pp(), int64_t(m), 100 * fill, 100 * fill_v, 100 * bubble);
    }
    if (!job || job->schedule().kind() == "1f1b") {
      Proposal& p = Add("bubble", "interleaved pipeline with 2 virtual stages per rank",
                        "--num-layers-per-virtual-pipeline-stage (2 virtual stages)",
                        {"schedule.kind=interleaved", "parallel.vpp=2"}, {}, "cluster.step_time_ns.max", ev);
      p.detail = detail;
    }
  }

  // Slow at compute: the ranks whose compute per step exceeds the mean by
  // more than 5% (the slow-rank rule of METRICS.md). Free-time outliers alone
  // are pipeline position, not slowness, and stay silent.
  void SlowRankRule(int64_t span) {
    const auto& c = a_.cluster();
    const analysis::SlowRank* worst = nullptr;
    int flagged = 0;
    for (const auto& s : c.slow_ranks()) {
      if (s.metric() != "compute_ns" || s.deviation() <= 0.05) continue;
      ++flagged;
      if (!worst || s.deviation() > worst->deviation()) worst = &s;
    }
    if (!worst) return;
    std::vector<Evidence> ev = {
        {fmt::format("cluster.slow_ranks[rank={}].compute_ns", worst->rank()), worst->value()},
        {"cluster.slow_ranks.mean", worst->mean()},
        {"deviation", worst->deviation()}};
    int64_t caused = 0;
    for (const auto& w : c.waited_for()) {
      if (w.rank() == worst->rank()) caused = w.caused_wait_ns();
    }
    if (caused > 0) {
      ev.push_back({fmt::format("cluster.waited_for[rank={}].caused_wait_ns", worst->rank()),
                    double(caused)});
    }
    if (flagged > 1) {
      Add("slow_rank",
          fmt::format("{} ranks compute up to {:.0f} % more than the mean (rank {} the most): "
                      "unbalanced pipeline stages or experts",
                      flagged, 100 * worst->deviation(), worst->rank()),
          "rebalance layers per stage (parallel.layers_per_stage / "
          "--num-layers-per-virtual-pipeline-stage)",
          {}, {}, "cluster.step_time_ns.max", ev);
    } else {
      Add("slow_rank",
          fmt::format("rank {} is slow at compute ({:.0f} % above the mean){}", worst->rank(),
                      100 * worst->deviation(),
                      caused > 0 ? "; the others wait for it at collectives" : ""),
          fmt::format("inspect rank {}: its NPU (clock, thermal), host binding, expert load",
                      worst->rank()),
          // Fixed, the others stop waiting for it: the slowest step shortens.
          {}, {fmt::format("slow_rank.fix={}", worst->rank())}, "cluster.step_time_ns.max", ev);
    }
    (void)span;
  }

  const Trace& trace_;
  const analysis::Analysis& a_;
  std::optional<tracegen::RunConfig> cfg_;
  std::vector<Proposal> candidates_;
  bool mbs_proposed_ = false;
};

std::string Quote(std::string_view s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

std::string StringList(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + Quote(v[i]);
  return out + "]";
}

}  // namespace

std::vector<Proposal> Advise(const Trace& trace, const analysis::Analysis& analysis,
                             const AdviseOptions& options) {
  return Advisor(trace, analysis).Run(options);
}

std::string ProposalsJson(const std::vector<Proposal>& proposals) {
  std::string out = "{\n  \"proposals\": [";
  for (size_t i = 0; i < proposals.size(); ++i) {
    const Proposal& p = proposals[i];
    out += i ? ",\n    {" : "\n    {";
    out += "\"confidence\": " + FormatJsonDouble(p.confidence);
    out += ", \"config\": " + StringList(p.config);
    out += ", \"detail\": " + Quote(p.detail);
    out += ", \"evidence\": [";
    for (size_t k = 0; k < p.evidence.size(); ++k) {
      out += (k ? ", " : "") + fmt::format("{{\"metric\": {}, \"value\": {}}}", Quote(p.evidence[k].metric),
                                           FormatJsonDouble(p.evidence[k].value));
    }
    out += "], \"knob\": " + Quote(p.knob);
    if (p.predicted) {
      auto opt = [](int64_t v) { return v < 0 ? std::string("null") : std::to_string(v); };
      out += fmt::format(
          ", \"predicted\": {{\"fixes\": {}, \"fixes_after\": {}, \"fixes_before\": {}, \"gain\": {}, "
          "\"peak_memory_after_bytes\": {}, \"peak_memory_before_bytes\": {}, "
          "\"step_time_after_ns\": {}, \"step_time_before_ns\": {}}}",
          Quote(p.fixes), FormatJsonDouble(p.fixes_after), FormatJsonDouble(p.fixes_before),
          FormatJsonDouble(p.gain), opt(p.peak_after_bytes), opt(p.peak_before_bytes),
          p.step_after_ns, p.step_before_ns);
    } else {
      out += ", \"predicted\": null";
    }
    out += ", \"replay\": " + StringList(p.replay);
    out += ", \"rule\": " + Quote(p.rule);
    out += ", \"title\": " + Quote(p.title) + "}";
  }
  out += proposals.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

std::string FormatProposals(const std::vector<Proposal>& proposals) {
  if (proposals.empty()) return "advise: no proposal (no rule found its evidence)\n";
  std::string out;
  for (size_t i = 0; i < proposals.size(); ++i) {
    const Proposal& p = proposals[i];
    out += fmt::format("{}. {}\n   knob: {}\n", i + 1, p.title, p.knob);
    if (!p.config.empty()) {
      out += "   config:";
      for (const auto& c : p.config) out += " " + c;
      out += "\n";
    }
    for (const Evidence& e : p.evidence) out += fmt::format("   evidence: {} = {:.4g}\n", e.metric, e.value);
    if (p.predicted) {
      // The metric as people read it (effect_text.h), then its JSON path.
      // The RL rules' "step" is the mean iteration, their metric itself
      // (rl_rules.h): said once.
      const bool rl = p.fixes.rfind("rl.", 0) == 0;
      if (rl) {
        out += fmt::format("   predicted: mean RL iteration {} -> {} ({:+.1f}%)",
                           MetricValue(p.fixes, double(p.step_before_ns)),
                           MetricValue(p.fixes, double(p.step_after_ns)), -100 * p.gain);
      } else {
        out += fmt::format("   predicted: step {:.3f} -> {:.3f} ms ({:+.1f}%)", p.step_before_ns / 1e6,
                           p.step_after_ns / 1e6, -100 * p.gain);
        out += fmt::format(", {} {} -> {} ({})", MetricLabel(p.fixes), MetricValue(p.fixes, p.fixes_before),
                           MetricValue(p.fixes, p.fixes_after), p.fixes);
      }
      if (p.peak_before_bytes >= 0 && p.peak_after_bytes >= 0) {
        out += fmt::format(", peak memory {:.2f} -> {:.2f} GiB", p.peak_before_bytes / 1073741824.0,
                           p.peak_after_bytes / 1073741824.0);
      }
      out += fmt::format(", confidence {:.1f}\n", p.confidence);
    } else {
      out += fmt::format("   predicted: not replayable here, confidence {:.1f}\n", p.confidence);
    }
    if (!p.detail.empty()) {
      std::string d = p.detail;
      size_t pos = 0;
      while ((pos = d.find('\n', pos)) != std::string::npos && pos + 1 < d.size()) {
        d.replace(pos, 1, "\n     ");
        pos += 6;
      }
      out += "   " + d + (d.back() == '\n' ? "" : "\n");
    }
  }
  return out;
}

std::string FormatDropped(const std::vector<Proposal>& dropped) {
  std::string out;
  for (const Proposal& p : dropped) {
    out += fmt::format("not proposed: {} ({})\n", p.title, p.not_proposed);
  }
  return out;
}

}  // namespace moetrace::advise
