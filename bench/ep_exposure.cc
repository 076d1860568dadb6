// ep_exposure: where the EP communication of a seed_table-size run stays
// exposed. Runs the seed_table layout (pangu-ultra-moe-718b, DP 4, the
// preset's sequences per DP rank: 64 micro-batches at its MBS 2; rank 0 of
// every stage, 2 steps) with the given --set keys and prints, for the second step summed over the ranks, each EP
// operator name and phase with its total time and the part no compute
// overlaps, so that a change to the overlap can be traced to the op it
// uncovers or covers. Usage: ep_exposure KEY=VALUE... (`steps=N` measures
// the last of N steps instead of the second; `group=S` writes every rank of
// stage S's EP group instead of rank 0 of each stage, and adds each rank's
// exposure: under skewed routing the ranks that wait are not rank 0). Each
// EP op is also put in its chunk's pair position (warmup forward, fused pair,
// cooldown backward; bench/pair_position.h). `preset=NAME` runs another
// preset in the same layout (e.g. pangu-ultra-moe-718b-41: its own MBS and
// knobs, DP 4, its own sequences per DP rank: bench/seed_layout.h).
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "bench/pair_position.h"
#include "bench/seed_layout.h"
#include "bench/stage_breakdown.h"
#include "formats/errors.h"
#include "formats/trace_io.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"
#include "tracegen/model.h"

namespace {
std::string fmt_s(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace moetrace;
  std::vector<std::string> all = {"steps=2", "parallel.dp=4", "parallel.world_size=512"};
  int group = -1;  // stage whose whole EP group is written; -1: rank 0 of each stage
  std::string preset = "pangu-ultra-moe-718b";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("steps=", 0) == 0) all[0] = a;  // replaces the default, not appended after it
    else if (a.rfind("preset=", 0) == 0) preset = a.substr(7);
    else if (a.rfind("group=", 0) == 0) {
      char* end = nullptr;
      const long v = std::strtol(a.c_str() + 6, &end, 10);
      if (end == a.c_str() + 6 || *end != '\0' || v < 0) {
        std::fprintf(stderr, "ep_exposure: %s: want group=<stage number>\n", a.c_str());
        return 2;
      }
      group = int(v);
    }
    else all.push_back(a);
  }
  tracegen::RunConfig c;
  try {  // an unknown preset or key exits 2 with the config's message
    all = bench::WithSeedGlobalBatch(preset, all);
    c = tracegen::BuildConfig({preset, "", all, 0});
  } catch (const InputError& e) {
    std::fprintf(stderr, "ep_exposure: %s\n", e.what());
    return 2;
  }
  const int step = std::max(1, int(c.steps())) - 1;  // the measured step
  std::vector<int32_t> ranks;
  for (int s = 0; s < c.parallel().pp(); ++s) ranks.push_back(s * c.parallel().dp() * c.parallel().tp());
  if (group >= 0) {
    if (group >= c.parallel().pp()) {
      std::fprintf(stderr, "ep_exposure: group=%d: no such stage (pp %d)\n", group, int(c.parallel().pp()));
      return 2;
    }
    ranks = tracegen::ModelShape(c).EpGroup(ranks[size_t(group)]);
    std::sort(ranks.begin(), ranks.end());
  }
  MemorySink sink;
  tracegen::Generate(c, ranks, sink);
  const Trace& t = sink.trace();
  // (name, phase, pair position) -> total, exposed
  std::map<std::tuple<std::string, int, int>, std::pair<double, double>> by;
  std::vector<std::string> rank_rows;  // group=S: per rank, compute and EP exposed
  std::map<std::string, double> gaps;  // "ep op <- compute op that ended the gap" -> exposed
  double span = 0, total = 0, exposed = 0;
  // Per stage: the step partitioned by what the device was doing (compute,
  // then EDPB's migration, the other EP collectives, TP, DP, swap copies, PP
  // waits; the rest idle), and how long the stage waited before its first
  // compute and after its last (the pipeline's fill and drain).
  std::vector<std::string> stage_rows;
  std::array<double, bench::kPartCount> part_sum{};
  for (const Rank& r : t.ranks) {
    std::vector<std::pair<TimeNs, TimeNs>> busy;
    std::vector<std::pair<TimeNs, std::string>> busy_named;
    TimeNs lo = INT64_MAX, hi = INT64_MIN;
    for (const Track& tr : r.tracks) {
      if (tr.kind != TrackKind::kDeviceStream) continue;
      for (size_t i = 0; i < tr.events.size(); ++i) {
        if (tr.events.step[i] != step) continue;
        lo = std::min(lo, tr.events.ts[i]);
        hi = std::max(hi, tr.events.End(i));
        if (tr.events.category[i] == Category::kCompute) {
          busy.emplace_back(tr.events.ts[i], tr.events.End(i));
          busy_named.emplace_back(tr.events.ts[i], std::string(r.strings.Get(tr.events.name[i])) + "/" +
                                                       std::to_string(int(tr.events.phase[i])));
        }
      }
    }
    span += double(hi - lo);
    {
      std::vector<bench::Interval> iv;
      TimeNs first = hi, last = lo;
      for (const Track& tr : r.tracks) {
        if (tr.kind != TrackKind::kDeviceStream) continue;
        for (size_t i = 0; i < tr.events.size(); ++i) {
          if (tr.events.step[i] != step) continue;
          const Category c = tr.events.category[i];
          const CommClass cc = tr.events.comm[i] >= 0 ? tr.comms[size_t(tr.events.comm[i])].comm_class : CommClass::kOther;
          bench::Part p = bench::kPartIdle;
          if (c == Category::kCompute) {
            p = bench::kPartCompute;
            first = std::min(first, tr.events.ts[i]);
            last = std::max(last, tr.events.End(i));
          } else if (c == Category::kCopy) {
            p = bench::kPartSwap;
          } else if (c == Category::kP2P || cc == CommClass::kPP) {
            p = bench::kPartPp;
          } else if (cc == CommClass::kEP) {
            p = r.strings.Get(tr.events.name[i]) == "ExpertMigration" ? bench::kPartMigration : bench::kPartEp;
          } else if (cc == CommClass::kTP) {
            p = bench::kPartTp;
          } else if (cc == CommClass::kDP) {
            p = bench::kPartDp;
          }
          if (p != bench::kPartIdle) iv.push_back({tr.events.ts[i], tr.events.End(i), p});
        }
      }
      auto parts = bench::PartitionStep(std::move(iv), lo, hi);
      std::string row = "  " + std::to_string(r.rank) + "\t" + fmt_s(double(hi - lo) / 1e9);
      char buf[64];
      for (int k = 0; k < bench::kPartCount; ++k) {
        part_sum[size_t(k)] += double(parts[size_t(k)]);
        std::snprintf(buf, sizeof buf, "%8.3f", double(parts[size_t(k)]) / 1e9);
        row += buf;
      }
      std::snprintf(buf, sizeof buf, "%8.3f%8.3f", double(first - lo) / 1e9, double(hi - last) / 1e9);
      row += buf;
      stage_rows.push_back(row);
    }
    std::sort(busy.begin(), busy.end());
    std::sort(busy_named.begin(), busy_named.end());
    std::vector<std::pair<TimeNs, TimeNs>> u;  // union of compute
    for (auto& b : busy)
      if (!u.empty() && b.first <= u.back().second) u.back().second = std::max(u.back().second, b.second);
      else u.push_back(b);
    // Pair position of every device op of the step, then looked up per EP op.
    std::vector<bench::ChunkOp> chunk_ops;
    std::map<std::pair<const Track*, size_t>, size_t> op_index;
    for (const Track& tr : r.tracks) {
      if (tr.kind != TrackKind::kDeviceStream) continue;
      for (size_t i = 0; i < tr.events.size(); ++i) {
        if (tr.events.step[i] != step) continue;
        const Phase ph = tr.events.phase[i];
        if (ph != Phase::kForward && ph != Phase::kBackward && ph != Phase::kRecompute) continue;
        op_index[{&tr, i}] = chunk_ops.size();
        chunk_ops.push_back({tr.events.ts[i], tr.events.End(i), tr.events.micro_batch[i], ph != Phase::kForward,
                             tr.events.layer[i]});
      }
    }
    const std::vector<bench::PairPos> pos = bench::ClassifyPairPositions(chunk_ops);
    double rank_compute = 0, rank_ep = 0, rank_exposed = 0, rank_experts = 0;
    for (auto& b : u) rank_compute += double(b.second - b.first);
    // The routed experts' compute (grouped GEMMs, their activation): what
    // skewed routing makes differ between the EP ranks.
    for (const Track& tr : r.tracks) {
      if (tr.kind != TrackKind::kDeviceStream) continue;
      for (size_t i = 0; i < tr.events.size(); ++i) {
        if (tr.events.step[i] != step || tr.events.category[i] != Category::kCompute) continue;
        const std::string_view n = r.strings.Get(tr.events.name[i]);
        if (n.rfind("GroupedMatmul", 0) == 0 || n.find("_experts") != std::string_view::npos)
          rank_experts += double(tr.events.dur[i]);
      }
    }
    for (const Track& tr : r.tracks) {
      if (tr.kind != TrackKind::kDeviceStream) continue;
      for (size_t i = 0; i < tr.events.size(); ++i) {
        if (tr.events.step[i] != step || tr.events.category[i] != Category::kCollective) continue;
        if (tr.events.comm[i] < 0 || tr.comms[size_t(tr.events.comm[i])].comm_class != CommClass::kEP) continue;
        auto oi = op_index.find({&tr, i});
        const int where = oi == op_index.end() ? bench::kPosOther : pos[oi->second];
        const TimeNs a = tr.events.ts[i], b = tr.events.End(i);
        TimeNs cov = 0;
        auto it = std::lower_bound(u.begin(), u.end(), std::make_pair(a, INT64_MIN),
                                   [](auto& x, auto& y) { return x.second < y.first; });
        TimeNs at = a;  // start of the next uncovered piece
        auto blame = [&](TimeNs from, TimeNs to) {
          if (to <= from) return;
          // The compute op the device waited for: the first to start at or after the gap.
          auto nx = std::lower_bound(busy_named.begin(), busy_named.end(), std::make_pair(from, std::string()));
          std::string who = nx == busy_named.end() ? "(none)" : nx->second;
          gaps[std::string(r.strings.Get(tr.events.name[i])) + " <- " + who] += double(to - from);
        };
        for (; it != u.end() && it->first < b; ++it) {
          cov += std::max<TimeNs>(0, std::min(b, it->second) - std::max(a, it->first));
          blame(at, std::min(b, it->first));
          at = std::max(at, it->second);
        }
        blame(at, b);
        auto& e = by[{std::string(r.strings.Get(tr.events.name[i])), int(tr.events.phase[i]), where}];
        e.first += double(b - a);
        e.second += double(b - a - cov);
        total += double(b - a);
        exposed += double(b - a - cov);
        if (r.strings.Get(tr.events.name[i]) != "ExpertMigration") {
          rank_ep += double(b - a);
          rank_exposed += double(b - a - cov);
        }
      }
    }
    char buf[160];
    std::snprintf(buf, sizeof buf, "  %d\tcompute %8.3f s (experts %7.3f s)  all-to-alls %8.3f s  exposed %7.3f s",
                  int(r.rank), rank_compute / 1e9, rank_experts / 1e9, rank_ep / 1e9, rank_exposed / 1e9);
    rank_rows.push_back(buf);
  }
  std::printf("mean span %.3f s; EP %.2f s, exposed %.3f s (%.2f%%)\n", span / t.ranks.size() / 1e9, total / 1e9,
              exposed / 1e9, 100 * exposed / total);
  for (auto& [k, v] : by)
    std::printf("  %-40s phase %d %-8s  total %8.3f s  exposed %7.3f s\n", std::get<0>(k).c_str(), std::get<1>(k),
                bench::kPosNames[std::get<2>(k)], v.first / 1e9, v.second / 1e9);
  if (group >= 0) {
    std::printf("per rank of stage %d's EP group (step %d; all-to-alls without the migration):\n", group, step);
    for (auto& row : rank_rows) std::printf("%s\n", row.c_str());
  }
  std::printf("per stage, step %d partitioned (s): rank span", step);
  for (const char* n : bench::kPartNames) std::printf(" | %s", n);
  std::printf(" | before first compute | after last compute\n");
  for (auto& row : stage_rows) std::printf("%s\n", row.c_str());
  std::printf("  mean\t%.3f", span / t.ranks.size() / 1e9);
  for (double v : part_sum) std::printf("%8.3f", v / t.ranks.size() / 1e9);
  std::printf("\n");
  std::vector<std::pair<double, std::string>> top;
  for (auto& [k, v] : gaps) top.emplace_back(-v, k);
  std::sort(top.begin(), top.end());
  std::printf("largest exposures by the compute op that ended them:\n");
  for (size_t i = 0; i < top.size() && i < 25; ++i) std::printf("  %7.3f s  %s\n", -top[i].first / 1e9, top[i].second.c_str());
}
