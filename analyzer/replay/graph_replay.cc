#include "analyzer/replay/graph_replay.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>

namespace moetrace::replay {
namespace {

constexpr TimeNs kUnset = std::numeric_limits<TimeNs>::min();

enum NodeKind : uint8_t { kPassive, kHost, kSyncNode, kDev, kColl, kRecvNode };

// 16 bytes: a replay holds about two per node (the largest table after the
// trace itself).
struct Edge {
  Edge() = default;
  Edge(int64_t f, TimeNs l, bool s, bool e) : lag(l), from(uint64_t(f)), on_start(s), for_end(e) {}
  TimeNs lag = 0;            // already scaled
  uint64_t from : 62;        // node index
  uint64_t on_start : 1;     // from's start instead of its end
  uint64_t for_end : 1;      // constrains the end (sync release, send of a receive)
};
static_assert(sizeof(Edge) == 16);

struct Rendezvous {
  std::vector<int64_t> members;
  int32_t arrived = 0;
  bool resolved = false;
};

TimeNs Scale(TimeNs t, double f) { return f == 1.0 ? t : TimeNs(std::llround(double(t) * f)); }

// fn(0 .. workers-1), worker 0 on the calling thread (and any worker whose
// thread cannot start); once all have ended, the exception of the lowest
// worker that threw is rethrown (the earliest ranks': what one pass throws).
template <typename Fn>
void RunWorkers(size_t workers, const Fn& fn) {
  std::vector<std::exception_ptr> error(workers);
  auto guarded = [&](size_t w) {
    try {
      fn(w);
    } catch (...) {
      error[w] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(workers);
  std::vector<size_t> inline_workers = {0};
  for (size_t w = 1; w < workers; ++w) {
    try {
      threads.emplace_back(guarded, w);
    } catch (...) {  // std::system_error (no thread left) or bad_alloc
      inline_workers.push_back(w);  // run it here
    }
  }
  for (size_t w : inline_workers) guarded(w);
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : error) {
    if (e) std::rethrow_exception(e);
  }
}

class Replayer {
 public:
  Replayer(const Trace& trace, const GraphModifications& mods, int threads)
      : in_(trace), mods_(mods), threads_(threads) {}

  Trace Run(GraphStats* stats) {
    Index();
    BuildNodes();
    BuildEdges();
    Schedule();
    FreeSchedule();  // the predicted trace is as large as the input: not both at once
    Trace out = Emit();
    if (stats) *stats = stats_;
    return out;
  }

 private:
  // ---- node table -------------------------------------------------------
  void Index() {
    base_.resize(in_.ranks.size());
    int64_t n = 0;
    for (size_t r = 0; r < in_.ranks.size(); ++r) {
      const Rank& rank = in_.ranks[r];
      base_[r].resize(rank.tracks.size());
      for (size_t t = 0; t < rank.tracks.size(); ++t) {
        base_[r][t] = n;
        if (rank.tracks[t].kind != TrackKind::kCounter) n += int64_t(rank.tracks[t].events.size());
      }
    }
    const size_t N = size_t(n);
    os_.resize(N); oe_.resize(N); ns_.assign(N, kUnset); ne_.assign(N, kUnset);
    slack_.assign(N, 0); dur_.assign(N, 0); kind_.assign(N, kPassive); rank_of_.assign(N, 0);
    rdv_.assign(N, -1); removed_.assign(N, 0);
    stats_.nodes = n;
  }

  int32_t RoleOf(int32_t rank) const {
    const auto& v = mods_.role_of;
    return rank >= 0 && size_t(rank) < v.size() ? v[size_t(rank)] : -1;
  }

  bool IsRemovedSync(std::string_view name) const {
    for (const std::string& s : mods_.remove_syncs) {
      if (s == "all" || name.find(s) != std::string_view::npos) return true;
    }
    return false;
  }

  // The nodes' collectives and pipeline transfers, by key, in node order:
  // registered after the parallel pass, in the order one pass adds them.
  struct PendingComm {
    int64_t node;
    std::string key;
    int32_t group_size;
    bool collective, send;
  };
  struct NodeBatch {
    std::vector<PendingComm> pending;
    int64_t syncs_removed = 0;
  };

  // One rank's nodes: it writes its own nodes only.
  void BuildRankNodes(size_t r, NodeBatch* b) {
    const double f = mods_.host_factor;
    const EventEdits& ed = mods_.edits;
    const Rank& rank = in_.ranks[r];
    for (size_t t = 0; t < rank.tracks.size(); ++t) {
      const Track& track = rank.tracks[t];
      if (track.kind == TrackKind::kCounter) continue;
      const EventTable& ev = track.events;
      for (size_t i = 0; i < ev.size(); ++i) {
        const int64_t n = base_[r][t] + int64_t(i);
        os_[n] = ev.ts[i];
        oe_[n] = ev.ts[i] + std::max<TimeNs>(0, ev.dur[i]);
        rank_of_[n] = int32_t(r);
        const Category c = ev.category[i];
        if (track.kind == TrackKind::kHostThread) {
          const bool edited_out = ed.active && ed.removed[r][t][i];
          if (c == Category::kLaunch && !(ev.flags[i] & kFlagBlocking)) {
            kind_[n] = kHost;
            dur_[n] = Scale(ed.active ? ed.dur[r][t][i] : oe_[n] - os_[n], f);
            removed_[n] = edited_out;
          } else if (c == Category::kSync || (ev.flags[i] & kFlagBlocking)) {
            kind_[n] = kSyncNode;
            dur_[n] = oe_[n] - os_[n];
            if (edited_out || IsRemovedSync(rank.strings.Get(ev.name[i]))) {
              removed_[n] = 1;
              ++b->syncs_removed;
            }
          }
          continue;
        }
        if (c == Category::kMarker) continue;
        kind_[n] = kDev;
        const int32_t ci = ev.comm[i];
        const CommRecord* recp =
            ci >= 0 && size_t(ci) < track.comms.size() ? &track.comms[size_t(ci)] : nullptr;
        const OpClass cls = ClassifyOp(rank.strings.Get(ev.name[i]), c,
                                       recp ? recp->kind : CollectiveKind::kNone);
        const double speed = mods_.speed[int(cls)];
        const TimeNs base = ed.active ? ed.dur[r][t][i] : oe_[n] - os_[n];
        dur_[n] = speed == 1.0 ? base : TimeNs(std::llround(double(base) / speed));
        if (ed.active && ed.removed[r][t][i]) {
          removed_[n] = 1;
          dur_[n] = 0;
          continue;
        }
        if (!recp) continue;
        const CommRecord& rec = *recp;
        if (rec.sequence < 0) continue;
        std::string key(rank.strings.Get(rec.group));
        key += '#';
        key += std::to_string(rec.sequence);
        if (c == Category::kP2P && !mods_.role_of.empty()) {
          // Role-reduced: the peer is another role's representative, the pair
          // named by (sender role, receiver role, sequence).
          const int32_t self = RoleOf(rank.rank), peer = RoleOf(rec.peer);
          if (self >= 0 && peer >= 0) {
            const bool send = rec.kind == CollectiveKind::kSend;
            key = "role:" + std::to_string(send ? self : peer) + '>' +
                  std::to_string(send ? peer : self) + '#' + std::to_string(rec.sequence);
          }
        }
        if (c == Category::kCollective && rec.group_size >= 2) {
          b->pending.push_back({n, std::move(key), rec.group_size, true, false});
        } else if (c == Category::kP2P &&
                   (rec.kind == CollectiveKind::kSend || rec.kind == CollectiveKind::kRecv)) {
          b->pending.push_back({n, std::move(key), 0, false, rec.kind == CollectiveKind::kSend});
        }
      }
    }
  }

  void BuildNodes() {
    const size_t workers = Workers();
    const std::vector<size_t> first = RankRuns(workers);
    std::vector<NodeBatch> batches(workers);
    RunWorkers(workers, [&](size_t w) {
      for (size_t r = first[w]; r < first[w + 1]; ++r) BuildRankNodes(r, &batches[w]);
    });
    std::unordered_map<std::string, int32_t> rdv_index;
    struct P2P { int64_t node; int32_t rank; bool send; };
    std::unordered_map<std::string, std::vector<P2P>> p2p;
    for (NodeBatch& batch : batches) {
      stats_.syncs_removed += batch.syncs_removed;
      for (PendingComm& pc : batch.pending) {
        const int64_t n = pc.node;
        if (pc.collective) {
          auto [it, fresh] = rdv_index.emplace(std::move(pc.key), int32_t(rdvs_.size()));
          if (fresh) rdvs_.emplace_back();
          rdvs_[size_t(it->second)].members.push_back(n);
          rdv_[n] = it->second;
          group_size_.resize(rdvs_.size(), 0);
          group_size_[size_t(it->second)] = pc.group_size;
        } else {
          p2p[std::move(pc.key)].push_back({n, rank_of_[n], pc.send});
        }
      }
      std::vector<PendingComm>().swap(batch.pending);
    }
    // A rendezvous needs every member, on distinct ranks.
    for (size_t k = 0; k < rdvs_.size(); ++k) {
      auto& m = rdvs_[k].members;
      // Role-reduced: the members present stand for their roles.
      bool ok = mods_.role_of.empty() ? int32_t(m.size()) == group_size_[k]
                                      : m.size() >= 2 && int32_t(m.size()) <= group_size_[k];
      for (size_t a = 0; ok && a < m.size(); ++a) {
        for (size_t b = a + 1; b < m.size(); ++b) ok &= rank_of_[m[a]] != rank_of_[m[b]];
      }
      if (ok) {
        for (int64_t n : m) kind_[n] = kColl;
        ++stats_.collectives_matched;
      } else {
        for (int64_t n : m) rdv_[n] = -1;
        stats_.collectives_unmatched += int64_t(m.size());
      }
    }
    // Pipeline receive <- its send (one of each, on different ranks).
    send_of_.assign(os_.size(), -1);
    for (auto& [key, v] : p2p) {
      if (v.size() != 2 || v[0].send == v[1].send || v[0].rank == v[1].rank) continue;
      const P2P& s = v[0].send ? v[0] : v[1];
      const P2P& rv = v[0].send ? v[1] : v[0];
      // The receive's tail after both were ready; a negative one means
      // clocks disagree: the receive then keeps its own duration.
      if (oe_[rv.node] - std::max(os_[rv.node], oe_[s.node]) < 0) continue;
      kind_[rv.node] = kRecvNode;
      send_of_[rv.node] = s.node;
      ++stats_.recvs_matched;
    }
  }

  // ---- edges --------------------------------------------------------------
  // The edges of a run of ranks, in the order the serial pass adds them, and
  // the run's counters: BuildEdges' workers each fill one.
  struct EdgeBatch {
    std::vector<std::pair<int64_t, Edge>> edges;
    int64_t cross_stream_waits = 0, syncs_with_release = 0;
  };

  static void AddEdge(EdgeBatch* b, int64_t to, Edge e) { b->edges.emplace_back(to, e); }

  // A task queue the trace does not have (launch_lag_ns): one dequeue thread
  // per rank launches each op launch_lag_ns after the later of its enqueue
  // and the previous dequeue, in the recorded enqueue order. A fixed lag
  // instead would let the launches overlap where the dequeue thread is the
  // slower one. The dequeues are nodes of their own, not emitted.
  template <typename Launches>
  void AddDequeueChain(const Launches& launches, EdgeBatch* b) {
    // Every enqueue node exists already; the dequeues are appended below.
    if (dequeue_of_.size() < os_.size()) dequeue_of_.resize(os_.size(), -1);
    std::vector<std::pair<TimeNs, int64_t>> enqueues;
    for (const auto& l : launches) {
      if (!removed_[size_t(l.node)]) enqueues.emplace_back(oe_[size_t(l.node)], l.node);
    }
    std::sort(enqueues.begin(), enqueues.end());
    int64_t prev = -1;
    for (const auto& [end, enqueue] : enqueues) {
      const int64_t v = int64_t(os_.size());
      os_.push_back(end); oe_.push_back(end + mods_.launch_lag_ns);
      ns_.push_back(kUnset); ne_.push_back(kUnset); slack_.push_back(0);
      dur_.push_back(mods_.launch_lag_ns); kind_.push_back(kHost); removed_.push_back(0);
      rank_of_.push_back(rank_of_[size_t(enqueue)]); rdv_.push_back(-1); send_of_.push_back(-1);
      issue_end_.push_back(kUnset);
      AddEdge(b, v, {enqueue, 0, false, false});
      if (prev >= 0) AddEdge(b, v, {prev, 0, false, false});
      dequeue_of_[size_t(enqueue)] = v;
      prev = v;
    }
  }

  // An op's edge from its (last) launch: through its dequeue when there is one.
  Edge LaunchEdge(int64_t launch, bool removed) const {
    const int64_t dq = size_t(launch) < dequeue_of_.size() ? dequeue_of_[size_t(launch)] : -1;
    if (dq >= 0 && !removed) return {dq, 0, false, false};
    return {launch, removed ? 0 : mods_.launch_lag_ns, false, false};
  }

  // Worker threads for the passes over ranks (at most one per rank).
  size_t Workers() const {
    const size_t want = threads_ > 0 ? size_t(threads_) : std::max(1u, std::thread::hardware_concurrency());
    return std::min<size_t>(std::max<size_t>(in_.ranks.size(), 1), want);
  }

  // Runs of ranks of about equal nodes, one per worker: worker w takes ranks
  // first[w] .. first[w + 1] - 1.
  std::vector<size_t> RankRuns(size_t workers) const {
    const size_t R = in_.ranks.size();
    std::vector<int64_t> upto(R + 1, 0);  // nodes of the ranks before r
    for (size_t r = 0; r < R; ++r) {
      int64_t n = 0;
      for (const Track& t : in_.ranks[r].tracks) {
        if (t.kind != TrackKind::kCounter) n += int64_t(t.events.size());
      }
      upto[r + 1] = upto[r] + n;
    }
    std::vector<size_t> first(workers + 1, R);
    first[0] = 0;
    for (size_t w = 1; w < workers; ++w) {
      const int64_t target = upto[R] / int64_t(workers) * int64_t(w);
      const size_t at = size_t(std::lower_bound(upto.begin(), upto.end(), target) - upto.begin());
      first[w] = std::clamp(at, first[w - 1], R);
    }
    return first;
  }

  // One rank's edges. It writes its own nodes' slack and issue end only, and
  // reads the node tables: ranks can be built side by side.
  void BuildRankEdges(size_t r, EdgeBatch* b) {
    const double f = mods_.host_factor;
    const Rank& rank = in_.ranks[r];
    // Launch events of the rank by (correlation, end).
    struct L { int64_t corr; TimeNs end; int64_t node; size_t track; };
    std::vector<L> launches;
    for (size_t t = 0; t < rank.tracks.size(); ++t) {
      const Track& track = rank.tracks[t];
      if (track.kind != TrackKind::kHostThread) continue;
      for (size_t i = 0; i < track.events.size(); ++i) {
        const int64_t n = base_[r][t] + int64_t(i);
        if (kind_[n] == kHost && track.events.correlation[i] >= 0) {
          launches.push_back({track.events.correlation[i], oe_[n], n, t});
        }
      }
    }
    std::sort(launches.begin(), launches.end(), [](const L& a, const L& b) {
      return a.corr != b.corr ? a.corr < b.corr : a.end < b.end;
    });
    auto range = [&](int64_t corr) {
      auto lo = std::lower_bound(launches.begin(), launches.end(), corr,
                                 [](const L& a, int64_t c) { return a.corr < c; });
      auto hi = lo;
      while (hi != launches.end() && hi->corr == corr) ++hi;
      return std::make_pair(lo, hi);
    };

    const RankOrder* ro =
        r < mods_.order.size() && mods_.order[r].active ? &mods_.order[r] : nullptr;

    // Host threads: thread order and launch chains. The edge to the
    // previous node carries the host work recorded before this one; a
    // re-ordered thread keeps it and chains in the new order.
    for (size_t t = 0; t < rank.tracks.size(); ++t) {
      const Track& track = rank.tracks[t];
      if (track.kind != TrackKind::kHostThread) continue;
      struct Link { int64_t node; TimeNs lag; bool on_start; bool has_prev; };
      std::vector<Link> links;
      int64_t prev = -1;
      for (size_t i = 0; i < track.events.size(); ++i) {
        const int64_t n = base_[r][t] + int64_t(i);
        if (kind_[n] == kPassive) continue;
        int64_t cross = -1;
        if (kind_[n] == kHost && track.events.correlation[i] >= 0) {
          auto [lo, hi] = range(track.events.correlation[i]);
          for (auto it = lo; it != hi; ++it) {
            if (it->track != t && it->end <= os_[n]) cross = it->node;
          }
        }
        Link link{n, 0, false, prev >= 0};
        TimeNs est = kUnset;
        if (prev >= 0) {
          if (cross >= 0 && oe_[cross] >= oe_[prev]) {
            est = oe_[prev];  // it waited for the other thread
          } else if (removed_[n] && kind_[n] == kHost) {
            est = os_[n];  // a removed launch: its host work goes with it
          } else if (os_[n] >= oe_[prev]) {
            link.lag = Scale(os_[n] - oe_[prev], f);
            est = os_[n];
          } else {
            link.lag = Scale(os_[n] - os_[prev], f);
            link.on_start = true;
            est = os_[n];
          }
        }
        if (cross >= 0) {
          AddEdge(b, n, {cross, 0, false, false});
          est = std::max(est, oe_[cross]);
        }
        if (est != kUnset && !(removed_[n] && kind_[n] == kHost)) slack_[n] = Scale(os_[n] - est, f);
        links.push_back(link);
        prev = n;
      }
      if (ro && t < ro->thread.size() && !ro->thread[t].empty()) {
        // Re-ordered: the same links, in the new order.
        std::vector<int64_t> pos(track.events.size(), -1);
        for (size_t k = 0; k < links.size(); ++k) pos[size_t(links[k].node - base_[r][t])] = int64_t(k);
        int64_t before = -1;
        for (int64_t e : ro->thread[t]) {
          if (e < 0 || size_t(e) >= pos.size() || pos[size_t(e)] < 0) continue;
          const Link& l = links[size_t(pos[size_t(e)])];
          if (before >= 0) AddEdge(b, l.node, {before, l.has_prev ? l.lag : 0, l.has_prev && l.on_start, false});
          before = l.node;
        }
        continue;
      }
      for (size_t k = 1; k < links.size(); ++k) {
        if (links[k].has_prev) AddEdge(b, links[k].node, {links[k - 1].node, links[k].lag, links[k].on_start, false});
      }
    }

    if (mods_.launch_lag_ns > 0 && !ro) AddDequeueChain(launches, b);

    // Device streams: stream order, launch, inferred cross-stream waits.
    struct D { TimeNs end; int64_t node; size_t track; };
    std::vector<D> by_end;
    for (size_t t = 0; t < rank.tracks.size(); ++t) {
      const Track& track = rank.tracks[t];
      if (track.kind != TrackKind::kDeviceStream) continue;
      for (size_t i = 0; i < track.events.size(); ++i) {
        const int64_t n = base_[r][t] + int64_t(i);
        if (kind_[n] == kPassive) continue;
        by_end.push_back({oe_[n], n, t});
        if (track.events.correlation[i] >= 0) {
          auto [lo, hi] = range(track.events.correlation[i]);
          // Issued when its first launch ends: with the task queue, the
          // enqueue; a sync drains the queue, so it also waits for ops
          // enqueued before it and still to be dequeued.
          if (lo != hi) issue_end_[n] = lo->end;
        }
      }
    }
    std::sort(by_end.begin(), by_end.end(), [](const D& a, const D& b) {
      return a.end != b.end ? a.end < b.end : a.node < b.node;
    });
    if (ro) {
      // Re-ordered rank: the given streams and waits; each op waits for
      // its stream predecessor, its launch, and what the order names.
      auto node = [&](const OpRef& o) { return base_[r][size_t(o.track)] + o.event; };
      for (const auto& stream : ro->streams) {
        int64_t prev = -1;
        for (const OpRef& o : stream) {
          const int64_t n = node(o);
          if (kind_[n] == kPassive) continue;
          if (prev >= 0) AddEdge(b, n, {prev, 0, false, false});
          const int64_t corr = rank.tracks[size_t(o.track)].events.correlation[size_t(o.event)];
          if (corr >= 0) {
            auto [lo, hi] = range(corr);
            if (lo != hi) AddEdge(b, n, {(hi - 1)->node, removed_[n] ? 0 : mods_.launch_lag_ns, false, false});
          }
          if (kind_[n] == kRecvNode) AddEdge(b, n, {send_of_[n], 0, false, true});
          slack_[n] = 0;
          prev = n;
        }
      }
      for (const auto& [op, on] : ro->waits) AddEdge(b, node(op), {node(on), 0, false, false});
    }
    for (size_t t = 0; t < rank.tracks.size() && !ro; ++t) {
      const Track& track = rank.tracks[t];
      if (track.kind != TrackKind::kDeviceStream) continue;
      int64_t prev = -1;  // op with the running maximum end
      for (size_t i = 0; i < track.events.size(); ++i) {
        const int64_t n = base_[r][t] + int64_t(i);
        if (kind_[n] == kPassive) continue;
        TimeNs est = kUnset;
        if (prev >= 0) {
          if (oe_[prev] <= os_[n]) {
            AddEdge(b, n, {prev, 0, false, false});
            est = oe_[prev];
          } else {
            AddEdge(b, n, {prev, os_[n] - os_[prev], true, false});
            est = os_[n];
          }
        }
        if (track.events.correlation[i] >= 0) {
          auto [lo, hi] = range(track.events.correlation[i]);
          if (lo != hi) {
            AddEdge(b, n, LaunchEdge((hi - 1)->node, removed_[n]));
            est = std::max(est, (hi - 1)->end);
          }
        }
        if (est == kUnset || est < os_[n]) {
          // Unexplained wait: the latest op of another stream that ended
          // by our start (a cross-stream event wait).
          auto it = std::upper_bound(by_end.begin(), by_end.end(), os_[n],
                                     [](TimeNs v, const D& d) { return v < d.end; });
          for (int k = 0; k < 16 && it != by_end.begin(); ++k) {
            --it;
            if (it->track == t || it->node == n) continue;
            if (est == kUnset || it->end > est) {
              AddEdge(b, n, {it->node, 0, false, false});
              est = it->end;
              ++b->cross_stream_waits;
            }
            break;
          }
        }
        if (est != kUnset && !removed_[n]) slack_[n] = os_[n] - est;
        if (kind_[n] == kRecvNode) AddEdge(b, n, {send_of_[n], 0, false, true});
        if (prev < 0 || oe_[n] >= oe_[prev]) prev = n;
      }
    }

    // Host syncs: released by the device op they waited for.
    for (size_t t = 0; t < rank.tracks.size(); ++t) {
      const Track& track = rank.tracks[t];
      if (track.kind != TrackKind::kHostThread) continue;
      for (size_t i = 0; i < track.events.size(); ++i) {
        const int64_t n = base_[r][t] + int64_t(i);
        if (kind_[n] != kSyncNode || removed_[n]) continue;
        auto it = std::upper_bound(by_end.begin(), by_end.end(), oe_[n],
                                   [](TimeNs v, const D& d) { return v < d.end; });
        for (int k = 0; k < 64 && it != by_end.begin(); ++k) {
          --it;
          const int64_t d = it->node;
          const TimeNs issued = issue_end_[d] != kUnset ? issue_end_[d] : os_[d];
          if (issued > os_[n]) continue;
          if (it->end < os_[n]) break;  // finished before the sync began: no wait on it
          AddEdge(b, n, {d, oe_[n] - it->end, false, true});
          ++b->syncs_with_release;
          break;
        }
      }
    }
  }

  void BuildEdges() {
    issue_end_.assign(os_.size(), kUnset);
    // Each worker takes a run of ranks of about equal nodes; their batches in
    // order hold the edges in the order one pass over the ranks adds them.
    // The added task queue appends nodes (AddDequeueChain): one worker then.
    const size_t workers = mods_.launch_lag_ns > 0 ? 1 : Workers();
    const std::vector<size_t> first = RankRuns(workers);
    std::vector<EdgeBatch> batches(workers);
    RunWorkers(workers, [&](size_t w) {
      for (size_t r = first[w]; r < first[w + 1]; ++r) BuildRankEdges(r, &batches[w]);
    });
    size_t n_edges = 0;
    for (const EdgeBatch& batch : batches) {
      stats_.cross_stream_waits += batch.cross_stream_waits;
      stats_.syncs_with_release += batch.syncs_with_release;
      n_edges += batch.edges.size();
    }
    // CSR of predecessors and successors: two independent passes, side by side.
    const size_t N = os_.size();
    auto csr = [&](bool preds) {
      std::vector<int64_t> begin(N + 1, 0);
      for (const EdgeBatch& batch : batches) {
        for (const auto& [to, e] : batch.edges) ++begin[size_t(preds ? to : int64_t(e.from)) + 1];
      }
      for (size_t i = 0; i < N; ++i) begin[i + 1] += begin[i];
      std::vector<int64_t> fill(begin.begin(), begin.end() - 1);
      if (preds) {
        deps_.resize(n_edges);
        for (const EdgeBatch& batch : batches) {
          for (const auto& [to, e] : batch.edges) deps_[size_t(fill[size_t(to)]++)] = e;
        }
        dep_begin_ = std::move(begin);
      } else {
        succs_.resize(n_edges);
        for (const EdgeBatch& batch : batches) {
          for (const auto& [to, e] : batch.edges) succs_[size_t(fill[size_t(e.from)]++)] = to;
        }
        succ_begin_ = std::move(begin);
      }
    };
    if (Workers() >= 2) {
      RunWorkers(2, [&](size_t w) { csr(w == 0); });
    } else {
      csr(true);
      csr(false);
    }
  }

  // ---- scheduling -------------------------------------------------------
  TimeNs DepTime(const Edge& e, bool forced) const {
    const int64_t d = e.from;
    if (e.on_start) return ns_[d] != kUnset ? ns_[d] : (forced ? os_[d] : kUnset);
    return ne_[d] != kUnset ? ne_[d] : (forced ? oe_[d] : kUnset);
  }

  void MarkDone(int64_t n, std::vector<int64_t>* ready) {
    for (int64_t s = succ_begin_[size_t(n)]; s < succ_begin_[size_t(n) + 1]; ++s) {
      const int64_t m = succs_[size_t(s)];
      if (--indeg_[size_t(m)] == 0 && !started_[size_t(m)]) ready->push_back(m);
    }
  }

  void Resolve(Rendezvous& rv, std::vector<int64_t>* ready) {
    // Clock-free rendezvous: the members finish together a transfer time T
    // (the shortest member's duration) after the last arrival. Each
    // member's end moves by the largest (arrival shift - original wait).
    TimeNs T = std::numeric_limits<TimeNs>::max();
    for (int64_t m : rv.members) T = std::min(T, oe_[m] - os_[m]);
    // The new transfer: the smallest member duration after speed factors
    // and transforms (each applies one monotonic function to every member).
    TimeNs T2 = std::numeric_limits<TimeNs>::max();
    for (int64_t m : rv.members) T2 = std::min(T2, dur_[m]);
    TimeNs shift = std::numeric_limits<TimeNs>::min();
    for (int64_t m : rv.members) {
      const TimeNs start = ns_[m] != kUnset ? ns_[m] : os_[m];
      shift = std::max(shift, start - os_[m] - ((oe_[m] - os_[m]) - T));
    }
    rv.resolved = true;
    for (int64_t m : rv.members) {
      ne_[m] = oe_[m] + (T2 - T) + shift;
      if (ns_[m] != kUnset) {
        ne_[m] = std::max(ne_[m], ns_[m]);
        MarkDone(m, ready);
      }
    }
  }

  void Process(int64_t n, bool forced, std::vector<int64_t>* ready) {
    started_[size_t(n)] = 1;
    TimeNs start = kUnset, end_floor = kUnset;
    bool has_start_dep = false;
    for (int64_t k = dep_begin_[size_t(n)]; k < dep_begin_[size_t(n) + 1]; ++k) {
      const Edge& e = deps_[size_t(k)];
      const TimeNs t = DepTime(e, forced);
      if (t == kUnset) continue;
      if (e.for_end) {
        end_floor = std::max(end_floor, t + e.lag);
      } else {
        has_start_dep = true;
        start = std::max(start, t + e.lag);
      }
    }
    ns_[n] = has_start_dep ? start + slack_[n] : os_[n];
    switch (kind_[n]) {
      case kSyncNode:
        if (removed_[n]) {
          ne_[n] = ns_[n];
        } else if (end_floor != kUnset) {
          ne_[n] = std::max(ns_[n], end_floor);
        } else {
          ne_[n] = ns_[n] + dur_[n];
        }
        break;
      case kRecvNode: {
        const int64_t s = send_of_[n];
        const TimeNs tail = oe_[n] - std::max(os_[n], oe_[s]);
        ne_[n] = std::max(ns_[n], end_floor != kUnset ? end_floor : oe_[s]) + tail;
        break;
      }
      case kColl: {
        Rendezvous& rv = rdvs_[size_t(rdv_[n])];
        if (rv.resolved) {  // forced earlier without us
          ne_[n] = std::max(ne_[n], ns_[n]);
          break;
        }
        if (++rv.arrived < int32_t(rv.members.size())) return;  // wait for the others
        Resolve(rv, ready);
        return;
      }
      default:
        ne_[n] = ns_[n] + dur_[n];
    }
    MarkDone(n, ready);
  }

  void Schedule() {
    const size_t N = os_.size();
    indeg_.assign(N, 0);
    started_.assign(N, 0);
    std::vector<int64_t> ready, order;
    for (size_t n = 0; n < N; ++n) {
      if (kind_[n] == kPassive) continue;
      indeg_[n] = dep_begin_[n + 1] - dep_begin_[n];
      order.push_back(int64_t(n));
      if (indeg_[n] == 0) ready.push_back(int64_t(n));
    }
    // A strict order (ties by node): two sorted halves merged are the one sort.
    auto by_start = [&](int64_t a, int64_t b) { return os_[a] != os_[b] ? os_[a] < os_[b] : a < b; };
    if (Workers() >= 2 && order.size() >= 4096) {
      const auto mid = order.begin() + std::ptrdiff_t(order.size() / 2);
      RunWorkers(2, [&](size_t w) {
        if (w == 0) std::sort(order.begin(), mid, by_start);
        else std::sort(mid, order.end(), by_start);
      });
      std::inplace_merge(order.begin(), mid, order.end(), by_start);
    } else {
      std::sort(order.begin(), order.end(), by_start);
    }
    size_t cursor = 0;
    while (true) {
      while (!ready.empty()) {
        const int64_t n = ready.back();
        ready.pop_back();
        Process(n, false, &ready);
      }
      // Blocked: force the earliest node not yet finished (inconsistent input).
      while (cursor < order.size() && started_[size_t(order[cursor])] &&
             ne_[size_t(order[cursor])] != kUnset) {
        ++cursor;
      }
      if (cursor == order.size()) break;
      const int64_t n = order[cursor];
      ++stats_.forced;
      if (started_[size_t(n)] && kind_[n] == kColl) {
        Resolve(rdvs_[size_t(rdv_[n])], &ready);
      } else if (!started_[size_t(n)]) {
        Process(n, true, &ready);
      } else {
        ne_[n] = ns_[n] + dur_[n];
        MarkDone(n, &ready);
      }
    }
  }

  // What Emit does not read.
  void FreeSchedule() {
    auto drop = [](auto& v) { std::decay_t<decltype(v)>().swap(v); };
    drop(deps_); drop(succs_); drop(dep_begin_); drop(succ_begin_); drop(indeg_);
    drop(started_); drop(slack_); drop(dur_); drop(issue_end_); drop(rank_of_);
    drop(rdv_); drop(send_of_); drop(rdvs_); drop(group_size_); drop(dequeue_of_);
  }

  // ---- output -----------------------------------------------------------
  // Ranks side by side: each reads the schedule and writes its own rank.
  Trace Emit() {
    Trace out;
    out.metadata = in_.metadata;
    out.ranks.resize(in_.ranks.size());
    const size_t workers = Workers();
    const std::vector<size_t> first = RankRuns(workers);
    RunWorkers(workers, [&](size_t w) {
      for (size_t r = first[w]; r < first[w + 1]; ++r) {
        out.ranks[r] = in_.ranks[r];
        EmitRank(r, &out.ranks[r]);
      }
    });
    return out;
  }

  // The rank's events at their scheduled times; passive events and memory
  // counters move with the device op before them.
  void EmitRank(size_t r, Rank* out_rank) {
    Rank& rank = *out_rank;
    for (RoutingRecord& rr : rank.routing) {
      auto p = mods_.edits.placements.find({rr.step, rr.layer});
      if (p != mods_.edits.placements.end() && p->second.size() == rr.tokens_per_expert.size()) {
        rr.expert_to_ep_rank = p->second;
      }
    }
    // Shift of the latest device op starting at or before t (counters).
    std::vector<std::pair<TimeNs, TimeNs>> dev_shift;
    for (size_t t = 0; t < rank.tracks.size(); ++t) {
      Track& track = rank.tracks[t];
      if (track.kind == TrackKind::kCounter) continue;
      EventTable& ev = track.events;
      std::vector<std::pair<TimeNs, TimeNs>> node_shift;
      for (size_t i = 0; i < ev.size(); ++i) {
        const int64_t n = base_[r][t] + int64_t(i);
        if (kind_[n] == kPassive) continue;
        node_shift.emplace_back(os_[n], ns_[n] - os_[n]);
        if (track.kind == TrackKind::kDeviceStream) dev_shift.emplace_back(os_[n], ns_[n] - os_[n]);
      }
      auto shift_at = [&](TimeNs t0) -> TimeNs {
        auto it = std::upper_bound(node_shift.begin(), node_shift.end(), std::make_pair(t0, std::numeric_limits<TimeNs>::max()));
        return it == node_shift.begin() ? 0 : std::prev(it)->second;
      };
      for (size_t i = 0; i < ev.size(); ++i) {
        const int64_t n = base_[r][t] + int64_t(i);
        if (kind_[n] != kPassive) {
          ev.ts[i] = ns_[n];
          ev.dur[i] = std::max<TimeNs>(0, ne_[n] - ns_[n]);
          continue;
        }
        const TimeNs s0 = shift_at(ev.ts[i]);
        const TimeNs end = ev.ts[i] + ev.dur[i];
        const TimeNs s1 = shift_at(end > ev.ts[i] ? end - 1 : end);
        const TimeNs nts = ev.ts[i] + s0;
        ev.dur[i] = std::max<TimeNs>(0, end + s1 - nts);
        ev.ts[i] = nts;
      }
      if (!ev.IsSortedByTime()) ev.SortByTime();
    }
    std::sort(dev_shift.begin(), dev_shift.end());
    auto dev_shift_at = [&](TimeNs t0) -> TimeNs {
      auto it = std::upper_bound(dev_shift.begin(), dev_shift.end(),
                                 std::make_pair(t0, std::numeric_limits<TimeNs>::max()));
      return it == dev_shift.begin() ? 0 : std::prev(it)->second;
    };
    if (mods_.edits.active && mods_.edits.memory_edited && !mods_.edits.memory[r].deltas.empty()) {
      RebuildCounters(r, &rank, dev_shift_at);
      return;
    }
    for (Track& track : rank.tracks) {
      if (track.kind != TrackKind::kCounter || track.sample_ts.empty()) continue;
      std::vector<std::pair<TimeNs, double>> samples(track.sample_ts.size());
      for (size_t i = 0; i < samples.size(); ++i) {
        const TimeNs t0 = track.sample_ts[i];
        auto it = std::upper_bound(dev_shift.begin(), dev_shift.end(),
                                   std::make_pair(t0, std::numeric_limits<TimeNs>::max()));
        const TimeNs s = it == dev_shift.begin() ? 0 : std::prev(it)->second;
        samples[i] = {t0 + s, track.sample_value[i]};
      }
      // Time order is kept when the input had it (shifts may differ between samples).
      if (std::is_sorted(track.sample_ts.begin(), track.sample_ts.end())) {
        std::stable_sort(samples.begin(), samples.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
      }
      for (size_t i = 0; i < samples.size(); ++i) {
        track.sample_ts[i] = samples[i].first;
        track.sample_value[i] = samples[i].second;
      }
    }
  }

  // The memory counters from their deltas: each at the new start or end of
  // the op it is attached to (dropped with a removed op), the others moved
  // with the device op before them; the total as the sum of the categories.
  template <typename ShiftAt>
  void RebuildCounters(size_t r, Rank* rank, const ShiftAt& shift_at) {
    const RankMemory& mem = mods_.edits.memory[r];
    struct Step { TimeNs t; size_t order; int32_t track; double delta; };
    std::vector<Step> steps;
    steps.reserve(mem.deltas.size());
    for (size_t k = 0; k < mem.deltas.size(); ++k) {
      const MemDelta& d = mem.deltas[k];
      if (d.removed) continue;
      TimeNs t = d.ts + shift_at(d.ts);
      if (d.op_track >= 0) {
        const int64_t n = base_[r][size_t(d.op_track)] + d.op_event;
        if (removed_[size_t(n)]) continue;
        t = (d.at_end ? ne_[size_t(n)] : ns_[size_t(n)]) + d.offset;
      }
      steps.push_back({t, k, d.counter_track, d.delta});
    }
    std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
      return a.t != b.t ? a.t < b.t : a.order < b.order;
    });
    std::vector<double> value(rank->tracks.size(), 0);
    std::vector<char> touched(rank->tracks.size(), 0);
    for (const MemDelta& d : mem.deltas) touched[size_t(d.counter_track)] = 1;
    if (mem.derived_total) touched[size_t(mem.total_track)] = 1;
    for (size_t t = 0; t < rank->tracks.size(); ++t) {
      if (!touched[t]) continue;
      rank->tracks[t].sample_ts.clear();
      rank->tracks[t].sample_value.clear();
    }
    auto put = [](Track& tr, TimeNs t, double v) {
      if (!tr.sample_ts.empty() && tr.sample_ts.back() == t) {
        tr.sample_value.back() = v;
      } else {
        tr.sample_ts.push_back(t);
        tr.sample_value.push_back(v);
      }
    };
    double total = 0;
    for (const Step& st : steps) {
      value[size_t(st.track)] += st.delta;
      put(rank->tracks[size_t(st.track)], st.t, value[size_t(st.track)]);
      if (mem.derived_total && IsMemoryCategory(rank->tracks[size_t(st.track)].counter)) {
        total += st.delta;
        put(rank->tracks[size_t(mem.total_track)], st.t, total);
      }
    }
  }

  const Trace& in_;
  const GraphModifications& mods_;
  GraphStats stats_;
  const int threads_;
  std::vector<std::vector<int64_t>> base_;
  std::vector<TimeNs> os_, oe_, ns_, ne_, slack_, dur_, issue_end_;
  std::vector<uint8_t> kind_, removed_, started_;
  std::vector<int32_t> rank_of_, rdv_, group_size_;
  std::vector<int64_t> send_of_;
  // By enqueue node: its dequeue node, -1 none (8 bytes a node, only
  // when a task queue is added, where a hash map node per launch is several times that).
  std::vector<int64_t> dequeue_of_;
  std::vector<Rendezvous> rdvs_;
  std::vector<int64_t> dep_begin_, succ_begin_, succs_, indeg_;
  std::vector<Edge> deps_;
};

}  // namespace

bool GraphModifications::IsIdentity() const {
  for (double s : speed) {
    if (s != 1.0) return false;
  }
  for (const RankOrder& o : order) {
    if (o.active) return false;
  }
  return host_factor == 1.0 && remove_syncs.empty() && launch_lag_ns == 0 && !edits.active;
}

Trace ReplayGraph(const Trace& trace, const GraphModifications& mods, GraphStats* stats,
                  int threads) {
  return Replayer(trace, mods, threads).Run(stats);
}

}  // namespace moetrace::replay
