#include "analyzer/search/space.h"

#include <algorithm>
#include <charconv>
#include <iterator>

#include <fmt/core.h>

#include "formats/errors.h"

namespace moetrace::search {
namespace {

std::vector<int> Divisors(int n, int max) {
  std::vector<int> out;
  for (int d = 1; d <= n && d <= max; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

template <size_t N>
int IndexOf(const char* const (&names)[N], std::string_view v) {
  for (size_t i = 0; i < N; ++i)
    if (v == names[i]) return int(i);
  return -1;
}

template <size_t N>
std::string Join(const char* const (&names)[N]) {
  std::string s;
  for (size_t i = 0; i < N; ++i) s += (i ? ", " : "") + std::string(names[i]);
  return s;
}

// One value of `key` as the integer the space stores.
int ParseValue(std::string_view key, std::string_view v) {
  auto bad = [&](const std::string& what) { ThrowInputError("--space", key, what); };
  if (key == "schedule.kind" || key == "comm.a2a" || key == "memory.recompute") {
    int i = key == "schedule.kind" ? IndexOf(kSchedules, v)
            : key == "comm.a2a"    ? IndexOf(kA2A, v)
                                   : IndexOf(kRecompute, v);
    if (i < 0)
      bad(fmt::format("'{}' is not one of {}", v,
                      key == "schedule.kind" ? Join(kSchedules)
                      : key == "comm.a2a"    ? Join(kA2A)
                                             : Join(kRecompute)));
    return i;
  }
  if (key == "parallel.tp_extend_ep" || key == "memory.swap") {
    if (v == "true" || v == "1") return 1;
    if (v == "false" || v == "0") return 0;
    bad(fmt::format("expected true or false, got '{}'", v));
  }
  int n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size() || n < 1)
    bad(fmt::format("expected an integer >= 1, got '{}'", v));
  return n;
}

}  // namespace

int64_t Space::Size() const {
  int64_t n = 1;
  for (const auto& [k, v] : values)
    if (k != "parallel.dp") n *= int64_t(v.size());
  return n;
}

Space MakeSpace(const tracegen::RunConfig& base, int cards,
                const std::vector<std::string>& overrides) {
  if (cards < 1) ThrowInputError("--cards", "", "must be >= 1");
  const auto& m = base.model();
  const auto& p = base.parallel();
  Space s;
  s.cards = cards;
  const int per_node = std::max(1, base.hardware().devices_per_node());
  std::vector<int> tp;
  for (int t : Divisors(m.num_heads(), per_node))
    if (cards % t == 0) tp.push_back(t);
  s.values["parallel.tp"] = tp;
  s.values["parallel.pp"] = Divisors(cards, m.num_layers());
  s.values["parallel.vpp"] = {1, 2, 3, 4, 5, 6, 7, 8};
  s.values["parallel.dp"] = {};
  // EP: every divisor of some DP that splits the experts evenly.
  std::vector<int> ep;
  for (int d : Divisors(cards, cards))
    if (m.num_experts() == 0 ? d == 1 : m.num_experts() % d == 0) ep.push_back(d);
  s.values["parallel.ep"] = ep;
  s.values["parallel.tp_extend_ep"] = {0, 1};
  std::vector<int> mbs;
  for (int b = 1; b <= 8; ++b)
    if (p.global_batch_size() % b == 0) mbs.push_back(b);
  s.values["parallel.micro_batch_size"] = mbs;
  s.values["schedule.kind"] = {0, 1, 2, 3};
  s.values["comm.a2a"] = {0, 1};
  s.values["memory.recompute"] = {0, 1, 2};
  s.values["memory.swap"] = {0, 1};
  for (const std::string& o : overrides) {
    size_t eq = o.find('=');
    std::string key = o.substr(0, eq);
    if (eq == std::string::npos || eq == 0)
      ThrowInputError("--space", o, "expected KEY=V1,V2,...");
    if (IndexOf(kSpaceKeys, key) < 0)
      ThrowInputError("--space", key, "unknown key (known: " + Join(kSpaceKeys) + ")");
    std::vector<int> vals;
    std::string_view rest = std::string_view(o).substr(eq + 1);
    if (rest.empty()) ThrowInputError("--space", key, "no values");
    while (true) {
      size_t comma = rest.find(',');
      int v = ParseValue(key, rest.substr(0, comma));
      if (std::find(vals.begin(), vals.end(), v) == vals.end()) vals.push_back(v);
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
    s.values[key] = vals;
  }
  return s;
}

std::string_view LayoutConflict(const tracegen::RunConfig& base, const Layout& l) {
  // Validate's rules on the knobs the search moves, in its order, so the
  // reason counted is the key Validate would name.
  const auto& m = base.model();
  if (l.dp % l.ep != 0) return "parallel.ep";
  if (m.num_heads() % l.tp != 0) return "parallel.tp";
  const int64_t group = int64_t{l.ep} * (l.extend ? l.tp : 1);
  if (m.num_experts() > 0 && m.num_experts() % group != 0) return "model.num_experts";
  if (l.extend && (int64_t{m.seq_length()} * l.mbs) % l.tp != 0) return "parallel.tp_extend_ep";
  if (base.parallel().sp() && m.seq_length() % l.tp != 0) return "parallel.sp";
  if (int64_t{l.pp} * l.vpp > m.num_layers()) return "parallel.pp";
  const int64_t gbs = base.parallel().global_batch_size();
  if (gbs % (int64_t{l.mbs} * l.dp) != 0) return "parallel.global_batch_size";
  const int64_t micro = gbs / (int64_t{l.mbs} * l.dp);
  if (micro > 100000) return "parallel.global_batch_size";
  const std::string_view kind = kSchedules[l.schedule];
  if (l.vpp > 1 && kind != "interleaved" && kind != "adaptive") return "parallel.vpp";
  if (l.vpp > 1 && l.pp == 1) return "parallel.vpp";
  if ((kind == "interleaved" || kind == "adaptive") && l.pp > 1 && micro % l.pp != 0)
    return "parallel.global_batch_size";
  if (kind == "dualpipe" && (micro % 2 != 0 || l.pp % 2 != 0)) return "schedule.kind";
  if (kind == "dualpipe" && 2 * int64_t{l.pp} * l.vpp > m.num_layers()) return "parallel.pp";
  // The same run under another name: TP-extend-EP without TP, interleaved
  // with one virtual stage (plain 1F1B).
  if (l.extend && l.tp == 1) return kDuplicate;
  if (kind == "interleaved" && l.vpp == 1) return kDuplicate;
  return {};
}

tracegen::RunConfig ApplyLayout(const tracegen::RunConfig& base, const Layout& l) {
  tracegen::RunConfig c = base;
  auto* p = c.mutable_parallel();
  // The base's split (parallel.layers_per_stage) and padding
  // (parallel.noop_layers) are for its own layer slices: kept where the
  // candidate cuts the model the same way (same PP and VPP, DualPipe or
  // not: DualPipe refuses an empty slice), so that the configured layout's
  // row is the configured run; dropped elsewhere, where they may not divide.
  const bool same_slices = l.pp == base.parallel().pp() && l.vpp == std::max(1, base.parallel().vpp()) &&
                           (std::string_view(kSchedules[l.schedule]) == "dualpipe") ==
                               (base.schedule().kind() == "dualpipe");
  if (!same_slices) {
    p->set_layers_per_stage("");
    p->set_noop_layers("");
    // A stage of the base's slices (parallel.mtp_stage): a pinned one is
    // pinned to the last stage (-1), so that advise's --set list (-1)
    // replays this run; unset stays unset (EDPB's split may choose).
    if (p->has_mtp_stage()) p->set_mtp_stage(-1);
  }
  p->set_world_size(l.tp * l.pp * l.dp);
  p->set_tp(l.tp);
  p->set_pp(l.pp);
  p->set_vpp(l.vpp);
  p->set_dp(l.dp);
  p->set_ep(l.ep);
  p->set_tp_extend_ep(l.extend);
  p->set_micro_batch_size(l.mbs);
  c.mutable_schedule()->set_kind(kSchedules[l.schedule]);
  c.mutable_comm()->set_a2a(kA2A[l.a2a]);
  c.mutable_memory()->set_recompute(kRecompute[l.recompute]);
  c.mutable_memory()->set_swap(l.swap);
  c.set_steps(1);
  return c;
}

std::string MindSpeedArgs(const Layout& l, int layers) {
  std::string s = fmt::format("--tensor-model-parallel-size {} --pipeline-model-parallel-size {}",
                              l.tp, l.pp);
  if (l.vpp > 1) {
    const int stages = l.pp * l.vpp;
    s += fmt::format(" --num-layers-per-virtual-pipeline-stage {}", std::max(1, layers / stages));
    // tracegen splits unevenly (the extra layers to the middle slices);
    // MindSpeed needs a matching per-stage layer list then.
    if (layers % stages != 0) s += fmt::format(" (uneven: {} layers over {} virtual stages)", layers, stages);
  }
  s += fmt::format(" --expert-model-parallel-size {}", l.ep);
  if (l.extend) s += " --moe-tp-extend-ep";
  s += fmt::format(" --micro-batch-size {}", l.mbs);
  const std::string_view kind = kSchedules[l.schedule];
  if (kind == "adaptive") s += " --moe-alltoall-overlap-comm --moe-fb-overlap";
  if (kind == "dualpipe") s += " --schedules-method dualpipev";
  if (l.recompute == 1) s += " --recompute-granularity selective --recompute-activation-function";
  if (l.recompute == 2) s += " --recompute-granularity full --recompute-method uniform --recompute-num-layers 1";
  if (l.swap) s += " --swap-attention";
  return s;
}

std::string Describe(const Layout& l) {
  std::string s = fmt::format("TP {} PP {}", l.tp, l.pp);
  if (l.vpp > 1) s += fmt::format(" VPP {}", l.vpp);
  s += fmt::format(" EP {}", l.ep);
  if (l.extend) s += fmt::format(" (x TP: {})", l.ep * l.tp);
  s += fmt::format(" DP {} MBS {} {} {} recompute-{}", l.dp, l.mbs, kSchedules[l.schedule],
                   kA2A[l.a2a], kRecompute[l.recompute]);
  if (l.swap) s += " swap";
  return s;
}

}  // namespace moetrace::search
