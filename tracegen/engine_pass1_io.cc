// Pass 1's results as bytes (Engine::SavePass1 / LoadPass1): under mpirun
// `generate` simulates pass 1 on process 0 alone and broadcasts them, where
// every process used to simulate the whole run (~30 s CPU each for the 718B
// preset) to emit its own ranks. Pass 2 reads only these results (the
// caches it fills itself: routings, popularity, copies), so an engine that
// loads them emits what one that simulated does. Not a file format: both
// ends are the same build; a header guards against another shape.
#include <cstring>
#include <stdexcept>

#include "tracegen/engine_internal.h"

namespace moetrace::tracegen {
namespace {

constexpr char kMagic[8] = {'m', 't', 'p', 'a', 's', 's', '1', '\0'};

template <typename T>
void Put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  template <typename T>
  T Get() {
    T v;
    if (b_.size() - at_ < sizeof v) throw std::runtime_error("tracegen: pass 1 results cut short");
    std::memcpy(&v, b_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  // A count of items of `size` bytes each that the rest can hold (never a
  // vector sized from a bad count).
  uint64_t Count(size_t size) {
    const uint64_t n = Get<uint64_t>();
    if (n > (b_.size() - at_) / size) throw std::runtime_error("tracegen: pass 1 results cut short");
    return n;
  }
  bool done() const { return at_ == b_.size(); }

 private:
  std::string_view b_;
  size_t at_ = 0;
};

void PutEntry(std::string& out, const CrossEntry& e) {
  Put(out, e.arrived);
  Put(out, e.expected);
  Put(out, e.max_arrival);
  Put(out, e.dur);
  Put(out, e.done);
}
constexpr size_t kEntryBytes = 2 * sizeof(int32_t) + 3 * sizeof(TimeNs);

CrossEntry GetEntry(Reader& in) {
  CrossEntry e;
  e.arrived = in.Get<int32_t>();
  e.expected = in.Get<int32_t>();
  e.max_arrival = in.Get<TimeNs>();
  e.dur = in.Get<TimeNs>();
  e.done = in.Get<TimeNs>();
  return e;
}

}  // namespace

std::string EngineImpl::SavePass1() const {
  if (!simulated) throw std::logic_error("tracegen: SavePass1 before Simulate");
  std::string out(kMagic, sizeof kMagic);
  Put(out, uint64_t(shape.world));
  Put(out, uint64_t(shape.pp));
  for (TimeNs t : rank_end) Put(out, t);
  for (const StageCross& st : stage_cross_) {
    Put(out, uint64_t(st.groups.size()));
    for (const auto& [uid, entries] : st.groups) {
      Put(out, uid);
      Put(out, uint64_t(entries.size()));
      for (const CrossEntry& e : entries) PutEntry(out, e);
    }
  }
  Put(out, uint64_t(shared_cross_.size()));
  for (const auto& [key, e] : shared_cross_) {
    Put(out, key);
    PutEntry(out, e);
  }
  return out;
}

void EngineImpl::LoadPass1(std::string_view bytes) {
  Reader in(bytes);
  char magic[sizeof kMagic];
  for (char& c : magic) c = in.Get<char>();
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0 || in.Get<uint64_t>() != uint64_t(shape.world) ||
      in.Get<uint64_t>() != uint64_t(shape.pp)) {
    throw std::runtime_error("tracegen: pass 1 results of another run shape");
  }
  rank_end.assign(size_t(shape.world), kBaseTime);
  for (TimeNs& t : rank_end) t = in.Get<TimeNs>();
  stage_cross_.assign(size_t(shape.pp), StageCross());
  for (StageCross& st : stage_cross_) {
    const uint64_t groups = in.Count(2 * sizeof(uint64_t));
    st.groups.reserve(groups);
    for (uint64_t g = 0; g < groups; ++g) {
      const uint64_t uid = in.Get<uint64_t>();
      std::vector<CrossEntry>& entries = st.groups[uid];
      entries.resize(in.Count(kEntryBytes));
      for (CrossEntry& e : entries) e = GetEntry(in);
    }
  }
  shared_cross_.clear();
  const uint64_t shared = in.Count(sizeof(uint64_t) + kEntryBytes);
  shared_cross_.reserve(shared);
  for (uint64_t k = 0; k < shared; ++k) {
    const uint64_t key = in.Get<uint64_t>();
    shared_cross_[key] = GetEntry(in);
  }
  if (!in.done()) throw std::runtime_error("tracegen: pass 1 results run on past their end");
  simulated = true;
}

}  // namespace moetrace::tracegen
