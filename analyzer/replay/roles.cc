#include "analyzer/replay/roles.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string_view>
#include <unordered_map>

namespace moetrace::replay {
namespace {

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

RoleMap GroupRoles(const std::vector<std::pair<int32_t, uint64_t>>& signatures,
                   const analysis::Analysis& a) {
  std::unordered_map<int32_t, double> compute;  // per step
  for (const auto& r : a.ranks()) {
    compute[r.rank()] = double(r.breakdown().compute_ns()) / double(std::max(1, r.steps_size()));
  }
  RoleMap out;
  int32_t max_rank = -1;
  for (const auto& [rank, sig] : signatures) max_rank = std::max(max_rank, rank);
  out.role_of.assign(size_t(max_rank + 1), -1);
  std::map<uint64_t, int32_t> role_of_sig;  // ordered: roles numbered by first rank
  std::vector<std::pair<int32_t, uint64_t>> sorted = signatures;
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [rank, sig] : sorted) {
    if (rank < 0 || out.role_of[size_t(rank)] >= 0) continue;  // unknown or duplicate id
    auto [it, fresh] = role_of_sig.try_emplace(sig, int32_t(out.representative.size()));
    if (fresh) out.representative.push_back(rank);
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
      events_(inner.rank_count(), 0),
      read_(inner.rank_count(), 0) {}

void RoleSignatureSource::Record(size_t index, const Rank& rank) const {
  // Distinct indices write distinct slots: no lock needed.
  sig_[index] = {rank.rank, RoleSignature(rank)};
  events_[index] = int64_t(rank.EventCount());
  read_[index] = 1;
}

Rank RoleSignatureSource::ReadRank(size_t index) const {
  Rank r = inner_.ReadRank(index);
  Record(index, r);
  return r;
}

void RoleSignatureSource::ReadRankInto(size_t index, Rank* out) const {
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

}  // namespace moetrace::replay
