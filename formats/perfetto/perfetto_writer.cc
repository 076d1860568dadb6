#include "formats/perfetto/perfetto_writer.h"

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <unordered_set>
#include <utility>
#include <vector>

#include "formats/atomic_file.h"
#include "formats/perfetto/proto_buffer.h"
#include "formats/perfetto/rank_packets.h"

namespace moetrace {
namespace {

constexpr int64_t kFirstSyntheticTid = int64_t{1} << 30;

// A rank written by an encoder: its packets with the thread descriptors left
// out, and its sequence id.
struct PerfettoEncodedRank final : EncodedRank {
  uint32_t seq = 0;
  std::string bytes;
  std::vector<RankPackets::ThreadHole> holes;
};

class PerfettoEncoder final : public RankEncoder {
 public:
  explicit PerfettoEncoder(uint32_t first_seq) : first_seq_(first_seq) {}
  std::unique_ptr<EncodedRank> Encode(const Rank& rank, size_t index) override {
    auto enc = std::make_unique<PerfettoEncodedRank>();
    enc->seq = first_seq_ + static_cast<uint32_t>(index);
    packets_.Write(rank, enc->seq, nullptr);
    // Copied at its size (a moved buffer would carry up to twice its size
    // in capacity); the encoder's buffer keeps its capacity for the next.
    enc->bytes = packets_.bytes();
    enc->holes = packets_.holes();
    packets_.Clear();
    return enc;
  }

 private:
  uint32_t first_seq_;
  RankPackets packets_;
};

class PerfettoSink final : public TraceSink {
 public:
  explicit PerfettoSink(const std::string& path) : file_(path) {}

  void AddRank(const Rank& rank) override {
    CheckOpen();
    const uint32_t seq = next_sequence_++;
    const RankPackets::Drain drain = [this, seq](RankPackets& p) {
      Append(seq, p.bytes(), p.holes());
      p.Clear();
    };
    packets_.Write(rank, seq, &drain);
    drain(packets_);
  }

  // Sequence ids (and the track uuids built on them) follow the order the
  // ranks are appended in: an encoder numbers its ranks from the next one.
  std::unique_ptr<RankEncoder> CreateEncoder() override {
    return std::make_unique<PerfettoEncoder>(next_sequence_);
  }

  void AddEncoded(std::unique_ptr<EncodedRank> rank) override {
    CheckOpen();
    auto* enc = dynamic_cast<PerfettoEncodedRank*>(rank.get());
    if (enc == nullptr) throw std::invalid_argument("PerfettoSink: a rank encoded by another sink");
    if (enc->seq != next_sequence_) {
      throw std::logic_error("PerfettoSink: encoded ranks appended out of order");
    }
    ++next_sequence_;
    Append(enc->seq, enc->bytes, enc->holes);
  }

  void Finish(const Metadata&) override {
    CheckOpen();
    finished_ = true;
    file_.Commit();
  }

 private:
  void CheckOpen() const {
    if (finished_) throw std::logic_error("PerfettoSink: used after Finish");
  }

  // Writes a rank's packets, each thread descriptor with its tid given here,
  // in rank order.
  void Append(uint32_t seq, const std::string& bytes, const std::vector<RankPackets::ThreadHole>& holes) {
    size_t from = 0;
    for (const RankPackets::ThreadHole& h : holes) {
      file_.Write(bytes.data() + from, h.at - from);
      descriptor_.Clear();
      RankPackets::AppendThreadDescriptor(h, ThreadTid(h), seq, &descriptor_);
      file_.Write(descriptor_.data());
      from = h.at;
    }
    file_.Write(bytes.data() + from, bytes.size() - from);
  }

  int32_t ThreadTid(const RankPackets::ThreadHole& h);

  AtomicFile file_;
  bool finished_ = false;
  uint32_t next_sequence_ = 1;
  int64_t next_synthetic_tid_ = kFirstSyntheticTid;
  std::unordered_set<int64_t> used_tids_;  // tids are global in Perfetto
  RankPackets packets_;                    // AddRank's
  ProtoBuffer descriptor_;
};

int32_t PerfettoSink::ThreadTid(const RankPackets::ThreadHole& h) {
  // Host threads keep their real tid when it is usable and not taken (by
  // another thread of any rank: Perfetto would merge them); device streams and
  // the rest get synthetic tids, which are never real ones.
  const int64_t native = h.native_id;
  if (h.host && native > 0 && native < kFirstSyntheticTid && used_tids_.insert(native).second) {
    return static_cast<int32_t>(native);
  }
  while (!used_tids_.insert(next_synthetic_tid_).second) ++next_synthetic_tid_;
  int64_t tid = next_synthetic_tid_++;
  if (next_synthetic_tid_ >= std::numeric_limits<int32_t>::max()) {
    next_synthetic_tid_ = kFirstSyntheticTid;  // only after 1e9 tracks
  }
  return static_cast<int32_t>(tid);
}

}  // namespace

std::unique_ptr<TraceSink> CreatePerfettoSink(const std::string& path) {
  return std::make_unique<PerfettoSink>(path);
}

}  // namespace moetrace
