#include "tracegen/rl/rl_emit.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/core.h>

#include "tracegen/engine.h"
#include "tracegen/rank_tracks.h"

namespace moetrace::tracegen::rl {

namespace {

// Track indices of a card: the engine's layout (engine_emit.cc,
// InitRankOutput) first, so that a train rank's tracks map one to one,
// then the RL counters.
enum : size_t {
  kPython = 0, kDequeue = 1, kCompute = 2, kHccl = 3, kPpSend = 4, kPpRecv = 5, kCopy = 6,
  kHcclOverlap = 7, kAllocated = 8, kWeights = 9, kGradients = 10, kOptimizer = 11,
  kActivations = 12, kRecompute = 13, kKvCache = 14, kGeneratedTokens = 15, kTrackCount = 16,
};
constexpr size_t kEngineTracks = kKvCache;  // tracks the engine emits

// A host launch of a device op, at the op's start (the aclnn / graph-launch
// call). Its length is a launch's, not modelled: it only links the host to
// the device work (correlation) and never leaves the phase range.
constexpr TimeNs kLaunchNs = 5'000;

void AddLayout(Rank& k) {
  AddRankTracks(k);
  // CounterKind has no KV-cache kind: the name is the contract
  // (tracegen/rl/README.md), kOther keeps the native format unchanged.
  for (const char* name : {"kv_cache", "generated_tokens"})
    k.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, name).counter = CounterKind::kOther;
}

bool IsSwitch(Task t) {
  return t == Task::kReshardToTrain || t == Task::kReshardToInfer || t == Task::kSyncWeights;
}

// What one card's emission accumulates: memory levels as (time, category,
// level) in emission order, turned into counter samples at the end.
struct CardState {
  explicit CardState(Rank& rank) : k(rank) {}
  Rank& k;
  int64_t next_corr = 1;
  struct MemSample {
    TimeNs ts;
    size_t track;
    double level;
  };
  std::vector<MemSample> mem;
  double level[kTrackCount] = {};
  double generated = 0;

  void SetMem(TimeNs ts, size_t track, double v) {
    level[track] = v;
    mem.push_back({ts, track, v});
  }
  void Counter(size_t track, TimeNs ts, double v) {
    Track& t = k.tracks[track];
    if (!t.sample_ts.empty() && t.sample_ts.back() == ts) {
      t.sample_value.back() = v;
    } else {
      t.sample_ts.push_back(ts);
      t.sample_value.push_back(v);
    }
  }
  // A device op on `track` and its launch on the main thread, linked by a
  // correlation id; returns the device event's row.
  size_t Device(size_t track, Event e, TimeNs range_end) {
    e.correlation = next_corr++;
    Event l;
    l.ts = e.ts;
    // No longer than its op either: ops of one stream follow each other,
    // so their launches never overlap on the main thread.
    l.dur = std::max<TimeNs>(0, std::min({kLaunchNs, e.dur, range_end - e.ts}));
    l.name = k.strings.Intern("launch");
    l.category = Category::kLaunch;
    l.correlation = e.correlation;
    l.step = e.step;
    k.tracks[kPython].events.Append(l);
    k.tracks[track].events.Append(e);
    return k.tracks[track].events.size() - 1;
  }
  // A collective of the cards `group` on the hccl stream.
  void Collective(TimeNs ts, TimeNs dur, TimeNs range_end, std::string_view name, CollectiveKind kind,
                  CommClass cls, const std::string& group, int64_t seq, uint64_t bytes,
                  const std::vector<int32_t>& cards, int32_t step) {
    Track& t = k.tracks[kHccl];
    CommRecord c;
    c.kind = kind;
    c.comm_class = cls;
    c.group = k.strings.Intern(group);
    c.sequence = seq;
    c.group_size = int32_t(cards.size());
    c.bytes = bytes;
    c.group_ranks = t.AddRanks(cards);
    t.comms.push_back(c);
    Event e;
    e.ts = ts;
    e.dur = dur;
    e.name = k.strings.Intern(name);
    e.category = Category::kCollective;
    e.step = step;
    e.comm = int32_t(t.comms.size() - 1);
    e.bytes = bytes;
    Device(kHccl, e, range_end);
  }
};

const std::vector<int32_t>& GroupOf(const PhaseGroups& g, int32_t iteration, Task task) {
  static const std::vector<int32_t> empty;
  auto it = g.cards.find({iteration, task});
  return it == g.cards.end() ? empty : it->second;
}

// Rollout: one device op per prefill chunk / decode step (decode runs as
// one captured graph per step, as inference engines on Ascend run it), its
// TP all-reduce and EP all-to-all at the end of the step, KV cache and generated tokens
// sampled when the step ends.
void EmitRollout(const Plan& plan, int32_t instance, const PhaseSpan& span, CardState& s) {
  const TimeNs base = kRlBaseTime;
  const TimeNs end = base + span.end;
  if (instance < 0 || size_t(instance) >= plan.instances.size()) return;
  const RolloutInstance& inst = plan.instances[size_t(instance)];
  const std::string group = fmt::format("rl/rollout/instance{}", instance);
  // The card's attention-DP group: tp consecutive cards of the instance.
  const int tp = std::max(1, plan.config.rl().rollout().tp());
  const auto pos = std::find(inst.cards.begin(), inst.cards.end(), s.k.rank) - inst.cards.begin();
  const auto first = inst.cards.begin() + pos / tp * tp;
  const std::vector<int32_t> tp_cards(first, std::min(first + tp, inst.cards.end()));
  const std::string tp_group = fmt::format("{}/tp{}", group, pos / tp);
  for (const InstanceIteration& it : inst.iterations) {
    if (it.iteration != span.iteration) continue;
    for (size_t i = 0; i < it.steps.size(); ++i) {
      const RolloutStep& st = it.steps[i];
      Event e;
      e.ts = base + st.start;
      e.dur = st.dur - st.comm_dur;
      e.name = s.k.strings.Intern(st.prefill ? "PrefillChunk" : "DecodeGraph");
      e.category = Category::kCompute;
      e.phase = Phase::kForward;
      e.step = kNone;  // the iteration is the marker's (CardEmitter::Emit)
      e.micro_batch = st.batch;  // sequences in flight: the step's batch
      e.flops = st.flops;
      e.bytes = st.bytes;
      s.Device(kCompute, e, end);
      // The TP all-reduces of the step's layers (the card's attention-DP
      // group), then its EP all-to-alls (the instance): two collectives, as
      // the two kinds of traffic go to different groups.
      const int64_t seq = span.iteration * kIterationSequenceStride + int64_t(i);
      const TimeNs ep_dur = st.comm_dur - st.tp_comm_dur;
      if (st.tp_comm_dur > 0)
        s.Collective(e.ts + e.dur, st.tp_comm_dur, end, "hcom_allreduce_decode",
                     CollectiveKind::kAllReduce, CommClass::kTP, tp_group, seq, 0, tp_cards, kNone);
      if (ep_dur > 0)
        s.Collective(e.ts + e.dur + st.tp_comm_dur, ep_dur, end, "hcom_alltoall_decode",
                     CollectiveKind::kAllToAll, CommClass::kEP, group, seq, st.comm_bytes, inst.cards, kNone);
      const TimeNs step_end = base + st.start + st.dur;
      s.SetMem(step_end, kKvCache, double(st.kv_bytes));
      if (!st.prefill) s.generated += double(st.new_tokens);
      s.Counter(kGeneratedTokens, step_end, s.generated);
    }
  }
  // The engine frees the KV cache when the instance's batch is done.
  s.SetMem(end, kKvCache, 0);
}

// Scoring (and the critic's update): the forward split per layer over the
// range, the phase's EP collective at its end.
void EmitCompute(const Plan& plan, const PhaseSpan& span, const PhaseGroups& groups, CardState& s) {
  const TimeNs base = kRlBaseTime;
  const TimeNs end = base + span.end;
  const TimeNs compute_end = end - span.comm_dur;
  const int layers = std::max(1, plan.config.model().num_layers());
  const TimeNs len = compute_end - (base + span.start);
  if ((span.flops > 0 || span.bytes > 0) && len > 0) {
    const std::string name = fmt::format("{}.layer", TaskName(span.task));
    for (int l = 0; l < layers; ++l) {
      Event e;
      e.ts = base + span.start + len * l / layers;
      e.dur = base + span.start + len * (l + 1) / layers - e.ts;
      e.name = s.k.strings.Intern(name);
      e.category = Category::kCompute;
      e.phase = span.task == Task::kUpdateCritic ? Phase::kBackward : Phase::kForward;
      e.step = kNone;  // the iteration is the marker's (CardEmitter::Emit)
      e.layer = l;
      e.flops = span.flops / uint64_t(layers) + (l == layers - 1 ? span.flops % uint64_t(layers) : 0);
      e.bytes = span.bytes / uint64_t(layers) + (l == layers - 1 ? span.bytes % uint64_t(layers) : 0);
      s.Device(kCompute, e, end);
    }
  }
  if (span.comm_dur > 0)
    s.Collective(compute_end, span.comm_dur, end, "hcom_alltoall_", CollectiveKind::kAllToAll,
                 CommClass::kEP, fmt::format("rl/{}", TaskName(span.task)),
                 span.iteration * kIterationSequenceStride, span.comm_bytes,
                 GroupOf(groups, span.iteration, span.task), kNone);
}

// The memory a card that trains holds in the training layout when its
// actor update starts: the engine's first sample of each category (0 where
// it has none), what reshard_to_train restores so that the engine's own
// samples continue from it.
struct TrainLevels {
  double weights = 0, optimizer = 0;
};

// The switch between layouts: weights resharded (all-gather into the new
// layout) or sent to the rollout pool (broadcast) on the hccl stream, and
// the optimizer states offloaded / reloaded on the copy stream; both start
// with the range (independent streams). On a card that trains (`train`
// non-null), memory follows the layouts: reshard_to_infer frees the
// gradients and training activations at its start, the weights become the
// inference layout's when the all-gather ends and the optimizer level the
// card holds leaves when its offload ends; reshard_to_train puts back the
// training weights and the optimizer level the engine starts from (the
// engine allocates its own gradients and activations). The plan's times
// are kept; the copy's bytes are the level moved.
void EmitSwitch(const Plan& plan, const PhaseSpan& span, const PhaseGroups& groups, const TrainLevels* train,
                CardState& s) {
  const TimeNs base = kRlBaseTime;
  const TimeNs start = base + span.start, end = base + span.end;
  if (span.comm_dur > 0) {
    const bool sync = span.task == Task::kSyncWeights;
    s.Collective(start, span.comm_dur, end, sync ? "hcom_broadcast_" : "hcom_allgather_",
                 sync ? CollectiveKind::kBroadcast : CollectiveKind::kAllGather, CommClass::kOther,
                 fmt::format("rl/{}", TaskName(span.task)), span.iteration * kIterationSequenceStride,
                 span.comm_bytes, GroupOf(groups, span.iteration, span.task), kNone);
  }
  const bool layout = span.task == Task::kReshardToInfer || span.task == Task::kReshardToTrain;
  uint64_t copy_bytes = span.copy_bytes;
  if (layout && train) {
    const bool to_infer = span.task == Task::kReshardToInfer;
    if (to_infer)
      for (size_t t : {size_t(kGradients), size_t(kActivations), size_t(kRecompute)})
        if (s.level[t] != 0) s.SetMem(start, t, 0);
    const double weights = to_infer ? double(plan.infer_weight_bytes) : train->weights;
    s.SetMem(start + span.comm_dur, kWeights, weights);
    const double opt = to_infer ? 0.0 : train->optimizer;
    copy_bytes = uint64_t(std::llround(to_infer ? s.level[kOptimizer] : opt));
    s.SetMem(start + span.copy_dur, kOptimizer, opt);
  }
  if (span.copy_dur > 0) {
    Event e;
    e.ts = start;
    e.dur = span.copy_dur;
    e.category = Category::kCopy;
    e.step = kNone;  // the iteration is the marker's (CardEmitter::Emit)
    e.bytes = copy_bytes;
    if (span.task == Task::kReshardToInfer) {
      e.name = s.k.strings.Intern("optimizer_offload");
      e.flags = kFlagDeviceToHost | kFlagSwapOut;
    } else if (span.task == Task::kReshardToTrain) {
      e.name = s.k.strings.Intern("optimizer_reload");
      e.flags = kFlagHostToDevice | kFlagSwapIn;
    } else {
      e.name = s.k.strings.Intern("weights_copy");
      e.flags = kFlagDeviceToDevice;
    }
    s.Device(kCopy, e, end);
  }
}

// update_actor: the training engine's rank, every time shifted by the
// span's start, steps renumbered iteration * update_steps + step, ids
// (correlation, collective sequence) offset so that iterations stay apart.
void EmitTraining(const Plan& plan, const Rank& tpl, const PhaseSpan& span, CardState& s) {
  const TimeNs shift = span.start;  // the engine's trace starts at kRlBaseTime too
  const int32_t steps = std::max(1, plan.train_config.steps());
  const auto restep = [&](int32_t st) { return st < 0 ? st : span.iteration * steps + st; };
  const int64_t seq_offset = span.iteration * kIterationSequenceStride;
  int64_t corr_min = INT64_MAX, corr_max = -1;
  for (size_t t = 0; t < kEngineTracks; ++t)
    for (int64_t c : tpl.tracks[t].events.correlation)
      if (c >= 0) corr_min = std::min(corr_min, c), corr_max = std::max(corr_max, c);
  const int64_t corr_offset = corr_max < 0 ? 0 : s.next_corr - corr_min;
  if (corr_max >= 0) s.next_corr = corr_max + corr_offset + 1;
  for (size_t t = 0; t < kEngineTracks; ++t) {
    const Track& from = tpl.tracks[t];
    Track& to = s.k.tracks[t];
    if (from.kind == TrackKind::kCounter) {
      // Memory levels as the engine sampled them; `allocated` is rebuilt
      // from the categories (as the engine builds it) with the card's other
      // holdings, e.g. a KV cache, so it is not copied.
      if (t == kAllocated) continue;
      for (size_t i = 0; i < from.sample_ts.size(); ++i) s.SetMem(from.sample_ts[i] + shift, t, from.sample_value[i]);
      continue;
    }
    const uint32_t comm_base = uint32_t(to.comms.size());
    for (const CommRecord& c : from.comms) {
      CommRecord d = c;
      if (d.sequence >= 0) d.sequence += seq_offset;
      d.group_ranks = to.AddRanks(from.Ranks(c.group_ranks));
      d.send_splits = to.AddSplits(from.Splits(c.send_splits));
      d.recv_splits = to.AddSplits(from.Splits(c.recv_splits));
      to.comms.push_back(d);
    }
    // Column by column (a training rank is most of a card's events): the
    // columns kept as they are are appended whole, the others adjusted.
    const EventTable& f = from.events;
    EventTable& d = to.events;
    const size_t at = d.size(), n = f.size();
    const auto append = [](auto& dst, const auto& src) { dst.insert(dst.end(), src.begin(), src.end()); };
    append(d.ts, f.ts);
    append(d.dur, f.dur);
    append(d.name, f.name);
    append(d.category, f.category);
    append(d.phase, f.phase);
    append(d.flags, f.flags);
    append(d.correlation, f.correlation);
    append(d.step, f.step);
    append(d.micro_batch, f.micro_batch);
    append(d.layer, f.layer);
    append(d.comm, f.comm);
    append(d.flops, f.flops);
    append(d.bytes, f.bytes);
    for (size_t i = at; i < at + n; ++i) {
      d.ts[i] += shift;
      d.step[i] = restep(d.step[i]);
      if (d.correlation[i] >= 0) d.correlation[i] += corr_offset;
      if (d.comm[i] >= 0) d.comm[i] += int32_t(comm_base);
      if (d.flags[i] & kFlagStepMarker) d.name[i] = s.k.strings.Intern(fmt::format("ProfilerStep#{}", d.step[i]));
    }
  }
  for (const RoutingRecord& r : tpl.routing) {
    RoutingRecord d = r;
    d.ts += shift;
    d.step = restep(d.step);
    s.k.routing.push_back(std::move(d));
  }
}

// Events and counter samples of `k` not inside one of `phases` (sorted,
// disjoint), the phase markers excepted: one walk per track, both sorted.
int64_t CountOutsidePhases(const std::vector<PhaseSpan>& phases, const Rank& k) {
  int64_t outside = 0;
  const auto walk = [&](size_t n, auto start_of, auto end_of, auto skip) {
    size_t p = 0;
    for (size_t i = 0; i < n; ++i) {
      if (skip(i)) continue;
      const TimeNs a = start_of(i) - kRlBaseTime, b = end_of(i) - kRlBaseTime;
      // The last phase starting by a (phases may touch: a = one's end = the next's start).
      while (p + 1 < phases.size() && phases[p + 1].start <= a) ++p;
      if (phases.empty() || a < phases[p].start || b > phases[p].end) ++outside;
    }
  };
  for (size_t t = 0; t < k.tracks.size(); ++t) {
    const EventTable& e = k.tracks[t].events;
    walk(
        e.size(), [&](size_t i) { return e.ts[i]; }, [&](size_t i) { return e.End(i); },
        [&](size_t i) {
          return t == kPython && e.category[i] == Category::kMarker && !(e.flags[i] & kFlagStepMarker) &&
                 k.strings.Get(e.name[i]).find('/') != std::string_view::npos;
        });
    const auto& ts = k.tracks[t].sample_ts;
    walk(
        ts.size(), [&](size_t i) { return ts[i]; }, [&](size_t i) { return ts[i]; },
        [](size_t) { return false; });
  }
  return outside;
}

}  // namespace

PhaseGroups BuildPhaseGroups(const Plan& plan) {
  PhaseGroups g;
  for (size_t c = 0; c < plan.card.size(); ++c)
    for (const PhaseSpan& p : plan.card[c].phases) g.cards[{p.iteration, p.task}].push_back(int32_t(c));
  return g;  // cards ascending: pushed in card order
}

CardEmitter::CardEmitter(const Plan& plan, const PhaseGroups& groups) : plan_(plan), groups_(groups) {
  if (plan.train_engine) train_ = std::make_unique<RankEmitter>(*plan.train_engine);
}

CardEmitter::~CardEmitter() = default;

void CardEmitter::Emit(int card, Rank* out) {
  if (card < 0 || size_t(card) >= plan_.card.size())
    throw std::out_of_range(fmt::format("rl: card {} outside the plan's {} cards", card, plan_.card.size()));
  const CardPlan& cp = plan_.card[size_t(card)];
  const bool trains =
      train_ && cp.train_rank >= 0 &&
      std::any_of(cp.phases.begin(), cp.phases.end(), [](const PhaseSpan& p) { return p.task == Task::kUpdateActor; });
  Rank& k = *out;
  k = Rank();
  k.rank = card;
  const int per_node = std::max(1, plan_.config.hardware().devices_per_node());
  k.device_id = card % per_node;
  k.pid = 100000 + card;
  k.host = fmt::format("node{}", card / per_node);
  if (trains) {
    train_->Emit(cp.train_rank, &template_);
    if (template_.tracks.size() != kEngineTracks)
      throw std::logic_error("rl: the training engine's track layout changed; update rl_emit.cc");
    // The template's string ids stay valid in the card.
    k.strings = template_.strings;
  }
  AddLayout(k);
  if (trains)
    for (size_t t = 0; t < kEngineTracks; ++t)
      if (k.tracks[t].name != template_.tracks[t].name)
        throw std::logic_error("rl: the training engine's track layout changed; update rl_emit.cc");
  // Steps: a phase marker's is its iteration (the analyzer's RL section
  // reads it); the device work of the RL phases has none, so that a step
  // stays what the pre-training figures mean by it, an optimizer step of
  // the actor update (their windows come from the events' steps).
  CardState s(k);
  // The critic is the actor's architecture trained the same way (README):
  // its update does this card's compute of the actor update, whose figures
  // are the training engine's rank's (summed over its compute ops).
  uint64_t train_flops = 0, train_bytes = 0;
  if (trains)
    for (const Track& t : template_.tracks)
      for (size_t i = 0; i < t.events.size(); ++i)
        if (t.events.category[i] == Category::kCompute) {
          train_flops += t.events.flops[i];
          train_bytes += t.events.bytes[i];
        }
  const TimeNs base = kRlBaseTime;
  // A card that rolls out holds the inference layout's weights from its
  // first phase on (a colocated card's first rollout comes before any
  // training), so a rollout's memory is weights + KV cache. A card that
  // trains switches layouts at each reshard (EmitSwitch) to the levels its
  // engine rank starts from.
  if (cp.instance >= 0 && !cp.phases.empty())
    s.SetMem(base + cp.phases.front().start, kWeights, double(plan_.infer_weight_bytes));
  TrainLevels train_levels;
  if (trains) {
    const auto first = [&](size_t t) {
      const auto& v = template_.tracks[t].sample_value;
      return v.empty() ? 0.0 : v.front();
    };
    train_levels.weights = first(kWeights);
    train_levels.optimizer = first(kOptimizer);
  }
  for (const PhaseSpan& span : cp.phases) {
    Event m;
    m.ts = base + span.start;
    m.dur = span.end - span.start;
    m.name = k.strings.Intern(fmt::format("{}/{}", RoleName(span.task), TaskName(span.task)));
    m.category = Category::kMarker;
    m.step = span.iteration;
    k.tracks[kPython].events.Append(m);
    if (span.task == Task::kGenerateSequences) {
      EmitRollout(plan_, cp.instance, span, s);
    } else if (span.task == Task::kUpdateActor) {
      if (trains) EmitTraining(plan_, template_, span, s);
    } else if (IsSwitch(span.task)) {
      EmitSwitch(plan_, span, groups_, trains ? &train_levels : nullptr, s);
    } else if (span.task == Task::kUpdateCritic && span.flops == 0 && span.bytes == 0) {
      PhaseSpan critic = span;
      critic.flops = train_flops;
      critic.bytes = train_bytes;
      EmitCompute(plan_, critic, groups_, s);
    } else {
      EmitCompute(plan_, span, groups_, s);
    }
  }
  // Memory counters: each category's level, and `allocated` = their sum
  // after the last change at each instant (as engine_emit.cc builds it).
  std::stable_sort(s.mem.begin(), s.mem.end(),
                   [](const CardState::MemSample& a, const CardState::MemSample& b) { return a.ts < b.ts; });
  double level[kTrackCount] = {};
  for (size_t i = 0; i < s.mem.size(); ++i) {
    const auto& m = s.mem[i];
    level[m.track] = m.level;
    s.Counter(m.track, m.ts, m.level);
    if (i + 1 == s.mem.size() || s.mem[i + 1].ts != m.ts) {
      double total = 0;
      for (size_t t = kWeights; t <= kKvCache; ++t) total += level[t];
      s.Counter(kAllocated, m.ts, total);
    }
  }
  // A plan whose phases touch can put a launch of one phase after the
  // next's marker; the writer needs each track in time order.
  for (Track& t : k.tracks)
    if (!t.events.IsSortedByTime()) t.events.SortByTime();
  // The plan promises that its phases hold their work (an update_actor
  // range as long as the engine's rank, rollout steps inside their range):
  // what does not is counted, not fatal, so that a plan off by a little is
  // seen (`moetrace info --json`) without losing the trace.
  const int64_t outside = CountOutsidePhases(cp.phases, k);
  if (outside > 0) k.AddStat("tracegen.rl.outside_phase", outside);
}

void EmitCard(const Plan& plan, int card, Rank* out) {
  const PhaseGroups groups = BuildPhaseGroups(plan);
  CardEmitter(plan, groups).Emit(card, out);
}

}  // namespace moetrace::tracegen::rl
