// Throughput of the native .mtrace codec on a synthetic MoE-like stream:
// per rank a Python thread issuing launches, a dispatch thread, a compute
// stream, a communication stream (all-to-all-v with splits), a copy stream
// and memory counters; op names repeat per layer, durations jitter around
// per-op means, gaps are mostly small with occasional waits, FLOPs follow
// the op (GroupedMatmul: the routed tokens). Reports events/s
// (items_per_second, events + counter samples, per CPU second: the machine
// is shared, so CPU time is steadier than wall time) and bytes/event.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <string>
#include <sys/stat.h>

#include "formats/native/native_reader.h"
#include "formats/native/native_writer.h"
#include "formats/trace.h"

namespace moetrace {
namespace {

struct OpSpec {
  const char* name;
  int stream;          // 0 compute, 1 comm, 2 copy
  int64_t mean_dur_ns;
  uint64_t flops;      // per call (0 for comm/copy)
};
constexpr OpSpec kOps[] = {
    {"RmsNorm", 0, 18'000, 2'000'000},
    {"MatMulV3_qkv", 0, 210'000, 90'000'000'000},
    {"RotaryPositionEmbedding", 0, 25'000, 0},
    {"FlashAttentionScore", 0, 480'000, 160'000'000'000},
    {"MatMulV3_o_proj", 0, 120'000, 45'000'000'000},
    {"Add", 0, 9'000, 0},
    {"RmsNorm", 0, 18'000, 2'000'000},
    {"MoeGatingTopKSoftmax", 0, 31'000, 400'000'000},
    {"MoeInitRouting", 0, 44'000, 0},
    {"hcom_alltoallv_dispatch", 1, 350'000, 0},
    {"GroupedMatmul_up", 0, 420'000, 0},
    {"Swiglu", 0, 35'000, 0},
    {"GroupedMatmul_down", 0, 260'000, 0},
    {"hcom_alltoallv_combine", 1, 330'000, 0},
    {"MoeFinalizeRouting", 0, 40'000, 0},
    {"Add", 0, 9'000, 0},
    {"MemcpyAsync_swap_out", 2, 150'000, 0},
};

Rank MakeMoeRank(int rank_id, size_t device_ops, uint64_t seed) {
  std::mt19937_64 rng(seed * 1000 + rank_id);
  Rank r;
  r.rank = rank_id;
  r.device_id = rank_id % 16;
  r.pid = 4000 + rank_id;
  r.host = "node" + std::to_string(rank_id / 16);
  r.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "python", 4000 + rank_id);
  r.AddTrack(TrackKind::kHostThread, TrackRole::kHostDispatch, "acl_dispatch", 5000 + rank_id);
  r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "stream 2", 2);
  r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "stream 5 (hccl)", 5);
  r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCopy, "stream 7 (copy)", 7);
  r.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "allocated").counter =
      CounterKind::kMemAllocated;
  Track* host = &r.tracks[0];
  Track* disp = &r.tracks[1];
  Track* streams[3] = {&r.tracks[2], &r.tracks[3], &r.tracks[4]};
  Track* mem = &r.tracks[5];
  for (Track& t : r.tracks) t.events.Reserve(device_ops);
  StringId ep_group = r.strings.Intern("ep_group_3");
  StringId names[std::size(kOps)], launch_names[std::size(kOps)], deq_names[std::size(kOps)];
  for (size_t i = 0; i < std::size(kOps); ++i) {
    names[i] = r.strings.Intern(kOps[i].name);
    launch_names[i] = r.strings.Intern(std::string("aclnn") + kOps[i].name);
    deq_names[i] = r.strings.Intern(std::string("Dequeue@") + kOps[i].name);
  }
  const int64_t base = 1'730'000'000'000'000'000;
  int64_t host_t = base, disp_t = base, dev_t[3] = {base, base, base};
  int64_t corr = 1, seq = 0;
  double allocated = 20e9;
  const int layers = 60, mbs = 8;
  for (size_t i = 0; i < device_ops; ++i) {
    const size_t k = i % std::size(kOps);
    const OpSpec& op = kOps[k];
    const int64_t layer_call = static_cast<int64_t>(i / std::size(kOps));
    const int32_t layer = static_cast<int32_t>(layer_call % layers);
    const int32_t mb = static_cast<int32_t>((layer_call / layers) % mbs);
    const int32_t step = static_cast<int32_t>(layer_call / (layers * mbs));
    const Phase phase = (layer_call / layers) % 2 ? Phase::kBackward : Phase::kForward;
    Event launch;
    launch.ts = host_t;
    launch.dur = 2'500 + static_cast<int64_t>(rng() % 6'000);
    launch.name = launch_names[k];
    launch.category = Category::kLaunch;
    launch.correlation = corr;
    launch.step = step;
    host->events.Append(launch);
    host_t += launch.dur + 300 + static_cast<int64_t>(rng() % 1'500);
    Event deq = launch;
    deq.ts = std::max(disp_t, launch.ts + launch.dur);
    deq.dur = 1'200 + static_cast<int64_t>(rng() % 800);
    deq.name = deq_names[k];
    disp->events.Append(deq);
    disp_t = deq.ts + deq.dur + 150;

    Event dev;
    int64_t& t = dev_t[op.stream];
    int64_t gap = rng() % 20 == 0 ? 20'000 + static_cast<int64_t>(rng() % 400'000)
                                  : static_cast<int64_t>(rng() % 1'500);
    dev.ts = std::max(t + gap, deq.ts + deq.dur);
    dev.dur = op.mean_dur_ns * (90 + static_cast<int64_t>(rng() % 21)) / 100;
    dev.name = names[k];
    dev.category = op.stream == 1 ? Category::kCollective
                   : op.stream == 2 ? Category::kCopy : Category::kCompute;
    dev.phase = phase;
    dev.correlation = corr;
    dev.step = step;
    dev.micro_batch = mb;
    dev.layer = layer;
    dev.flops = op.flops;
    if (op.name[0] == 'G') {  // grouped matmul: FLOPs follow the routed tokens
      dev.flops = (3000 + rng() % 2000) * 7168ull * 2048 * 2;
    }
    if (op.stream == 1) {
      CommRecord c;
      c.kind = CollectiveKind::kAllToAllV;
      c.comm_class = CommClass::kEP;
      c.group = ep_group;
      c.sequence = seq++;
      c.group_size = 16;
      uint64_t send[16], recv[16];
      for (int g = 0; g < 16; ++g) {
        send[g] = 200 + rng() % 100;
        recv[g] = 200 + rng() % 100;
      }
      c.send_splits = streams[1]->AddSplits(send);
      c.recv_splits = streams[1]->AddSplits(recv);
      c.bytes = 0;
      for (uint64_t s : send) c.bytes += s * 7168 * 2;
      dev.bytes = c.bytes;
      dev.comm = static_cast<int32_t>(streams[1]->comms.size());
      streams[1]->comms.push_back(std::move(c));
    } else if (op.stream == 2) {
      dev.flags = kFlagSwapOut | kFlagDeviceToHost;
      dev.bytes = 256ull << 20;
      allocated += (rng() % 2 ? 1 : -1) * 268435456.0;
      mem->sample_ts.push_back(dev.ts);
      mem->sample_value.push_back(allocated);
    }
    streams[op.stream]->events.Append(dev);
    t = dev.ts + dev.dur;
    ++corr;
  }
  return r;
}

struct Fixture {
  std::vector<Rank> ranks;
  size_t events = 0;
  Fixture() {
    for (int r = 0; r < 4; ++r) {
      ranks.push_back(MakeMoeRank(r, 250'000, 1));
      events += ranks.back().EventCount();
    }
  }
};

const Fixture& Data() {
  static const Fixture* f = new Fixture;
  return *f;
}

std::string BenchPath(const char* name) {
  struct stat st;
  std::string dir = stat("/dev/shm", &st) == 0 ? "/dev/shm/" : "/tmp/";
  return dir + "moetrace_native_bench_" + std::to_string(getpid()) + "_" + name + ".mtrace";
}

uint64_t FileSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

void WriteAll(const std::string& path, int level) {
  auto sink = CreateNativeSink(path, {level, 65536});
  for (const Rank& r : Data().ranks) sink->AddRank(r);
  sink->Finish(Metadata{});
}

void BM_NativeWrite(benchmark::State& state) {
  const int level = static_cast<int>(state.range(0));
  const std::string path = BenchPath("write");
  for (auto _ : state) WriteAll(path, level);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * Data().events));
  state.counters["bytes_per_event"] =
      static_cast<double>(FileSize(path)) / static_cast<double>(Data().events);
  std::remove(path.c_str());
}
BENCHMARK(BM_NativeWrite)->Arg(1)->Arg(3)->Arg(-1)->Unit(benchmark::kMillisecond);

// Opens the file and decodes every rank into one reused Rank
// (TraceSource::ReadRankInto): the way a streaming consumer reads, with no
// allocation once the Rank has grown to the largest rank.
void BM_NativeReadDecode(benchmark::State& state) {
  const int level = static_cast<int>(state.range(0));
  const std::string path = BenchPath("read");
  WriteAll(path, level);
  Rank rank;
  for (auto _ : state) {
    auto src = OpenNative(path);
    for (size_t i = 0; i < src->rank_count(); ++i) {
      src->ReadRankInto(i, &rank);
      benchmark::DoNotOptimize(rank);
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * Data().events));
  state.counters["bytes_per_event"] =
      static_cast<double>(FileSize(path)) / static_cast<double>(Data().events);
  std::remove(path.c_str());
}
BENCHMARK(BM_NativeReadDecode)->Arg(1)->Arg(3)->Arg(-1)->Arg(-3)->Arg(-7)->Unit(benchmark::kMillisecond);

// The same through ReadRank: a fresh Rank per call (allocation and page
// faults of ~64 bytes of EventTable per event included).
void BM_NativeReadDecodeFresh(benchmark::State& state) {
  const std::string path = BenchPath("fresh");
  WriteAll(path, -1);
  for (auto _ : state) {
    auto src = OpenNative(path);
    for (size_t i = 0; i < src->rank_count(); ++i) benchmark::DoNotOptimize(src->ReadRank(i));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * Data().events));
  std::remove(path.c_str());
}
BENCHMARK(BM_NativeReadDecodeFresh)->Unit(benchmark::kMillisecond);

// Context for the read numbers: merely copy-constructing the same ranks
// (allocating and filling ~64 bytes of EventTable per event, no decoding)
// bounds how fast any reader returning fresh Ranks can be on this machine.
void BM_RankCopyFloor(benchmark::State& state) {
  for (auto _ : state) {
    for (const Rank& r : Data().ranks) {
      Rank copy = r;
      benchmark::DoNotOptimize(copy);
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * Data().events));
}
BENCHMARK(BM_RankCopyFloor)->Unit(benchmark::kMillisecond);

// The memory floor of a reader that reuses its Rank: copy-assigning the
// same ranks into one existing Rank (vectors keep their capacity, so this
// is only the ~64 bytes per event of reading and writing the columns).
void BM_RankAssignFloor(benchmark::State& state) {
  Rank copy;
  for (auto _ : state) {
    for (const Rank& r : Data().ranks) {
      copy = r;
      benchmark::DoNotOptimize(copy);
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * Data().events));
}
BENCHMARK(BM_RankAssignFloor)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace moetrace

BENCHMARK_MAIN();
