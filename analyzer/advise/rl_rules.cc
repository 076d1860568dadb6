#include "analyzer/advise/rl_rules.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <thread>

#include <fmt/core.h>

#include "formats/errors.h"
#include "tracegen/rl/rl_config.h"
#include "tracegen/rl/rl_plan.h"

namespace moetrace::advise {
namespace {

namespace trl = tracegen::rl;

constexpr const char* kFixes = "rl.iterations[].time_ns.mean";

int Threads(int threads) {
  return threads > 0 ? threads : int(std::max(1u, std::thread::hardware_concurrency()));
}

double Mean(double sum, size_t n) { return n ? sum / double(n) : 0; }

std::string Seconds(int64_t ns) {
  return std::abs(ns) >= 10'000'000'000 ? fmt::format("{:.1f} s", ns / 1e9) : fmt::format("{:.3f} ms", ns / 1e6);
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

// One evaluated candidate.
struct Tried {
  std::vector<std::string> sets;
  std::optional<analysis::Rl> rl;  // nullopt: not a valid run
  std::string why;                 // the validation message when invalid
};

class RlAdvisor {
 public:
  RlAdvisor(const analysis::Rl& rl, const tracegen::RunConfig* model, bool predict, int threads)
      : rl_(rl), model_(model), predict_(predict && model), threads_(Threads(threads)), pools_(PoolsOf(rl)) {}

  std::vector<Proposal> Run() {
    Colocation();
    Staleness();
    CardSplit();
    RolloutLayout();
    return std::move(out_);
  }

 private:
  const analysis::Rl& Before() {
    if (!before_) before_ = PredictRl(*model_, threads_);
    return *before_;
  }

  Tried Try(std::vector<std::string> sets) {
    Tried t;
    t.sets = std::move(sets);
    try {
      t.rl = PredictRl(WithSets(*model_, t.sets), threads_);
    } catch (const InputError& e) {
      t.why = e.what();
    }
    return t;
  }

  Proposal& Add(std::string rule, std::string title, std::string knob, std::vector<std::string> config,
                std::vector<Evidence> ev) {
    Proposal p;
    p.rule = std::move(rule);
    p.title = std::move(title);
    p.knob = std::move(knob);
    p.config = std::move(config);
    p.evidence = std::move(ev);
    p.fixes = kFixes;
    out_.push_back(std::move(p));
    return out_.back();
  }

  // The prediction of `p` from the evaluated change `t` (advise keeps it or
  // drops it by DropReason: the mean iteration must shorten).
  void Predicted(Proposal& p, const Tried& t, std::string searched = "") {
    if (!t.rl) {
      p.not_proposed = "not applicable here: " + t.why;
      return;
    }
    const analysis::Rl& b = Before();
    const analysis::Rl& a = *t.rl;
    p.config = t.sets;
    p.predicted = true;
    p.step_before_ns = MeanIterationNs(b);
    p.step_after_ns = MeanIterationNs(a);
    p.gain = p.step_before_ns > 0 ? double(p.step_before_ns - p.step_after_ns) / double(p.step_before_ns) : 0;
    p.fixes_before = double(p.step_before_ns);
    p.fixes_after = double(p.step_after_ns);
    p.confidence = 0.9;  // tracegen's own model of the run, regenerated
    std::string d = fmt::format(
        "predicted by building the RL plan of the changed config ({} iteration{}): mean iteration {} -> {}, "
        "utilisation {:.1f} % -> {:.1f} %, long-tail idle {:.1f} % -> {:.1f} %",
        a.iterations_size(), a.iterations_size() == 1 ? "" : "s", Seconds(p.step_before_ns), Seconds(p.step_after_ns), 100 * b.utilization(),
        100 * a.utilization(), 100 * b.long_tail_idle_share(), 100 * a.long_tail_idle_share());
    if (b.has_generated_tokens_per_s() && a.has_generated_tokens_per_s()) {
      d += fmt::format(", generated {:.0f} -> {:.0f} tokens/s", b.generated_tokens_per_s(),
                       a.generated_tokens_per_s());
    }
    p.detail = d + (searched.empty() ? "" : "\n" + searched);
  }

  // The best of `cands` by mean iteration; the detail lists every one tried.
  std::optional<Tried> Search(const std::vector<std::vector<std::string>>& cands, std::string* tried_text,
                              std::string* invalid) {
    std::optional<Tried> best;
    for (const auto& sets : cands) {
      Tried t = Try(sets);
      if (!t.rl) {
        *tried_text += fmt::format("tried {}: invalid ({})\n", Join(sets), t.why);
        if (invalid->empty()) *invalid = t.why;
        continue;
      }
      *tried_text += fmt::format("tried {}: mean iteration {}\n", Join(sets), Seconds(MeanIterationNs(*t.rl)));
      if (!best || MeanIterationNs(*t.rl) < MeanIterationNs(*best->rl)) best = std::move(t);
    }
    return best;
  }

  std::vector<Evidence> PoolEvidence() const {
    return {{"rl.utilization", rl_.utilization()},
            {"rollout pool idle share (1 - Σ phases[generate_sequences].card_ns / (cards x Σ time_ns))",
             pools_.rollout_waiting},
            {"training pool idle share (1 - Σ scoring + update card_ns / (cards x Σ time_ns))",
             pools_.train_waiting}};
  }

  // Separate pools with much idle card-time, one pool waiting for the
  // other: RL Fusion puts both roles on every card.
  void Colocation() {
    if (rl_.placement() != "separate") return;
    const double waiting = std::max(pools_.rollout_waiting, pools_.train_waiting);
    if (rl_.utilization() >= kRlLowUtilization || waiting < kRlPoolWaiting) return;
    const std::string knob =
        "RL Fusion: MindSpeed-RL rl_config.use_integrated_worker: true (every card trains and rolls out; "
        "verl: actor_rollout_ref hybrid engine, colocated workers)";
    std::vector<std::string> sets = {"rl.placement=colocated"};
    std::string why_not;
    if (model_) {
      // The same cards: the training layout grows its DP to every card.
      const auto& par = model_->parallel();
      const int total = trl::TotalCards(*model_);
      const int unit = par.tp() * par.pp() * std::max(1, par.cp());
      if (total % unit == 0) {
        sets.push_back(fmt::format("parallel.world_size={}", total));
        sets.push_back(fmt::format("parallel.dp={}", total / unit));
      } else {
        why_not = fmt::format("{} cards are not a multiple of the training layout's tp x pp x cp = {}", total, unit);
      }
    }
    Proposal& p = Add("rl_colocation",
                      fmt::format("colocate rollout and training on all {} cards (RL Fusion): the {} pool waits "
                                  "{:.0f} % of its card-time",
                                  rl_.cards(),
                                  pools_.rollout_waiting >= pools_.train_waiting ? "rollout" : "training",
                                  100 * waiting),
                      knob, sets, PoolEvidence());
    if (!why_not.empty()) {
      p.not_proposed = "not applicable here: " + why_not;
    } else if (predict_) {
      Predicted(p, Try(sets));
    }
  }

  // Synchronous RL with a long tail (or a pool waiting for the other):
  // StaleSync lets the next rollout run while this iteration trains, and
  // partial rollout refills the slots the long tail frees.
  void Staleness() {
    if (rl_.staleness() != 0) return;
    // Colocated with staleness set, no rollout can start before the update
    // ends (the cards are busy training), so the trace shows 0: the model
    // says what is in force.
    if (model_ && model_->rl().staleness() >= 1) return;
    const double waiting =
        rl_.placement() == "separate" ? std::max(pools_.rollout_waiting, pools_.train_waiting) : 0;
    if (rl_.long_tail_idle_share() < kRlLongTailIdle && waiting < kRlPoolWaiting) return;
    std::vector<Evidence> ev = {{"rl.staleness", double(rl_.staleness())},
                                {"rl.long_tail_idle_share", rl_.long_tail_idle_share()}};
    if (rl_.placement() == "separate") {
      ev.push_back({"the larger pool idle share (separate pools)", waiting});
    }
    Proposal& p = Add(
        "rl_staleness",
        fmt::format("allow one version of staleness (StaleSync + partial rollout): {:.1f} % of card-time idles "
                    "in the rollout's long tail",
                    100 * rl_.long_tail_idle_share()),
        "StaleSync, staleness 1: MindSpeed-RL rl_config.partial_rollout_max_split: 2 (partial rollout); verl "
        "recipe fully_async_policy staleness_threshold with partial_rollout=True",
        {"rl.staleness=1"}, ev);
    if (predict_) Predicted(p, Try({"rl.staleness=1"}));
  }

  // Separate pools, rollout and training sides unbalanced: move cards so
  // that the two sides take as long (time x cards taken as constant work),
  // the feasible splits nearest that point tried by regenerating.
  void CardSplit() {
    if (rl_.placement() != "separate") return;
    const double r = double(pools_.rollout_ns), t = double(pools_.train_ns);
    if (r <= 0 || t <= 0) return;
    const double imbalance = std::abs(r - t) / std::max(r, t);
    if (imbalance < kRlSplitImbalance) return;
    const int total = pools_.rollout_cards + pools_.train_cards;
    const double work_r = r * pools_.rollout_cards, work_t = t * pools_.train_cards;
    const double balance = total * work_r / (work_r + work_t);
    std::vector<Evidence> ev = {
        {"rl.iterations[].phases[generate_sequences].time_ns (mean)", r},
        {"rl.iterations[].phases[scoring + update_*].time_ns (mean, summed)", t},
        {"|rollout - training| / the longer", imbalance},
        {"rollout cards at the balance point, cards x rollout card-time share", balance}};
    const bool more = balance > pools_.rollout_cards;
    const std::string title = fmt::format(
        "move cards {} the rollout pool: rollout {} vs training {} an iteration on {} + {} cards",
        more ? "to" : "from", Seconds(int64_t(r)), Seconds(int64_t(t)), pools_.rollout_cards, pools_.train_cards);
    const std::string knob =
        "MindSpeed-RL rl_config.actor_resource.num_npus (training cards) and the rollout's; verl: the "
        "rollout and trainer pools' n_gpus_per_node x nnodes";
    if (!model_) {
      // Without the model the feasible splits are unknown: the balance
      // point only, no RunConfig keys to apply.
      Proposal& p = Add("rl_card_split", title, knob, {}, ev);
      p.detail = fmt::format("balance point: about {} of the {} cards rolling out (give --config / --preset "
                             "to try the feasible splits near it)",
                             int(std::lround(balance)), total);
      return;
    }
    const auto& par = model_->parallel();
    const auto& ro = model_->rl().rollout();
    const int inst = ro.tp() * ro.dp();
    const int unit = par.tp() * par.pp() * std::max(1, par.cp());
    const int now = trl::RolloutPoolCards(*model_);
    const int cards = trl::TotalCards(*model_);
    std::vector<int> splits;
    for (int k = inst; k < cards; k += inst) {
      if (k != now && (cards - k) % unit == 0) splits.push_back(k);
    }
    std::stable_sort(splits.begin(), splits.end(), [&](int a, int b) {
      return std::abs(a - balance) < std::abs(b - balance);
    });
    if (splits.size() > 4) splits.resize(4);  // the nearest feasible splits
    std::vector<std::vector<std::string>> cands;
    for (int k : splits) {
      const int train = cards - k;
      std::vector<std::string> sets = {fmt::format("rl.rollout.cards={}", k),
                                       fmt::format("parallel.world_size={}", train),
                                       fmt::format("parallel.dp={}", train / unit)};
      // The training EP must divide its DP: the largest that still does.
      const int ep = std::gcd(std::max(1, par.ep()), train / unit);
      if (ep != par.ep()) sets.push_back(fmt::format("parallel.ep={}", ep));
      cands.push_back(std::move(sets));
    }
    Proposal& p = Add("rl_card_split", title, knob, {}, ev);
    if (cands.empty()) {
      p.not_proposed = fmt::format("no other split of {} cards fits rollout instances of {} and training "
                                   "replicas of {}", cards, inst, unit);
      return;
    }
    if (!predict_) {
      p.config = cands.front();
      return;
    }
    std::string tried, invalid;
    std::optional<Tried> best = Search(cands, &tried, &invalid);
    if (!best) {
      p.not_proposed = "no split near the balance point is a valid run: " + invalid;
      return;
    }
    Predicted(p, *best, tried);
  }

  // A rollout that takes much of the iteration: a few feasible rollout
  // layouts (TP x DP instance, EP) and batches tried by regenerating; the
  // validation refuses what does not fit (weights, one sequence's KV).
  void RolloutLayout() {
    if (pools_.rollout_share < kRlRolloutShare) return;
    std::vector<Evidence> ev = {{"rl.iterations[].phases[generate_sequences].share (mean)", pools_.rollout_share},
                                {"rl.long_tail_idle_share", rl_.long_tail_idle_share()}};
    const std::string knob_base =
        "MindSpeed-RL generate_config.infer_tensor_parallel_size / infer_expert_parallel_size / max_num_seqs; "
        "verl actor_rollout_ref.rollout.tensor_model_parallel_size / max_num_seqs";
    if (!model_) {
      Add("rl_rollout_layout",
          fmt::format("the rollout takes {:.0f} % of the iteration: try other rollout layouts and batch "
                      "(give --config / --preset to search and predict them)",
                      100 * pools_.rollout_share),
          knob_base, {}, ev);
      return;
    }
    const auto& ro = model_->rl().rollout();
    const int tp = ro.tp(), dp = ro.dp(), ep = ro.ep(), mb = ro.max_batch();
    std::vector<std::vector<std::string>> cands;
    auto layout = [&](int t, int d, int e) {
      if (t < 1 || d < 1 || e < 1 || (t * d) % e != 0) return;
      if (t == tp && d == dp && e == ep) return;
      std::vector<std::string> s;
      if (t != tp) s.push_back(fmt::format("rl.rollout.tp={}", t));
      if (d != dp) s.push_back(fmt::format("rl.rollout.dp={}", d));
      if (e != ep) s.push_back(fmt::format("rl.rollout.ep={}", e));
      if (std::find(cands.begin(), cands.end(), s) == cands.end()) cands.push_back(s);
    };
    // EP scaled with the instance (experts spread as widely as now).
    auto ep_for = [&](int t, int d) { return std::max(1, std::min(t * d, ep * t * d / std::max(1, tp * dp))); };
    layout(tp * 2, dp / 2 > 0 && dp % 2 == 0 ? dp / 2 : dp, ep);
    if (tp % 2 == 0) layout(tp / 2, dp * 2, ep);
    layout(tp, dp * 2, ep_for(tp, dp * 2));
    if (dp % 2 == 0) layout(tp, dp / 2, ep_for(tp, dp / 2));
    if (ep != tp * dp) layout(tp, dp, tp * dp);
    if (ep % 2 == 0) layout(tp, dp, ep / 2);
    for (int m : {mb * 2, mb * 4, mb / 2}) {
      if (m >= 1 && m != mb) cands.push_back({fmt::format("rl.rollout.max_batch={}", m)});
    }
    Proposal& p = Add("rl_rollout_layout",
                      fmt::format("the rollout takes {:.0f} % of the iteration: a better rollout layout / "
                                  "batch (searched, {} candidates)",
                                  100 * pools_.rollout_share, cands.size()),
                      knob_base, {}, ev);
    if (!predict_) {
      p.title = fmt::format("the rollout takes {:.0f} % of the iteration: try other rollout layouts and "
                            "batch (search not run: --no-replay)",
                            100 * pools_.rollout_share);
      return;
    }
    std::string tried, invalid;
    std::optional<Tried> best = Search(cands, &tried, &invalid);
    if (!best) {
      p.not_proposed = "no rollout layout or batch tried is a valid run: " + invalid;
      return;
    }
    // The best layout with the best batch, when each alone helped.
    const bool layout_best = best->sets.front().rfind("rl.rollout.max_batch", 0) != 0;
    if (layout_best) {
      std::optional<Tried> batch;
      for (const auto& c : cands) {
        if (c.front().rfind("rl.rollout.max_batch", 0) != 0) continue;
        Tried t = Try(c);
        if (t.rl && MeanIterationNs(*t.rl) < MeanIterationNs(Before()) &&
            (!batch || MeanIterationNs(*t.rl) < MeanIterationNs(*batch->rl))) {
          batch = std::move(t);
        }
      }
      if (batch) {
        std::vector<std::string> both = best->sets;
        both.insert(both.end(), batch->sets.begin(), batch->sets.end());
        Tried t = Try(both);
        tried += t.rl ? fmt::format("tried {}: mean iteration {}\n", Join(both), Seconds(MeanIterationNs(*t.rl)))
                      : fmt::format("tried {}: invalid ({})\n", Join(both), t.why);
        if (t.rl && MeanIterationNs(*t.rl) < MeanIterationNs(*best->rl)) best = std::move(t);
      }
    }
    std::string action;
    for (const std::string& s : best->sets) action += (action.empty() ? "" : ", ") + s.substr(11);  // drop "rl.rollout."
    p.title = fmt::format("rollout {} (the rollout takes {:.0f} % of the iteration)", action,
                          100 * pools_.rollout_share);
    Predicted(p, *best, tried);
  }

  const analysis::Rl& rl_;
  const tracegen::RunConfig* model_;
  bool predict_;
  int threads_;
  RlPools pools_;
  std::optional<analysis::Rl> before_;
  std::vector<Proposal> out_;
};

}  // namespace

int64_t MeanIterationNs(const analysis::Rl& rl) {
  int64_t sum = 0;
  for (const auto& it : rl.iterations()) sum += it.time_ns();
  return rl.iterations_size() ? sum / rl.iterations_size() : 0;
}

RlPools PoolsOf(const analysis::Rl& rl) {
  RlPools p;
  int64_t total_ns = 0, rollout_card = 0, train_card = 0, rollout_span = 0, train_span = 0;
  double share = 0;
  for (const auto& it : rl.iterations()) {
    total_ns += it.time_ns();
    for (const auto& ph : it.phases()) {
      if (ph.task() == "generate_sequences") {
        p.rollout_cards = std::max(p.rollout_cards, ph.cards());
        rollout_card += ph.card_ns();
        rollout_span += ph.time_ns();
        share += ph.share();
      } else if (ph.task() != "reshard_to_train" && ph.task() != "reshard_to_infer" &&
                 ph.task() != "sync_weights") {
        train_card += ph.card_ns();
        train_span += ph.time_ns();
      }
    }
  }
  const size_t n = size_t(rl.iterations_size());
  p.train_cards = rl.placement() == "separate" ? rl.cards() - p.rollout_cards : rl.cards();
  auto idle = [&](int64_t busy, int cards) {
    return cards > 0 && total_ns > 0 ? std::max(0.0, 1 - double(busy) / (double(cards) * double(total_ns))) : 0;
  };
  p.rollout_waiting = idle(rollout_card, p.rollout_cards);
  p.train_waiting = idle(train_card, p.train_cards);
  p.rollout_ns = int64_t(Mean(double(rollout_span), n));
  p.train_ns = int64_t(Mean(double(train_span), n));
  p.rollout_share = Mean(share, n);
  return p;
}

std::vector<Proposal> RlProposals(const analysis::Rl& rl, const tracegen::RunConfig* model, bool predict,
                                  int threads) {
  if (!rl.present()) return {};
  return RlAdvisor(rl, model, predict, threads).Run();
}

}  // namespace moetrace::advise
