// The layout search space: which values each knob takes (--space, or by
// default every value the model and the card count allow), the candidates
// (their Cartesian product, global batch fixed) and the RunConfig of each.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tracegen/proto/run_config.pb.h"

namespace moetrace::search {

// One point of the space. Enumerations are indices into the name tables
// below (small and copied by the million).
struct Layout {
  int tp = 1, pp = 1, vpp = 1, ep = 1, dp = 1, mbs = 1;
  bool extend = false, swap = false;
  uint8_t schedule = 0, a2a = 0, recompute = 0;
};

inline constexpr const char* kSchedules[] = {"1f1b", "interleaved", "adaptive", "dualpipe"};
inline constexpr const char* kA2A[] = {"flat", "hierarchical"};
inline constexpr const char* kRecompute[] = {"none", "selective", "full"};

// The --space keys, in enumeration order.
inline constexpr const char* kSpaceKeys[] = {
    "parallel.tp", "parallel.pp", "parallel.vpp", "parallel.dp", "parallel.ep",
    "parallel.tp_extend_ep", "parallel.micro_batch_size", "schedule.kind", "comm.a2a",
    "memory.recompute", "memory.swap"};

// Values per key, as integers (enumerations: their index; bools 0/1).
struct Space {
  int cards = 0;
  // Every key of kSpaceKeys; parallel.dp is a filter (DP = cards / (TP PP);
  // empty: any).
  std::map<std::string, std::vector<int>> values;
  int64_t Size() const;  // the Cartesian product (parallel.dp not counted)
};

// The default space for `base` on `cards` (every value the model allows:
// TP within a node dividing the heads and the cards, PP up to the layers,
// VPP 1-8, EP dividing DP, MBS dividing the batch per
// replica up to 8, every schedule, all-to-all, recompute and swap), then
// each "KEY=V1,V2" of `overrides` replacing that key's values. An unknown
// key or a bad value is an InputError naming the key.
Space MakeSpace(const tracegen::RunConfig& base, int cards,
                const std::vector<std::string>& overrides);

// Why a candidate is not searched; the key Validate names, or:
inline constexpr std::string_view kDuplicate = "duplicate";  // same run as another candidate
inline constexpr std::string_view kMemory = "memory";        // does not fit in HBM

// Visits every candidate of the space in a fixed order. `reject(reason)`
// for those the layout rules exclude (the key tracegen's Validate would
// name, or kDuplicate), `accept(layout)` for the rest.
template <typename Accept, typename Reject>
void Enumerate(const Space& space, const tracegen::RunConfig& base, Accept accept, Reject reject);

// `base` with the layout's knobs set (world_size = cards, steps = 1). The
// base's parallel.layers_per_stage and parallel.noop_layers are kept when
// the layout has its PP and VPP (and is DualPipe as it is, or not), else
// cleared.
tracegen::RunConfig ApplyLayout(const tracegen::RunConfig& base, const Layout& l);

// The first layout rule (in tracegen Validate's order) `l` breaks, or ""
// (then Validate accepts it).
std::string_view LayoutConflict(const tracegen::RunConfig& base, const Layout& l);

template <typename Accept, typename Reject>
void Enumerate(const Space& space, const tracegen::RunConfig& base, Accept accept, Reject reject) {
  const auto& v = space.values;
  auto at = [&](const char* k) -> const std::vector<int>& { return v.at(k); };
  Layout l;
  const std::vector<int>& dps = at("parallel.dp");  // empty: any
  for (int tp : at("parallel.tp"))
    for (int pp : at("parallel.pp"))
      for (int vpp : at("parallel.vpp"))
        for (int ep : at("parallel.ep"))
          for (int ext : at("parallel.tp_extend_ep"))
            for (int mbs : at("parallel.micro_batch_size"))
              for (int sc : at("schedule.kind"))
                for (int a2a : at("comm.a2a"))
                  for (int rc : at("memory.recompute"))
                    for (int sw : at("memory.swap")) {
                      l.tp = tp, l.pp = pp, l.vpp = vpp, l.ep = ep;
                      l.dp = space.cards / (tp * pp);
                      l.extend = ext != 0, l.mbs = mbs, l.schedule = uint8_t(sc);
                      l.a2a = uint8_t(a2a), l.recompute = uint8_t(rc), l.swap = sw != 0;
                      std::string_view why;
                      if (space.cards % (tp * pp) != 0) why = "parallel.world_size";
                      else if (!dps.empty() && std::find(dps.begin(), dps.end(), l.dp) == dps.end())
                        why = "parallel.dp";
                      else why = LayoutConflict(base, l);
                      if (why.empty()) accept(l);
                      else reject(why);
                    }
}

// MindSpeed / Megatron arguments for a layout (ASCEND.md's knob names).
std::string MindSpeedArgs(const Layout& l, int layers);
// "TP 8 PP 16 VPP 2 EP 4 (x TP: 32) DP 48 MBS 2 interleaved hierarchical selective swap"
std::string Describe(const Layout& l);

}  // namespace moetrace::search
