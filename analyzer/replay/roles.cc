#include "analyzer/replay/roles.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string_view>
#include <unordered_map>

#include "analyzer/replay/graph_replay.h"
#include "formats/native/native_reader.h"

namespace moetrace::replay {
namespace {

// Ops whose recorded time includes waiting for another rank or stream.
bool Waits(Category c) {
  return c == Category::kCollective || c == Category::kP2P || c == Category::kSync;
}

uint64_t Mix(uint64_t h, uint64_t v) {
  // boost::hash_combine's 64-bit mixing: order-sensitive, cheap per event.
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 12) + (h >> 4));
}

}  // namespace

int32_t RoleMap::RepresentativeOf(int32_t rank) const {
  if (rank < 0 || size_t(rank) >= role_of.size() || role_of[size_t(rank)] < 0) return -1;
  return representative[size_t(role_of[size_t(rank)])];
}

uint64_t RoleSignature(const Rank& rank) {
  uint64_t h = 0x84222325cbf29ce4ULL;
  std::hash<std::string_view> hs;
  for (const Track& t : rank.tracks) {
    if (t.kind != TrackKind::kDeviceStream) continue;
    const EventTable& e = t.events;
    h = Mix(h, e.size());
    // Names are interned per rank: hash each distinct id's text once.
    std::unordered_map<StringId, uint64_t> name_hash;
    for (size_t i = 0; i < e.size(); ++i) {
      auto [it, fresh] = name_hash.try_emplace(e.name[i], 0);
      if (fresh) it->second = hs(rank.strings.Get(e.name[i]));
      h = Mix(h, it->second);
      h = Mix(h, uint64_t(e.category[i]) | uint64_t(e.phase[i]) << 8 |
                     uint64_t(uint32_t(e.layer[i])) << 16);
      h = Mix(h, uint64_t(uint32_t(e.micro_batch[i])) | uint64_t(uint32_t(e.step[i])) << 32);
    }
  }
  return h;
}

std::vector<uint64_t> CouplingGroups(const Rank& rank) {
  std::vector<uint64_t> out;
  std::hash<std::string_view> hs;
  for (const Track& t : rank.tracks) {
    if (t.kind != TrackKind::kDeviceStream) continue;
    StringId last = StringId(-1);
    for (const CommRecord& c : t.comms) {
      if (c.comm_class != CommClass::kEP && c.comm_class != CommClass::kTP) continue;
      if (c.group_size < 2 || c.group == last) continue;
      last = c.group;
      out.push_back(hs(rank.strings.Get(c.group)));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

RoleMap GroupRoles(const std::vector<std::pair<int32_t, uint64_t>>& signatures,
                   const analysis::Analysis& a,
                   const std::vector<std::vector<uint64_t>>* coupling) {
  std::unordered_map<int32_t, double> compute;  // per step
  for (const auto& r : a.ranks()) {
    compute[r.rank()] = double(r.breakdown().compute_ns()) / double(std::max(1, r.steps_size()));
  }
  RoleMap out;
  int32_t max_rank = -1;
  for (const auto& [rank, sig] : signatures) max_rank = std::max(max_rank, rank);
  out.role_of.assign(size_t(max_rank + 1), -1);
  // Units: union-find over rank ids through shared coupling groups.
  std::vector<int32_t> parent(size_t(max_rank + 1));
  for (size_t i = 0; i < parent.size(); ++i) parent[i] = int32_t(i);
  auto find = [&](int32_t x) {
    while (parent[size_t(x)] != x) x = parent[size_t(x)] = parent[size_t(parent[size_t(x)])];
    return x;
  };
  // Ranks in no coupling group share one unit per signature: nothing ties
  // them within the step, and the envelope is exact when they are copies.
  std::vector<uint8_t> coupled(parent.size(), 0);
  if (coupling && coupling->size() == signatures.size()) {
    std::unordered_map<uint64_t, int32_t> first_of_group;
    for (size_t i = 0; i < signatures.size(); ++i) {
      const int32_t rank = signatures[i].first;
      if (rank < 0) continue;
      coupled[size_t(rank)] = !(*coupling)[i].empty();
      for (uint64_t g : (*coupling)[i]) {
        auto [it, fresh] = first_of_group.try_emplace(g, rank);
        if (!fresh) {
          const int32_t x = find(rank), y = find(it->second);
          if (x != y) parent[size_t(std::max(x, y))] = std::min(x, y);
        }
      }
    }
  }
  // Ordered: roles numbered by first rank.
  std::map<std::pair<uint64_t, int32_t>, int32_t> role_of_sig;
  std::vector<std::pair<int32_t, uint64_t>> sorted = signatures;
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [rank, sig] : sorted) {
    if (rank < 0 || out.role_of[size_t(rank)] >= 0) continue;  // unknown or duplicate id
    const int32_t unit = coupled[size_t(rank)] ? find(rank) : -1;
    auto [it, fresh] =
        role_of_sig.try_emplace(std::make_pair(sig, unit), int32_t(out.representative.size()));
    if (fresh) {
      out.representative.push_back(rank);
      out.signature.push_back(sig);
    }
    out.role_of[size_t(rank)] = it->second;
    ++out.ranks;
    int32_t& rep = out.representative[size_t(it->second)];
    if (compute[rank] > compute[rep]) rep = rank;  // ranks ascend: ties keep the lowest
  }
  return out;
}

RoleSignatureSource::RoleSignatureSource(const TraceSource& inner)
    : inner_(inner),
      sig_(inner.rank_count()),
      coupling_(inner.rank_count()),
      partial_of_(inner.rank_count()),
      events_(inner.rank_count(), 0),
      read_(inner.rank_count(), 0) {}

void RoleSignatureSource::Record(size_t index, const Rank& rank) const {
  // Distinct indices write distinct slots: no lock needed.
  const uint64_t sig = RoleSignature(rank);
  sig_[index] = {rank.rank, sig};
  events_[index] = int64_t(rank.EventCount());
  read_[index] = 1;
  coupling_[index] = CouplingGroups(rank);
  // The partial envelope's key: a rank's unit is not known before every
  // rank is read, but the ranks of one coupling group are in one unit.
  uint64_t key_group = 0;
  {
    int32_t best = 0;
    for (const Track& t : rank.tracks) {
      if (t.kind != TrackKind::kDeviceStream) continue;
      for (const CommRecord& c : t.comms) {
        if (c.comm_class != CommClass::kEP && c.comm_class != CommClass::kTP) continue;
        const uint64_t h = std::hash<std::string_view>()(rank.strings.Get(c.group));
        if (c.group_size > best || (c.group_size == best && h < key_group)) {
          best = c.group_size;
          key_group = h;
        }
      }
    }
  }
  const PartialKey key{sig, key_group};
  partial_of_[index] = key;
  std::lock_guard<std::mutex> lock(mu_);
  if (too_many_) return;
  auto it = envelopes_.find(key);
  if (it == envelopes_.end()) {
    if (envelopes_.size() >= kMaxEnvelopes) {
      too_many_ = true;
      envelopes_.clear();
      return;
    }
    it = envelopes_.emplace(key, RoleEnvelope{}).first;
  }
  RoleEnvelope& env = it->second;
  const bool first = env.members++ == 0;
  size_t k = 0;
  for (const Track& t : rank.tracks) {
    if (t.kind != TrackKind::kDeviceStream) continue;
    const EventTable& e = t.events;
    if (first) {
      env.dur.emplace_back(e.size(), 0);
      env.wait.emplace_back(e.size(), 0);
      for (size_t i = 0; i < e.size(); ++i) env.wait[k][i] = Waits(e.category[i]);
    }
    std::vector<TimeNs>& d = env.dur[k++];  // same signature: same streams and sizes
    for (size_t i = 0; i < e.size(); ++i) {
      const TimeNs v = std::max<TimeNs>(0, e.dur[i]);
      if (first) d[i] = v;
      else d[i] = Waits(e.category[i]) ? std::min(d[i], v) : std::max(d[i], v);
    }
  }
}

std::vector<std::vector<uint64_t>> RoleSignatureSource::Coupling() const {
  std::vector<std::vector<uint64_t>> out;
  for (size_t i = 0; i < sig_.size(); ++i) {
    if (read_[i]) out.push_back(coupling_[i]);
  }
  return out;
}

RoleEnvelope RoleSignatureSource::Envelope(const RoleMap& roles, int32_t role) const {
  RoleEnvelope out;
  std::lock_guard<std::mutex> lock(mu_);
  if (too_many_) return out;
  std::vector<PartialKey> keys;
  for (size_t i = 0; i < sig_.size(); ++i) {
    const int32_t id = sig_[i].first;
    if (!read_[i] || id < 0 || size_t(id) >= roles.role_of.size() || roles.role_of[size_t(id)] != role) continue;
    keys.push_back(partial_of_[i]);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (const PartialKey& k : keys) {
    auto it = envelopes_.find(k);
    if (it == envelopes_.end()) return RoleEnvelope{};
    const RoleEnvelope& p = it->second;
    if (out.members == 0) {
      out = p;
      continue;
    }
    if (p.dur.size() != out.dur.size()) return RoleEnvelope{};
    for (size_t t = 0; t < p.dur.size(); ++t) {
      if (p.dur[t].size() != out.dur[t].size()) return RoleEnvelope{};
      for (size_t i = 0; i < p.dur[t].size(); ++i) {
        // Same signature: same category at (t, i); waits keep the shorter.
        out.dur[t][i] = p.wait[t][i] ? std::min(out.dur[t][i], p.dur[t][i])
                                     : std::max(out.dur[t][i], p.dur[t][i]);
      }
    }
    out.members += p.members;
  }
  return out;
}

// The signature hashes micro_batch, a column the analysis workers' reads
// skip: read every column here (analysis through this source then costs
// what it did before the skip).
Rank RoleSignatureSource::ReadRank(size_t index) const {
  const SkipColumnsAnalyzeIgnores every_column(false);
  Rank r = inner_.ReadRank(index);
  Record(index, r);
  return r;
}

void RoleSignatureSource::ReadRankInto(size_t index, Rank* out) const {
  const SkipColumnsAnalyzeIgnores every_column(false);
  inner_.ReadRankInto(index, out);
  Record(index, *out);
}

std::vector<std::pair<int32_t, uint64_t>> RoleSignatureSource::Signatures() const {
  std::vector<std::pair<int32_t, uint64_t>> out;
  for (size_t i = 0; i < sig_.size(); ++i) {
    if (read_[i]) out.push_back(sig_[i]);
  }
  return out;
}

int64_t RoleSignatureSource::events() const {
  int64_t n = 0;
  for (int64_t e : events_) n += e;
  return n;
}

Trace ReadRepresentatives(const TraceSource& source, const RoleMap& roles) {
  std::vector<uint8_t> wanted(roles.role_of.size(), 0);
  for (int32_t r : roles.representative) wanted[size_t(r)] = 1;
  Trace out;
  out.metadata = source.metadata();
  for (size_t i = 0; i < source.rank_count(); ++i) {
    int32_t id = source.RankId(i);
    if (id != kNone && (size_t(id) >= wanted.size() || !wanted[size_t(id)])) continue;
    Rank r = source.ReadRank(i);  // id unknown without reading (rare): read to see
    if (r.rank >= 0 && size_t(r.rank) < wanted.size() && wanted[size_t(r.rank)]) {
      wanted[size_t(r.rank)] = 0;  // first occurrence only
      out.ranks.push_back(std::move(r));
    }
  }
  return out;
}

bool ApplyEnvelopes(const RoleSignatureSource& signed_source, const RoleMap& roles, Trace* reps,
                    int threads) {
  GraphModifications mods;
  mods.role_of = roles.role_of;
  mods.edits.Init(*reps);
  for (size_t r = 0; r < reps->ranks.size(); ++r) {
    const Rank& rank = reps->ranks[r];
    const int32_t role = rank.rank >= 0 && size_t(rank.rank) < roles.role_of.size()
                             ? roles.role_of[size_t(rank.rank)]
                             : -1;
    if (role < 0) return false;
    const RoleEnvelope env = signed_source.Envelope(roles, role);
    if (env.members == 0) return false;
    size_t k = 0;
    for (size_t t = 0; t < rank.tracks.size(); ++t) {
      if (rank.tracks[t].kind != TrackKind::kDeviceStream) continue;
      if (k >= env.dur.size() || env.dur[k].size() != rank.tracks[t].events.size()) return false;
      mods.edits.dur[r][t] = env.dur[k++];
    }
  }
  *reps = ReplayGraph(*reps, mods, nullptr, threads);
  return true;
}

}  // namespace moetrace::replay
