#include "formats/sample_trace.h"

#include <random>

namespace moetrace {
namespace {

// Names of the ops a MoE layer runs, in order, and their stream.
struct OpSpec {
  const char* name;
  Category category;
  TrackRole stream;
};
constexpr OpSpec kLayerOps[] = {
    {"RMSNorm", Category::kCompute, TrackRole::kDeviceCompute},
    {"MLA_QKV_Proj", Category::kCompute, TrackRole::kDeviceCompute},
    {"FlashAttentionScore", Category::kCompute, TrackRole::kDeviceCompute},
    {"Router_TopK", Category::kCompute, TrackRole::kDeviceCompute},
    {"Permute", Category::kCompute, TrackRole::kDeviceCompute},
    {"hcom_alltoallv_dispatch", Category::kCollective, TrackRole::kDeviceComm},
    {"GroupedMatmul", Category::kCompute, TrackRole::kDeviceCompute},
    {"hcom_alltoallv_combine", Category::kCollective, TrackRole::kDeviceComm},
    {"Unpermute", Category::kCompute, TrackRole::kDeviceCompute},
    {"hcom_send_pp", Category::kP2P, TrackRole::kDeviceComm},
    {"MemcpyD2H_swap_out", Category::kCopy, TrackRole::kDeviceCopy},
};

}  // namespace

Trace MakeSampleTrace(int ranks, int events_per_stream, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Trace t;
  t.metadata.source = "sample";
  t.metadata.origin = "formats/sample_trace.cc";
  t.metadata.producer = "moetrace sample generator";
  t.metadata.layout = {ranks, 1, 1, 1, 1, ranks, 1, 8};
  t.metadata.device = "Ascend 910B";
  t.metadata.device_peak_flops = 354e12;
  t.metadata.device_memory_bytes = 64ull << 30;
  t.metadata.model_flops_per_step = 1.5e15;
  t.metadata.tokens_per_step = 4096;
  t.metadata.config_json = R"({"preset":"sample","seed":1})";
  t.metadata.attributes = {{"generator", "sample"}, {"note", "every field populated"}};

  const int64_t base = 1'700'000'000'000'000'000;
  for (int r = 0; r < ranks; ++r) {
    Rank& rank = t.ranks.emplace_back();
    rank.rank = r;
    rank.device_id = r % 8;
    rank.pid = 1000 + r;
    rank.host = "node" + std::to_string(r / 8);
    // Add every track first: AddTrack may reallocate the vector.
    rank.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "python", 1000 + r);
    rank.AddTrack(TrackKind::kHostThread, TrackRole::kHostDispatch, "dequeue", 2000 + r);
    rank.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "stream 0", 0);
    rank.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "stream 1 (hccl)", 1);
    rank.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCopy, "stream 2 (copy)", 2);
    rank.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "mem.allocated").counter =
        CounterKind::kMemAllocated;
    rank.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "mem.activations").counter =
        CounterKind::kMemActivations;
    Track* host_p = &rank.tracks[0];
    Track* disp_p = &rank.tracks[1];
    Track* streams[3] = {&rank.tracks[2], &rank.tracks[3], &rank.tracks[4]};
    Track* mem = &rank.tracks[5];
    Track* act = &rank.tracks[6];

    StringId group = rank.strings.Intern("ep_group_0");
    Event marker;
    marker.ts = base;
    marker.dur = 0;
    marker.name = rank.strings.Intern("ProfilerStep#0");
    marker.category = Category::kMarker;
    marker.flags = kFlagStepMarker;
    marker.step = 0;
    host_p->events.Append(marker);

    int64_t host_t = base + 10;
    int64_t dev_t[3] = {base + 500, base + 500, base + 500};
    int64_t corr = 1 + r * 100000;
    int64_t seq = 0;
    for (int i = 0; i < events_per_stream * 3; ++i) {
      const OpSpec& op = kLayerOps[i % std::size(kLayerOps)];
      int s = op.stream == TrackRole::kDeviceCompute ? 0 : op.stream == TrackRole::kDeviceComm ? 1 : 2;
      Event launch;
      launch.ts = host_t;
      launch.dur = 3000 + static_cast<int64_t>(rng() % 2000);
      launch.name = rank.strings.Intern(std::string("enqueue ") + op.name);
      launch.category = Category::kLaunch;
      launch.correlation = corr;
      launch.step = 0;
      host_p->events.Append(launch);
      Event deq = launch;
      deq.ts = launch.ts + launch.dur;
      deq.dur = 1000;
      deq.name = rank.strings.Intern(std::string("dequeue ") + op.name);
      disp_p->events.Append(deq);
      host_t += launch.dur + 200;

      Event dev;
      dev.ts = std::max(dev_t[s], deq.ts + deq.dur + 100);
      dev.dur = 10000 + static_cast<int64_t>(rng() % 50000);
      dev.name = rank.strings.Intern(op.name);
      dev.category = op.category;
      dev.phase = (i / 11) % 2 == 0 ? Phase::kForward : Phase::kBackward;
      dev.correlation = corr;
      dev.step = 0;
      dev.micro_batch = (i / 22) % 4;
      dev.layer = (i / 11) % 8;
      if (op.category == Category::kCompute) {
        dev.flops = 1'000'000'000ull + rng() % 1'000'000;
        dev.bytes = 4'000'000ull + rng() % 1000;
      }
      if (op.category == Category::kCopy) {
        dev.flags = kFlagSwapOut | kFlagDeviceToHost;
        dev.bytes = 64ull << 20;
      }
      if (op.category == Category::kCollective || op.category == Category::kP2P) {
        CommRecord c;
        if (op.category == Category::kP2P) {
          c.kind = CollectiveKind::kSend;
          c.comm_class = CommClass::kPP;
          c.peer = (r + 1) % ranks;
          c.group = rank.strings.Intern("pp_group");
          c.group_size = 2;
        } else {
          c.kind = CollectiveKind::kAllToAllV;
          c.comm_class = CommClass::kEP;
          c.group = group;
          c.group_size = ranks;
          std::vector<int32_t> members;
          std::vector<uint64_t> send, recv;
          for (int g = 0; g < ranks; ++g) {
            members.push_back(g);
            send.push_back(1000 + rng() % 100);
            recv.push_back(1000 + rng() % 100);
          }
          c.group_ranks = streams[s]->AddRanks(members);
          c.send_splits = streams[s]->AddSplits(send);
          c.recv_splits = streams[s]->AddSplits(recv);
        }
        c.sequence = seq++;
        c.bytes = 8ull << 20;
        dev.comm = static_cast<int32_t>(streams[s]->comms.size());
        dev.bytes = c.bytes;
        streams[s]->comms.push_back(std::move(c));
      }
      streams[s]->events.Append(dev);
      dev_t[s] = dev.ts + dev.dur + static_cast<int64_t>(rng() % 3000);

      if (i % 7 == 0) {
        Event sync;
        sync.ts = host_t;
        sync.dur = 20000;
        sync.name = rank.strings.Intern("aclrtSynchronizeStream");
        sync.category = Category::kSync;
        sync.flags = kFlagBlocking;
        sync.step = 0;
        host_p->events.Append(sync);
        host_t += sync.dur + 100;
      }
      mem->sample_ts.push_back(dev.ts);
      mem->sample_value.push_back(1e9 + static_cast<double>(i) * 1e6);
      act->sample_ts.push_back(dev.ts);
      act->sample_value.push_back(static_cast<double>(i % 11) * 2.5e5);
      ++corr;
    }
    for (int layer = 0; layer < 4; ++layer) {
      RoutingRecord rr;
      rr.ts = base + layer * 1000;
      rr.step = 0;
      rr.micro_batch = 0;
      rr.layer = layer;
      rr.ep_size = 4;
      for (int e = 0; e < 16; ++e) rr.tokens_per_expert.push_back(100 + static_cast<int64_t>(rng() % 400));
      if (layer % 2 == 1) {
        for (int e = 0; e < 16; ++e) rr.expert_to_ep_rank.push_back((e * 7) % 4);
      }
      rank.routing.push_back(std::move(rr));
    }
    rank.import_stats = {{"read.kernel", 3 * events_per_stream}, {"skipped.none", 0}};
    t.metadata.ground_truth.push_back({r, kNone, "breakdown.comm_exposed_ns", 12345.0 + r});
    t.metadata.ground_truth.push_back({r, 0, "comm_by_class.EP.exposed_ns", 678.5});
    t.metadata.reference.push_back({r, kNone, "overlap_analysis.free_us", 9481.67});
  }
  return t;
}

}  // namespace moetrace
