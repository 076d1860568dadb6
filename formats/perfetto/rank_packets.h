// One rank as Perfetto packets: its own packet sequence (layout in
// perfetto_writer.h). The thread tracks' descriptors are left as holes,
// because a thread id must be unique in the whole file and so depends on the
// ranks written before: the sink fills them in rank order
// (AppendThreadDescriptor). Everything else depends on the rank and its
// sequence id only, so ranks can be written on several threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/perfetto/proto_buffer.h"
#include "formats/perfetto/track_lanes.h"
#include "formats/trace.h"

namespace moetrace {

struct LaunchFlows;

class RankPackets {
 public:
  // A thread track whose descriptor packet goes at `at` in bytes().
  struct ThreadHole {
    size_t at = 0;
    uint64_t uuid = 0;
    int64_t native_id = 0;  // the track's own thread id
    bool host = false;      // a host thread (its own id is kept when usable)
    int32_t pid = 0;
    std::string label;
  };
  // Called whenever the packets held pass ~1 MB while a rank is written, so
  // that AddRank streams a big rank; it must consume and Clear() them.
  using Drain = std::function<void(RankPackets&)>;

  // Writes `rank` as sequence `seq` (> 0), after whatever is held.
  // `drain`: null to hold the whole rank (an encoder's output).
  void Write(const Rank& rank, uint32_t seq, const Drain* drain);

  // The descriptor packet of `hole` of sequence `seq` with thread id `tid`.
  static void AppendThreadDescriptor(const ThreadHole& hole, int32_t tid, uint32_t seq,
                                     ProtoBuffer* out);

  const std::string& bytes() const { return out_.data(); }
  const std::vector<ThreadHole>& holes() const { return holes_; }
  void Clear() {
    out_.Clear();
    holes_.clear();
  }

 private:
  size_t BeginPacket(bool has_ts, TimeNs ts, uint32_t flags);
  void EndPacket(size_t p);
  void Str(uint32_t field, std::string_view s);
  void InternedEntry(uint32_t field, uint64_t iid, std::string_view name);
  void IntArg(uint32_t a, int64_t v);
  void UintArg(uint32_t a, uint64_t v);
  void StringArg(uint32_t a, std::string_view v);
  uint64_t NewUuid() { return (uint64_t{seq_} << 32) | next_local_uuid_++; }

  void WriteProcess(const Rank& rank);
  void WriteCounterTrack(const Rank& rank, size_t t);
  void WriteEventTrack(const Rank& rank, size_t t, const LaunchFlows& flows);
  void WriteSliceStart(const Rank& rank, const Track& track, size_t i, uint64_t uuid,
                       bool instant, uint64_t flow_out, uint64_t flow_in);
  void WriteSliceEnd(TimeNs ts, uint64_t uuid);
  void WriteRouting(const Rank& rank);

  ProtoBuffer out_;
  std::vector<ThreadHole> holes_;
  const Drain* drain_ = nullptr;
  // Per rank.
  uint32_t seq_ = 0;
  uint32_t next_local_uuid_ = 0;
  uint64_t process_uuid_ = 0;
  std::vector<uint8_t> name_emitted_;
  // Reused buffers.
  TrackLanes lanes_;
  std::vector<TimeNs> open_ends_;
  std::string scratch_;
};

}  // namespace moetrace
