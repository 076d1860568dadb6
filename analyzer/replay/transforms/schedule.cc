#include "analyzer/replay/transforms/schedule.h"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>

#include <fmt/core.h>

#include "formats/errors.h"
#include "tracegen/config.h"
#include "tracegen/model.h"
#include "tracegen/overlap.h"
#include "tracegen/schedule.h"

namespace moetrace::replay {
namespace {

tracegen::RunConfig ConfigOf(const Trace& trace, const std::string& what) {
  if (trace.metadata.config_json.empty()) {
    ThrowInputError("--set", what,
                    "the graph re-orders pipeline items from the run's schedule, pp, vpp and "
                    "layer split: it needs the trace's configuration (metadata.config_json)");
  }
  return tracegen::ParseConfigJson(trace.metadata.config_json, "metadata.config_json");
}

// A device op of one rank, in issue (correlation) order.
struct IssueOp {
  int64_t corr = -1;
  OpRef ref;
  int32_t step = 0, mb = -1;
  bool backward = false;    // backward or recompute
  bool collective = false;
  bool compute = false;
  bool shared = false;      // a shared-expert op (a branch off the layer's chain)
  bool ep = false;          // an expert all-to-all (ends a segment of a fused item)
};

int64_t TaskKey(const tracegen::PipeTask& t) {
  return (int64_t(t.mb) * 4096 + t.model_stage) * 2 + (t.backward ? 1 : 0);
}

}  // namespace

void CheckVpp(const Trace& trace, int vpp) {
  const std::string what = "parallel.vpp=" + std::to_string(vpp);
  tracegen::RunConfig cfg = ConfigOf(trace, what);
  if (cfg.parallel().vpp() != vpp) {
    ThrowInputError("--set", what,
                    fmt::format("the trace has vpp {}: another vpp splits the layers into other "
                                "pp x vpp slices (other ops on each rank), which the graph cannot "
                                "derive from the recorded events (regenerate a tracegen trace)",
                                cfg.parallel().vpp()));
  }
}

std::string ChangeSchedule(const Trace& trace, std::string_view kind, GraphModifications* mods) {
  const std::string what = "schedule.kind=" + std::string(kind);
  if (kind != "1f1b" && kind != "interleaved" && kind != "adaptive" && kind != "dualpipe") {
    ThrowInputError("--set", what, "expected 1f1b, interleaved, adaptive or dualpipe");
  }
  tracegen::RunConfig cfg = ConfigOf(trace, what);
  const tracegen::ModelShape shape(cfg);
  const std::string old = shape.schedule;
  if (kind == old) return what + ": unchanged";
  if (kind == "dualpipe" || old == "dualpipe") {
    ThrowInputError("--set", what,
                    "dualpipe gives each rank two slices (stages s and pp-1-s) where the other "
                    "schedules give pp x vpp slices: the layer split changes (regenerate a "
                    "tracegen trace)");
  }
  if (kind == "1f1b" && shape.vpp > 1) {
    ThrowInputError("--set", what,
                    fmt::format("1f1b needs vpp 1 and the trace has vpp {}: changing vpp splits "
                                "the layers into other slices (regenerate a tracegen trace)",
                                shape.vpp));
  }
  if (shape.pp < 2) ThrowInputError("--set", what, "pp 1: no pipeline schedule to change");
  if (cfg.memory().swap()) {
    ThrowInputError("--set", what,
                    "swap copies are prefetched across pipeline items: the graph does not "
                    "re-order them (switch memory.swap off first)");
  }
  const bool overlap = cfg.comm().shared_expert_overlap();
  EventEdits& ed = mods->edits;
  if (!ed.active) ed.Init(trace);
  // The memory steps move with the ops they are attached to (activations
  // held from a layer's forward to its backward).
  ed.memory_edited = true;
  const tracegen::ScheduleShape old_sh{old, shape.pp, shape.vpp, shape.micro_batches};
  const tracegen::ScheduleShape new_sh{kind, shape.pp, shape.vpp, shape.micro_batches};
  mods->order.resize(trace.ranks.size());
  int64_t fused_items = 0;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const Rank& rank = trace.ranks[r];
    const int stage = shape.Stage(rank.rank);
    if (stage < 0 || stage >= shape.pp) {
      ThrowInputError("--set", what, fmt::format("rank {} is outside the configuration", rank.rank));
    }
    const auto old_items = tracegen::StageSchedule(old_sh, stage);
    const auto new_items = tracegen::StageSchedule(new_sh, stage);
    // Device ops in issue order.
    std::vector<IssueOp> ops;
    for (size_t t = 0; t < rank.tracks.size(); ++t) {
      const Track& tr = rank.tracks[t];
      if (tr.kind != TrackKind::kDeviceStream) continue;
      const EventTable& ev = tr.events;
      for (size_t i = 0; i < ev.size(); ++i) {
        if (ev.category[i] == Category::kMarker) continue;
        IssueOp o;
        o.corr = ev.correlation[i];
        o.ref = {int32_t(t), int64_t(i)};
        o.step = std::max(0, ev.step[i]);
        o.mb = ev.phase[i] == Phase::kOptimizer ? -1 : ev.micro_batch[i];
        o.backward = ev.phase[i] == Phase::kBackward || ev.phase[i] == Phase::kRecompute;
        o.collective = ev.category[i] == Category::kCollective;
        o.compute = ev.category[i] == Category::kCompute;
        o.shared = rank.strings.Get(ev.name[i]).find("_shared") != std::string_view::npos;
        if (o.collective && ev.comm[i] >= 0 && size_t(ev.comm[i]) < tr.comms.size()) {
          // A removed op (e.g. a recomputed forward's all-to-all) cuts nothing.
          o.ep = tr.comms[size_t(ev.comm[i])].comm_class == CommClass::kEP && !ed.IsRemoved(r, t, i);
        }
        ops.push_back(o);
      }
    }
    std::sort(ops.begin(), ops.end(), [](const IssueOp& a, const IssueOp& b) {
      if (a.step != b.step) return a.step < b.step;
      if (a.corr != b.corr) return a.corr < b.corr;
      return a.ref.track != b.ref.track ? a.ref.track < b.ref.track : a.ref.event < b.ref.event;
    });
    RankOrder& ro = mods->order[r];
    ro = RankOrder();
    ro.active = true;
    const int ntracks = int(rank.tracks.size());
    const int kCommA = ntracks, kCommB = ntracks + 1;  // virtual communication streams
    ro.streams.resize(size_t(ntracks) + 2);
    std::unordered_map<int64_t, int64_t> new_pos;  // correlation -> new issue index
    std::unordered_map<int32_t, int64_t> step_end;  // step -> its last new index
    int64_t pos = 0;
    std::vector<int64_t> last_of_stream(ro.streams.size(), -1);  // op index
    auto bad = [&](const IssueOp& o, const std::string& why) {
      ThrowInputError("--set", what,
                      fmt::format("rank {} step {}: the events do not follow the recorded {} "
                                  "schedule ({}; correlation {})",
                                  rank.rank, o.step, old, why, o.corr));
    };
    for (size_t s0 = 0; s0 < ops.size();) {
      size_t s1 = s0;
      while (s1 < ops.size() && ops[s1].step == ops[s0].step) ++s1;
      // Split the step into the prologue, the old schedule's items, the optimizer.
      std::vector<size_t> head, tail;
      std::vector<std::vector<size_t>> tasks(old_items.size() * 2);
      size_t j = 0;
      bool started = false;
      auto match = [&](size_t jj, const IssueOp& o) -> int {
        if (jj >= old_items.size()) return -1;
        const auto& it = old_items[jj];
        if (it.a.mb == o.mb && it.a.backward == o.backward) return 0;
        if (it.fused && it.b.mb == o.mb && it.b.backward == o.backward) return 1;
        return -1;
      };
      for (size_t k = s0; k < s1; ++k) {
        const IssueOp& o = ops[k];
        if (o.mb < 0) {
          (started ? tail : head).push_back(k);
          continue;
        }
        if (!tail.empty()) bad(o, "a micro-batch op after the optimizer");
        int sub = started ? match(j, o) : -1;
        if (sub < 0) {
          const size_t nj = started ? j + 1 : 0;
          sub = match(nj, o);
          if (sub < 0) bad(o, fmt::format("micro-batch {} {} not in item {}", o.mb, o.backward ? "B" : "F", nj));
          j = nj;
          started = true;
        }
        tasks[j * 2 + size_t(sub)].push_back(k);
      }
      if (started && j + 1 != old_items.size()) bad(ops[s0], "items missing");
      std::unordered_map<int64_t, const std::vector<size_t>*> by_task;
      for (size_t jj = 0; started && jj < old_items.size(); ++jj) {
        by_task[TaskKey(old_items[jj].a)] = &tasks[jj * 2];
        if (old_items[jj].fused) by_task[TaskKey(old_items[jj].b)] = &tasks[jj * 2 + 1];
      }
      // The new issue order: (op, virtual stream).
      std::vector<std::pair<size_t, int>> seq;
      auto vid = [&](const IssueOp& o, bool second) {
        return o.collective ? (second ? kCommB : kCommA) : o.ref.track;
      };
      // Dependencies inside a task, as tracegen builds them: each op waits
      // for the previous op of the layer chain; the shared-expert ops are a
      // branch chained among themselves, forking from the previous chain op,
      // or with --moe-shared-expert-overlap from the previous compute op
      // (the permute, or the combine's predecessor in the backward) so that
      // they overlap the all-to-all.
      auto chain = [&](const std::vector<size_t>& list) {
        int64_t main = -1, branch = -1;
        for (size_t p = 0; p < list.size(); ++p) {
          const IssueOp& o = ops[list[p]];
          int64_t on = -1;
          if (o.shared) {
            if (p > 0 && ops[list[p - 1]].shared) {
              on = branch;
            } else if (!overlap) {
              on = main;
            } else {
              for (size_t q = p; q-- > 0;) {
                if (!ops[list[q]].shared && ops[list[q]].compute) {
                  on = int64_t(list[q]);
                  break;
                }
              }
            }
            branch = int64_t(list[p]);
          } else {
            on = main;
            main = int64_t(list[p]);
          }
          if (on >= 0) ro.waits.push_back({o.ref, ops[size_t(on)].ref});
        }
      };
      for (size_t k : head) seq.push_back({k, vid(ops[k], false)});
      chain(head);
      for (size_t jj = 0; started && jj < new_items.size(); ++jj) {
        const auto& it = new_items[jj];
        auto find = [&](const tracegen::PipeTask& t) -> const std::vector<size_t>& {
          auto f = by_task.find(TaskKey(t));
          if (f == by_task.end()) bad(ops[s0], fmt::format("no ops for micro-batch {} slice {}", t.mb, t.model_stage));
          return *f->second;
        };
        const std::vector<size_t>& a = find(it.a);
        chain(a);
        if (!it.fused) {
          for (size_t k : a) seq.push_back({k, vid(ops[k], false)});
          continue;
        }
        ++fused_items;
        const std::vector<size_t>& b = find(it.b);
        chain(b);
        if (it.a.mb == it.b.mb && it.a.model_stage == it.b.model_stage && it.a.backward != it.b.backward) {
          // tracegen's last-slice pair of one micro-batch (the adaptive
          // schedule at the last stage): the forward, then the backward from
          // the loss (tracegen BuildItem), nothing interleaved.
          const std::vector<size_t>& f = it.a.backward ? b : a;
          const std::vector<size_t>& bw = it.a.backward ? a : b;
          int64_t f_last = -1;  // the forward's last op off the copy stream
          for (size_t k : f) {
            seq.push_back({k, vid(ops[k], false)});
            if (ops[k].compute || ops[k].collective) f_last = int64_t(k);
          }
          for (size_t k : bw) {
            if (ops[k].compute || ops[k].collective) {
              if (f_last >= 0) ro.waits.push_back({ops[k].ref, ops[size_t(f_last)].ref});
              break;
            }
          }
          for (size_t k : bw) seq.push_back({k, vid(ops[k], false)});
          continue;
        }
        // tracegen's fused item (DualPipe's fixed pattern): each task cut
        // into segments ending at an expert all-to-all, the segments
        // alternating, the backward first; its collectives on their own
        // stream so both tasks' all-to-alls can be in flight.
        std::vector<tracegen::OverlapOp> kinds;
        std::vector<size_t> merged;
        for (int c = 0; c < 2; ++c) {
          for (size_t k : c == 0 ? a : b) {
            kinds.push_back({uint8_t(c), ops[k].ep});
            merged.push_back(k);
          }
        }
        const bool fb = it.a.backward != it.b.backward;
        for (int32_t x : tracegen::AlternateSegments(kinds, fb && it.b.backward ? 1 : 0)) {
          const size_t k = merged[size_t(x)];
          seq.push_back({k, vid(ops[k], size_t(x) >= a.size())});
        }
      }
      // The optimizer starts once every op before it has ended.
      if (!tail.empty()) {
        for (const auto& [k, v] : seq) last_of_stream[size_t(v)] = int64_t(k);
        for (int64_t k : last_of_stream) {
          if (k >= 0) ro.waits.push_back({ops[tail.front()].ref, ops[size_t(k)].ref});
        }
      }
      for (size_t k : tail) seq.push_back({k, vid(ops[k], false)});
      chain(tail);
      for (const auto& [k, v] : seq) {
        ro.streams[size_t(v)].push_back(ops[k].ref);
        last_of_stream[size_t(v)] = int64_t(k);
        if (ops[k].corr >= 0) new_pos[ops[k].corr] = pos;
        ++pos;
      }
      step_end[ops[s0].step] = pos - 1;
      s0 = s1;
    }
    // Host threads: each launch at its op's new place; a sync stays just
    // before the next launch of its step (or at the step's end).
    ro.thread.resize(rank.tracks.size());
    for (size_t t = 0; t < rank.tracks.size(); ++t) {
      const Track& tr = rank.tracks[t];
      if (tr.kind != TrackKind::kHostThread) continue;
      const EventTable& ev = tr.events;
      std::vector<std::pair<int64_t, int64_t>> keyed;  // (key, event)
      std::vector<size_t> pending;
      auto settle = [&](int64_t key) {
        for (size_t i : pending) keyed.push_back({key, int64_t(i)});
        pending.clear();
      };
      auto end_key = [&](size_t i) {
        auto it = step_end.find(ev.step[i]);
        return it != step_end.end() ? it->second * 4 + 2 : std::numeric_limits<int64_t>::max();
      };
      for (size_t i = 0; i < ev.size(); ++i) {
        const bool launch = ev.category[i] == Category::kLaunch && !(ev.flags[i] & kFlagBlocking);
        const bool sync = ev.category[i] == Category::kSync || (ev.flags[i] & kFlagBlocking);
        if (!launch && !sync) continue;
        auto it = launch ? new_pos.find(ev.correlation[i]) : new_pos.end();
        if (it == new_pos.end()) {
          pending.push_back(i);
          continue;
        }
        // Pending syncs of another step close theirs.
        std::vector<size_t> keep;
        for (size_t p : pending) {
          if (ev.step[p] >= 0 && step_end.count(ev.step[p]) && step_end[ev.step[p]] < it->second) {
            keyed.push_back({end_key(p), int64_t(p)});
          } else {
            keep.push_back(p);
          }
        }
        pending = keep;
        settle(it->second * 4);
        keyed.push_back({it->second * 4 + 1, int64_t(i)});
      }
      for (size_t p : pending) keyed.push_back({end_key(p), int64_t(p)});
      std::stable_sort(keyed.begin(), keyed.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      for (const auto& [key, i] : keyed) ro.thread[t].push_back(i);
    }
  }
  return fmt::format("{}: {} -> {} (pp {}, vpp {}, {} micro-batches): ops re-issued in the new "
                     "order, {} fused forward & backward items over all ranks",
                     what, old, kind, shape.pp, shape.vpp, shape.micro_batches, fused_items);
}

}  // namespace moetrace::replay
