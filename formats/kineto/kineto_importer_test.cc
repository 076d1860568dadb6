#include "formats/kineto/kineto_importer.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "formats/errors.h"
#include "formats/formats_test_util.h"

namespace moetrace {
namespace {

template <typename T>
std::vector<T> Vec(std::span<const T> v) {
  return {v.begin(), v.end()};
}

using testing_formats::Stat;

const Track* FindTrack(const Rank& r, TrackKind kind, const std::string& name) {
  for (const Track& t : r.tracks) {
    if (t.kind == kind && r.strings.Get(t.name) == name) return &t;
  }
  return nullptr;
}

std::string Name(const Rank& r, const EventTable& t, size_t i) {
  return std::string(r.strings.Get(t.name[i]));
}

std::string ImportErrorOf(const std::string& json, const std::string& file = "t.json") {
  try {
    ImportKinetoJson(json, file);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::filesystem::path TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("moetrace_kineto_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void WriteFile(const std::filesystem::path& p, const std::string& s) {
  std::ofstream(p, std::ios::binary) << s;
}

void WriteGzip(const std::filesystem::path& p, const std::string& s) {
  gzFile f = gzopen(p.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzwrite(f, s.data(), unsigned(s.size()));
  gzclose(f);
}

// The current schema: ops, a step, launches, kernels, copies, syncs, memory
// and a collective described by record_param_comms.
const char* kCurrent = R"J({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100", "totalGlobalMem": 85000000000}],
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 10, "tid": 10, "ts": 1000, "dur": 500},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 10, "ts": 1010, "dur": 20, "args": {"External id": 5}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 1015, "dur": 5, "args": {"External id": 5, "cbid": 211, "correlation": 100}},
  {"ph": "X", "cat": "kernel", "name": "sm90_gemm", "pid": 0, "tid": 7, "ts": 1030, "dur": 40, "args": {"External id": 5, "device": 0, "stream": 7, "correlation": 100, "grid": [1, 2, 3]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 10, "tid": 10, "ts": 1040, "dur": 4, "args": {"correlation": 101}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": 8, "ts": 1080, "dur": 3, "args": {"device": 0, "stream": 8, "correlation": 101, "bytes": 4096}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemsetAsync", "pid": 10, "tid": 10, "ts": 1045, "dur": 2, "args": {"correlation": 102}},
  {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 1090, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 102, "bytes": 64}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 10, "tid": 10, "ts": 1050, "dur": 60, "args": {"correlation": 103}},
  {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 1095, "dur": 10, "args": {"stream": 7, "correlation": 103, "device": 0}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 10, "tid": 10, "ts": 1200, "dur": 30, "args": {"External id": 9, "Collective name": "all_to_allv", "dtype": "BFloat16", "In msg nelems": 1000, "Out msg nelems": 1200, "Group size": 4, "In split size": "[100, 200, 300, 400]", "Out split size": [300, 300, 300, 300], "Process Group Name": "2", "Process Group Description": "ep_group", "Process Group Ranks": "[0, 2, 4, 6]"}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 1210, "dur": 6, "args": {"External id": 9, "correlation": 104}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", "pid": 0, "tid": 20, "ts": 1300, "dur": 90, "args": {"device": 0, "stream": 20, "correlation": 104}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventQuery", "pid": 10, "tid": 10, "ts": 1400, "dur": 1, "args": {"correlation": 105}},
  {"ph": "X", "cat": "kernel", "name": "late_kernel", "pid": 0, "tid": 7, "ts": 1600, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": 106}},
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10, "tid": 10, "ts": 1020, "args": {"Device Type": 1, "Device Id": 0, "Bytes": 512, "Total Allocated": 2048, "Total Reserved": 8192}},
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10, "tid": 10, "ts": 1010, "args": {"Device Type": 1, "Device Id": 0, "Bytes": 1536, "Total Allocated": 1536, "Total Reserved": 8192}},
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "checkpoint", "pid": 10, "tid": 10, "ts": 1100},
  {"ph": "s", "id": 100, "pid": 10, "tid": 10, "ts": 1015, "cat": "ac2g", "name": "ac2g"},
  {"ph": "f", "id": 100, "pid": 0, "tid": 7, "ts": 1030, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"name": "thread_name", "ph": "M", "ts": 1000, "pid": 10, "tid": 10, "args": {"name": "thread 10 (python)"}},
  {"ph": "X", "cat": "Trace", "ts": 900, "dur": 1000, "pid": "Spans", "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}},
  {"ph": "X", "cat": "mystery", "name": "x", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
  {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": 2000}
  ],
  "traceName": "x.json"
})J";

TEST(KinetoImporter, CurrentSchemaModel) {
  Rank r = ImportKinetoJson(kCurrent, "current.json");
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(Stat(r, "rank_rule.distributedInfo"), 1);
  EXPECT_EQ(r.device_id, 0);
  EXPECT_EQ(r.pid, 10);

  const Track* host = FindTrack(r, TrackKind::kHostThread, "thread 10 (python)");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->role, TrackRole::kHostMain);
  const EventTable& h = host->events;
  // Sorted by time: step, mm, launch, memcpy launch, memset launch, sync, instant, rpc, launch, query.
  ASSERT_EQ(h.size(), 10u);
  EXPECT_EQ(Name(r, h, 0), "ProfilerStep#7");
  EXPECT_EQ(h.category[0], Category::kMarker);
  EXPECT_EQ(h.flags[0], kFlagStepMarker);
  EXPECT_EQ(h.step[0], 7);
  EXPECT_EQ(h.ts[0], 1000000);
  EXPECT_EQ(h.dur[0], 500000);
  EXPECT_EQ(Name(r, h, 1), "aten::mm");
  EXPECT_EQ(h.category[1], Category::kHostOp);
  EXPECT_EQ(h.step[1], 7);
  EXPECT_EQ(Name(r, h, 2), "cudaLaunchKernel");
  EXPECT_EQ(h.category[2], Category::kLaunch);
  EXPECT_EQ(h.correlation[2], 100);
  EXPECT_EQ(h.category[3], Category::kLaunch);  // cudaMemcpyAsync
  EXPECT_EQ(h.category[4], Category::kLaunch);  // cudaMemsetAsync
  EXPECT_EQ(Name(r, h, 5), "cudaStreamSynchronize");
  EXPECT_EQ(h.category[5], Category::kSync);
  EXPECT_EQ(h.flags[5], kFlagBlocking);
  EXPECT_EQ(Name(r, h, 6), "checkpoint");
  EXPECT_EQ(h.category[6], Category::kMarker);
  EXPECT_EQ(h.flags[6], kFlagInstant);
  EXPECT_EQ(Name(r, h, 7), "record_param_comms");
  EXPECT_EQ(h.category[7], Category::kHostOp);
  EXPECT_EQ(Name(r, h, 9), "cudaEventQuery");
  EXPECT_EQ(h.category[9], Category::kHostOp);
  EXPECT_EQ(h.flags[9], 0);
  EXPECT_EQ(h.step[9], 7);

  const Track* s7 = FindTrack(r, TrackKind::kDeviceStream, "stream 7");
  ASSERT_NE(s7, nullptr);
  EXPECT_EQ(s7->native_id, 7);
  EXPECT_EQ(s7->role, TrackRole::kDeviceCompute);
  ASSERT_EQ(s7->events.size(), 4u);
  EXPECT_EQ(Name(r, s7->events, 0), "sm90_gemm");
  EXPECT_EQ(s7->events.category[0], Category::kCompute);
  EXPECT_EQ(s7->events.correlation[0], 100);
  EXPECT_EQ(s7->events.step[0], 7);  // through its launch
  EXPECT_EQ(s7->events.category[1], Category::kCopy);
  EXPECT_EQ(s7->events.flags[1], kFlagMemset);
  EXPECT_EQ(s7->events.bytes[1], 64u);
  EXPECT_EQ(s7->events.category[2], Category::kSync);
  EXPECT_EQ(Name(r, s7->events, 3), "late_kernel");
  EXPECT_EQ(s7->events.step[3], kNone);  // no launch in the file

  const Track* s8 = FindTrack(r, TrackKind::kDeviceStream, "stream 8");
  ASSERT_NE(s8, nullptr);
  EXPECT_EQ(s8->role, TrackRole::kDeviceCopy);
  EXPECT_EQ(s8->events.flags[0], kFlagDeviceToHost);
  EXPECT_EQ(s8->events.bytes[0], 4096u);

  const Track* s20 = FindTrack(r, TrackKind::kDeviceStream, "stream 20");
  ASSERT_NE(s20, nullptr);
  EXPECT_EQ(s20->role, TrackRole::kDeviceComm);
  ASSERT_EQ(s20->events.size(), 1u);
  EXPECT_EQ(s20->events.category[0], Category::kCollective);
  ASSERT_EQ(s20->events.comm[0], 0);
  const CommRecord& c = s20->comms[0];
  EXPECT_EQ(c.kind, CollectiveKind::kAllToAllV);
  EXPECT_EQ(r.strings.Get(c.group), "ep_group:2");
  EXPECT_EQ(c.group_size, 4);
  EXPECT_EQ(c.sequence, 0);
  EXPECT_EQ(c.bytes, 2400u);  // 1200 bf16 elements
  EXPECT_EQ(s20->events.bytes[0], 2400u);
  EXPECT_EQ(Vec(s20->Ranks(c.group_ranks)), (std::vector<int32_t>{0, 2, 4, 6}));
  EXPECT_EQ(Vec(s20->Splits(c.send_splits)), (std::vector<uint64_t>{100, 200, 300, 400}));
  EXPECT_EQ(Vec(s20->Splits(c.recv_splits)), (std::vector<uint64_t>{300, 300, 300, 300}));
  EXPECT_EQ(Stat(r, "comm.from_host_context"), 1);

  const Track* alloc = FindTrack(r, TrackKind::kCounter, "device 0 memory allocated");
  const Track* reserved = FindTrack(r, TrackKind::kCounter, "device 0 memory reserved");
  ASSERT_NE(alloc, nullptr);
  ASSERT_NE(reserved, nullptr);
  EXPECT_EQ(alloc->counter, CounterKind::kMemAllocated);
  EXPECT_EQ(reserved->counter, CounterKind::kMemReserved);
  EXPECT_EQ(alloc->sample_ts, (std::vector<TimeNs>{1010000, 1020000}));
  EXPECT_EQ(alloc->sample_value, (std::vector<double>{1536, 2048}));
  EXPECT_EQ(reserved->sample_value, (std::vector<double>{8192, 8192}));

  EXPECT_EQ(Stat(r, "read.cpu_op"), 2);
  EXPECT_EQ(Stat(r, "read.kernel"), 3);
  EXPECT_EQ(Stat(r, "read.ac2g"), 2);
  EXPECT_EQ(Stat(r, "read.(none)"), 2);
  EXPECT_EQ(Stat(r, "skipped.flow"), 2);
  EXPECT_EQ(Stat(r, "skipped.metadata"), 1);
  EXPECT_EQ(Stat(r, "skipped.trace_span"), 1);
  EXPECT_EQ(Stat(r, "skipped.unknown_category"), 1);
  EXPECT_EQ(Stat(r, "skipped.global_instant"), 1);
}

TEST(KinetoImporter, NanosecondTimestampsAreExact) {
  Rank r = ImportKinetoJson(R"J({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1712195495502094.5, "dur": 63.813},
    {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 1712195495502095.0004, "dur": 0.0005},
    {"ph": "X", "cat": "cpu_op", "name": "c", "pid": 1, "tid": 1, "ts": 17121954955021e2, "dur": 1}
  ]})J");
  ASSERT_EQ(r.tracks.size(), 1u);
  const EventTable& t = r.tracks[0].events;
  EXPECT_EQ(t.ts[0], 1712195495502094500);
  EXPECT_EQ(t.dur[0], 63813);
  EXPECT_EQ(t.ts[1], 1712195495502095000);
  EXPECT_EQ(t.dur[1], 1);  // half a nanosecond rounds away from zero
  EXPECT_EQ(t.ts[2], 1712195495502100000);
  EXPECT_EQ(Stat(r, "ts.non_integer"), 3);
}

TEST(KinetoImporter, BaseTimeIsAdded) {
  Rank r = ImportKinetoJson(R"J({"baseTimeNanoseconds": 1767189312000000000, "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1365627862757.064, "dur": 1}]})J");
  EXPECT_EQ(r.tracks[0].events.ts[0], 1767189312000000000 + 1365627862757064);
}

// The 2021 TensorBoard-plugin schema: Operator / Runtime / Kernel / Memset,
// "external id", string tids ("stream 7"), memory events without totals.
TEST(KinetoImporter, LegacySchema) {
  Rank r = ImportKinetoJson(R"J({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "Operator", "name": "ProfilerStep#5", "pid": 25738, "tid": "25738", "ts": 100, "dur": 1000},
    {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 25738, "tid": "25738", "ts": 110, "dur": 10, "args": {"cbid": 211, "correlation": 34441, "external id": 544, "external ts": 105}},
    {"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": "stream 7", "ts": 130, "dur": 2, "args": {"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 34441, "external id": 544}},
    {"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": "stream 7", "ts": 140, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 34442, "bytes": 128}},
    {"ph": "s", "id": 34441, "pid": 25738, "tid": 25738, "ts": 110, "cat": "async", "name": "launch"},
    {"ph": "f", "id": 34441, "pid": 0, "tid": "stream 7", "ts": 130, "cat": "async", "name": "launch", "bp": "e"},
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 25738, "tid": 25738, "ts": 120, "args": {"Device Type": 0, "Device Id": -1, "Bytes": 16}},
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 25738, "tid": 25738, "ts": 125, "args": {"Device Type": 0, "Device Id": -1, "Bytes": -4}},
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 25738, "tid": 25738, "ts": 126, "args": {"Device Type": 1, "Device Id": 0, "Bytes": 1024}}
  ]})J", "worker0.pt.trace.json");
  EXPECT_EQ(r.rank, 0);
  EXPECT_EQ(Stat(r, "rank_rule.default"), 1);
  EXPECT_EQ(Stat(r, "schema.legacy"), 1);
  const Track* host = FindTrack(r, TrackKind::kHostThread, "thread 25738");
  ASSERT_NE(host, nullptr);
  ASSERT_EQ(host->events.size(), 2u);
  EXPECT_EQ(host->events.flags[0], kFlagStepMarker);
  EXPECT_EQ(host->events.category[1], Category::kLaunch);
  const Track* s7 = FindTrack(r, TrackKind::kDeviceStream, "stream 7");
  ASSERT_NE(s7, nullptr);
  ASSERT_EQ(s7->events.size(), 2u);
  EXPECT_EQ(s7->events.correlation[0], 34441);
  EXPECT_EQ(s7->events.step[0], 5);
  EXPECT_EQ(s7->events.flags[1], kFlagMemset);
  const Track* cpu = FindTrack(r, TrackKind::kCounter, "cpu memory allocated (relative)");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->counter, CounterKind::kOther);  // host memory is not device memory
  EXPECT_EQ(cpu->sample_value, (std::vector<double>{16, 12}));
  const Track* gpu = FindTrack(r, TrackKind::kCounter, "device 0 memory allocated (relative)");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->counter, CounterKind::kMemAllocated);
  EXPECT_EQ(gpu->sample_value, (std::vector<double>{1024}));
  EXPECT_EQ(Stat(r, "read.(none)"), 3);
  EXPECT_EQ(Stat(r, "read.async"), 2);
}

// torch_npu's Kineto export: launches in privateuse1_runtime, device tasks
// with args.streamId and no correlation, joined only by ac2g flows.
TEST(KinetoImporter, TorchNpuFlowsGiveCorrelations) {
  Rank r = ImportKinetoJson(R"J({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 500, "tid": 500, "ts": 0, "dur": 1000},
    {"ph": "X", "cat": "privateuse1_runtime", "name": "aclnnMatmul_LaunchTask", "pid": 500, "tid": 501, "ts": 10, "dur": 5},
    {"ph": "X", "cat": "privateuse1_runtime", "name": "HcclAllReduce", "pid": 500, "tid": 501, "ts": 20, "dur": 5},
    {"ph": "X", "cat": "privateuse1_runtime", "name": "aclrtMalloc", "pid": 500, "tid": 501, "ts": 30, "dur": 5},
    {"ph": "X", "cat": "kernel", "name": "MatMulV2", "pid": 2, "tid": 3, "ts": 50, "dur": 30, "args": {"streamId": 3, "device": 2}},
    {"ph": "X", "cat": "kernel", "name": "hcom_allReduce__123_0", "pid": 2, "tid": 9, "ts": 60, "dur": 40, "args": {"streamId": 9, "device": 2}},
    {"ph": "s", "id": 7, "pid": 500, "tid": 501, "ts": 10, "cat": "ac2g", "name": "ac2g"},
    {"ph": "f", "id": 7, "pid": 2, "tid": 3, "ts": 50, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "s", "id": 8, "pid": 500, "tid": 501, "ts": 20, "cat": "ac2g", "name": "ac2g"},
    {"ph": "f", "id": 8, "pid": 2, "tid": 9, "ts": 60, "cat": "ac2g", "name": "ac2g", "bp": "e"}
  ]})J");
  EXPECT_EQ(r.device_id, 2);
  const Track* disp = FindTrack(r, TrackKind::kHostThread, "thread 501");
  ASSERT_NE(disp, nullptr);
  ASSERT_EQ(disp->events.size(), 3u);
  EXPECT_EQ(disp->events.category[0], Category::kLaunch);
  EXPECT_EQ(disp->events.correlation[0], 7);
  EXPECT_EQ(disp->events.category[1], Category::kLaunch);
  EXPECT_EQ(disp->events.correlation[1], 8);
  EXPECT_EQ(disp->events.category[2], Category::kHostOp);
  EXPECT_EQ(disp->events.step[0], 2);
  const Track* s3 = FindTrack(r, TrackKind::kDeviceStream, "stream 3");
  const Track* s9 = FindTrack(r, TrackKind::kDeviceStream, "stream 9");
  ASSERT_NE(s3, nullptr);
  ASSERT_NE(s9, nullptr);
  EXPECT_EQ(s3->events.correlation[0], 7);
  EXPECT_EQ(s3->events.step[0], 2);
  EXPECT_EQ(s9->events.correlation[0], 8);
  EXPECT_EQ(s9->events.category[0], Category::kCollective);
  EXPECT_EQ(s9->comms[0].kind, CollectiveKind::kAllReduce);
  EXPECT_EQ(Stat(r, "link.flow"), 2);
  EXPECT_EQ(Stat(r, "link.launch_by_correlation"), 2);
}

TEST(KinetoImporter, RocmLaunchesAndRcclKernels) {
  Rank r = ImportKinetoJson(R"J({"distributedInfo": {"backend": "nccl", "rank": 1}, "traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "hipExtLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"correlation": 1}},
    {"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 5, "args": {"correlation": 2}},
    {"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpyAsync", "pid": 1, "tid": 1, "ts": 30, "dur": 5, "args": {"correlation": 3}},
    {"ph": "X", "cat": "cuda_runtime", "name": "hipStreamSynchronize", "pid": 1, "tid": 1, "ts": 40, "dur": 50, "args": {"correlation": 4}},
    {"ph": "X", "cat": "kernel", "name": "Cijk_Ailk_Bljk_HHS_BH", "pid": 4, "tid": 0, "ts": 15, "dur": 5, "args": {"device": 4, "stream": 0, "correlation": 1}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)", "pid": 4, "tid": 1, "ts": 26, "dur": 5, "args": {"device": 4, "stream": 1, "correlation": 2}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "CopyHostToDevice", "pid": 4, "tid": 0, "ts": 36, "dur": 5, "args": {"device": 4, "stream": 0, "correlation": 3, "bytes": 10}}
  ]})J");
  EXPECT_EQ(r.rank, 1);
  const EventTable& h = r.tracks[0].events;
  EXPECT_EQ(h.category[0], Category::kLaunch);
  EXPECT_EQ(h.category[1], Category::kLaunch);
  EXPECT_EQ(h.category[2], Category::kLaunch);
  EXPECT_EQ(h.category[3], Category::kSync);
  const Track* s0 = FindTrack(r, TrackKind::kDeviceStream, "stream 0");
  const Track* s1 = FindTrack(r, TrackKind::kDeviceStream, "stream 1");
  ASSERT_NE(s0, nullptr);
  ASSERT_NE(s1, nullptr);
  EXPECT_EQ(s0->events.category[0], Category::kCompute);
  EXPECT_EQ(s0->events.flags[1], kFlagHostToDevice);
  EXPECT_EQ(s1->events.category[0], Category::kCollective);
  EXPECT_EQ(s1->comms[0].kind, CollectiveKind::kOther);  // the name does not say
  EXPECT_EQ(r.device_id, 4);
}

TEST(KinetoImporter, CollectiveArgsOnTheKernel) {
  Rank r = ImportKinetoJson(R"J({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(x)", "pid": 0, "tid": 7, "ts": 1, "dur": 5, "args": {"stream": 7, "correlation": 1, "Collective name": "send", "dtype": "Float", "In msg nelems": 10, "Out msg nelems": 10, "Group size": 2, "Process Group Name": "5", "Process Group Description": "pp", "Dst Rank": 3}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(x)", "pid": 0, "tid": 7, "ts": 10, "dur": 5, "args": {"stream": 7, "correlation": 2, "Collective name": "recv", "dtype": "Float", "In msg nelems": 10, "Out msg nelems": 10, "Group size": 2, "Process Group Name": "5", "Process Group Description": "pp", "Src Rank": 1}},
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", "pid": 0, "tid": 7, "ts": 20, "dur": 5, "args": {"stream": 7, "correlation": 3, "Collective name": "_allgather_base", "dtype": "BFloat16", "In msg nelems": 8, "Out msg nelems": 64, "Group size": 8, "Global rank start": 8, "Global rank stride": 2, "Process Group Name": "1"}}
  ]})J", "trace_rank_5.json");
  EXPECT_EQ(r.rank, 5);
  EXPECT_EQ(Stat(r, "rank_rule.file_name"), 1);
  const Track& s = r.tracks[0];
  ASSERT_EQ(s.comms.size(), 3u);
  EXPECT_EQ(s.events.category[0], Category::kP2P);
  EXPECT_EQ(s.comms[0].kind, CollectiveKind::kSend);
  EXPECT_EQ(s.comms[0].peer, 3);
  EXPECT_EQ(s.comms[0].sequence, 0);
  EXPECT_EQ(s.comms[0].bytes, 40u);
  EXPECT_EQ(s.events.category[1], Category::kP2P);
  EXPECT_EQ(s.comms[1].kind, CollectiveKind::kRecv);
  EXPECT_EQ(s.comms[1].peer, 1);
  EXPECT_EQ(s.comms[1].sequence, 1);
  EXPECT_EQ(s.events.category[2], Category::kCollective);
  EXPECT_EQ(s.comms[2].kind, CollectiveKind::kAllGather);
  EXPECT_EQ(s.comms[2].sequence, 0);
  EXPECT_EQ(s.comms[2].bytes, 128u);
  EXPECT_EQ(Vec(s.Ranks(s.comms[2].group_ranks)),
            (std::vector<int32_t>{8, 10, 12, 14, 16, 18, 20, 22}));
  EXPECT_EQ(Stat(r, "comm.from_kernel_args"), 3);
}

// Members spelled out by start and stride are expanded only when they are
// int32 ranks: a stride that overflows, or a group past 2^20, is counted
// and left unexpanded instead of allocating or wrapping.
TEST(KinetoImporter, ImplausibleRankStrideIsNotExpanded) {
  Rank r = ImportKinetoJson(R"J({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllGather_RING_LL_Sum_int8_t(x)", "pid": 0, "tid": 7, "ts": 1, "dur": 5, "args": {"stream": 7, "correlation": 1, "Collective name": "_allgather_base", "Group size": 4, "Global rank start": 0, "Global rank stride": 4611686018427387904, "Process Group Name": "1"}},
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllGather_RING_LL_Sum_int8_t(x)", "pid": 0, "tid": 7, "ts": 10, "dur": 5, "args": {"stream": 7, "correlation": 2, "Collective name": "_allgather_base", "Group size": 2000000, "Global rank start": 0, "Global rank stride": 1, "Process Group Name": "1"}},
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllGather_RING_LL_Sum_int8_t(x)", "pid": 0, "tid": 7, "ts": 20, "dur": 5, "args": {"stream": 7, "correlation": 3, "Collective name": "_allgather_base", "Group size": 3, "Global rank start": 2147483646, "Global rank stride": 1, "Process Group Name": "1"}}
  ]})J", "trace_rank_0.json");
  const Track& s = r.tracks[0];
  ASSERT_EQ(s.comms.size(), 3u);
  for (const CommRecord& c : s.comms) EXPECT_TRUE(c.group_ranks.empty());
  EXPECT_TRUE(s.comm_ranks.empty());
  EXPECT_EQ(s.comms[1].group_size, 2000000);
  EXPECT_EQ(Stat(r, "skipped.group_ranks_expansion"), 3);
}

TEST(KinetoImporter, BadInputMessages) {
  EXPECT_EQ(ImportErrorOf(""), "t.json: byte 0: expected a JSON object, got an empty file");
  EXPECT_EQ(ImportErrorOf("[1, 2]"),
            "t.json: byte 0: expected a JSON object ('{') at the start of the trace");
  EXPECT_EQ(ImportErrorOf(R"({"schemaVersion": 1})"),
            "t.json: expected a \"traceEvents\" array in the top-level object");
  EXPECT_EQ(ImportErrorOf(R"({"traceEvents": {}})"),
            "t.json: byte 16: expected an array ('[') for \"traceEvents\"");
  // Odd values are counted, not errors (kineto_lenient_test.cc); a literal
  // that is not one is bad syntax.
  EXPECT_EQ(ImportErrorOf(R"({"traceEvents": [{"ph": "X", "ts": tru}]})"),
            "t.json: byte 35: malformed JSON value for \"ts\"");
  EXPECT_EQ(ImportErrorOf(R"({"traceEvents": [{"ph": "X", "ts": 1,]})"),
            "t.json: byte 17: malformed JSON in an event: JSON document ended early in the "
            "middle of an object or array.");
  EXPECT_EQ(ImportErrorOf(R"({"traceEvents": [{"ph": "X", "ts": 1)"),
            "t.json: byte 17: unterminated event object in \"traceEvents\" (truncated file?)");
  EXPECT_EQ(ImportErrorOf(R"({"traceEvents": [{"ph": "X", "ts": 1,}]})"),
            "t.json: byte 17: malformed JSON in an event: The JSON document has an improper "
            "structure: missing or superfluous commas, braces, missing keys, etc.");
  EXPECT_EQ(ImportErrorOf(R"({"traceEvents": [{"ph": "X"} {"ph": "X"}]})"),
            "t.json: byte 29: expected ',' or ']' after an event");
  EXPECT_EQ(ImportErrorOf(R"({"traceEvents": [{"ph": "X"}]} x)"),
            "t.json: byte 31: unexpected content after the top-level object");
  EXPECT_EQ(ImportErrorOf(R"({"traceEvents": [{"ph": "X"}, 5]})"),
            "t.json: byte 30: expected an event object ('{') in \"traceEvents\"");
  EXPECT_EQ(ImportErrorOf(R"({"traceEvents": [{"ph": "X"},)"),
            "t.json: byte 29: unexpected end of file in \"traceEvents\"");
}

TEST(KinetoImporter, TruncatedGzipNamesTheFile) {
  auto dir = TempDir("gz");
  std::string json = std::string(kCurrent);
  WriteGzip(dir / "whole.json.gz", json);
  auto whole = OpenKineto((dir / "whole.json.gz").string());
  EXPECT_EQ(whole->ReadRank(0).rank, 3);
  // Cut the compressed stream in half.
  std::ifstream in(dir / "whole.json.gz", std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  WriteFile(dir / "cut.json.gz", gz.substr(0, gz.size() / 2));
  auto cut = OpenKineto((dir / "cut.json.gz").string());
  try {
    cut->ReadRank(0);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir / "cut.json.gz").string() + ": compressed byte " +
                  std::to_string(gz.size() / 2) +
                  ": truncated gzip stream (unexpected end of file)");
  }
  std::filesystem::remove_all(dir);
}

TEST(KinetoImporter, DirectoryRanksAndRules) {
  auto dir = TempDir("dir");
  const std::string ev = R"("traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}])";
  WriteFile(dir / "trace_rank-1.json", "{" + ev + "}");
  WriteGzip(dir / "trace_rank_0.json.gz", "{" + ev + "}");
  WriteFile(dir / "other.json", R"({"distributedInfo": {"rank": 7}, )" + ev + "}");
  WriteFile(dir / "second.json", R"({"distributedInfo": {"rank": 7}, )" + ev + "}");
  WriteFile(dir / "config.json", R"({"lr": 0.1})");
  WriteFile(dir / "notes.txt", "hello");
  EXPECT_TRUE(LooksLikeKineto(dir.string()));
  EXPECT_TRUE(LooksLikeKineto((dir / "trace_rank_0.json.gz").string()));
  EXPECT_FALSE(LooksLikeKineto((dir / "config.json").string()));
  EXPECT_FALSE(LooksLikeKineto((dir / "notes.txt").string()));
  auto src = OpenKineto(dir.string());
  ASSERT_EQ(src->rank_count(), 4u);
  EXPECT_EQ(src->metadata().source, "kineto");
  std::vector<int32_t> ranks;
  for (size_t i = 0; i < src->rank_count(); ++i) ranks.push_back(src->ReadRank(i).rank);
  EXPECT_EQ(ranks, (std::vector<int32_t>{0, 1, 7, 7}));
  std::map<std::string, std::string> attrs(src->metadata().attributes.begin(),
                                           src->metadata().attributes.end());
  EXPECT_EQ(attrs["kineto.rank_rule.trace_rank-1.json"], "file_name");
  EXPECT_EQ(attrs["kineto.rank_rule.trace_rank_0.json.gz"], "file_name");
  EXPECT_EQ(attrs["kineto.rank_rule.other.json"], "distributedInfo");
  EXPECT_EQ(attrs["kineto.skipped_files"], "1");
  EXPECT_EQ(attrs["kineto.duplicate_rank"],
            "rank 7 appears in both " + (dir / "other.json").string() + " and " +
                (dir / "second.json").string());
  std::filesystem::remove_all(dir);
}

// Other JSON in a rank directory is skipped by name; a file that is not
// JSON at all (empty, cut short: a rank that lost its head) stops the run.
TEST(KinetoImporter, DirectoryRefusesAFileThatIsNotJson) {
  auto dir = TempDir("cutdir");
  const std::string ev = R"("traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}])";
  WriteFile(dir / "rank-0.json", R"({"schemaVersion": 1, "distributedInfo": {"rank": 0}, )" + ev + "}");
  WriteFile(dir / "reference.json", R"({"figures": [1, 2]})");
  auto src = OpenKineto(dir.string());
  EXPECT_EQ(src->rank_count(), 1u);
  std::map<std::string, std::string> attrs(src->metadata().attributes.begin(), src->metadata().attributes.end());
  EXPECT_EQ(attrs["kineto.skipped_file.reference.json"], "JSON without \"traceEvents\"");
  for (const std::string cut : {std::string(), std::string(R"({"schemaVersion": 1, "distri)")}) {
    WriteFile(dir / "rank-1.json", cut);
    try {
      OpenKineto(dir.string());
      ADD_FAILURE() << "opened a directory with a cut file";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind((dir / "rank-1.json").string() + ": byte ", 0), 0u) << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}

// Times past what the trace model holds are skipped and counted, not
// wrapped (an end past int64) nor taken as they are (an op of 31 years).
TEST(KinetoImporter, TimesOutOfRangeAreSkippedAndCounted) {
  const Rank r = ImportKinetoJson(R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "ok", "pid": 0, "tid": 7, "ts": 10, "dur": 5},
    {"ph": "X", "cat": "kernel", "name": "long", "pid": 0, "tid": 7, "ts": 20, "dur": 1e15},
    {"ph": "X", "cat": "kernel", "name": "wraps", "pid": 0, "tid": 7, "ts": -9223372036854775, "dur": 9223372036854775},
    {"ph": "i", "cat": "cpu_instant_event", "name": "far", "pid": 1, "tid": 1, "ts": 9223372036854775}]})",
                                  "t.json");
  EXPECT_EQ(Stat(r, "skipped.time_out_of_range"), 3);
  int64_t events = 0;
  for (const Track& t : r.tracks) events += int64_t(t.events.size());
  EXPECT_EQ(events, 1);
}

// A rank written as a string is read, and counted.
TEST(KinetoImporter, DistributedInfoRankAsAString) {
  const Rank r = ImportKinetoJson(R"({"distributedInfo": {"rank": "3", "world_size": "8"}, "traceEvents": []})", "t.json");
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(Stat(r, "rank_rule.distributedInfo"), 1);
  EXPECT_EQ(Stat(r, "coerced.distributedInfo.string"), 2);
}

TEST(KinetoImporter, DirectoryOrderWhenNothingElseSaysTheRank) {
  auto dir = TempDir("order");
  const std::string doc = R"({"traceEvents": []})";
  WriteFile(dir / "b.json", doc);
  WriteFile(dir / "a.json", doc);
  auto src = OpenKineto(dir.string());
  ASSERT_EQ(src->rank_count(), 2u);
  Rank r1 = src->ReadRank(1);
  EXPECT_EQ(r1.rank, 1);
  EXPECT_EQ(Stat(r1, "rank_rule.directory_order"), 1);
  std::filesystem::remove_all(dir);
}

TEST(KinetoImporter, RankFromFileName) {
  EXPECT_EQ(ImportKinetoJson(R"({"traceEvents": []})", "x/rank12.json").rank, 12);
  EXPECT_EQ(ImportKinetoJson(R"({"traceEvents": []})", "x/RANK-3.pt.trace.json").rank, 3);
}

// Keys are read without a copy unless they hold an escape: escaped
// spellings of "ts", "dur" and "correlation" must read the same.
TEST(KinetoImporter, EscapedKeys) {
  Rank plain = ImportKinetoJson(kCurrent, "t.json");
  std::string escaped = kCurrent;
  for (auto [from, to] : {std::pair<std::string, std::string>{"\"ts\"", "\"t\\u0073\""},
                          {"\"dur\"", "\"\\u0064ur\""},
                          {"\"correlation\"", "\"correlati\\u006fn\""}}) {
    for (size_t at = escaped.find(from); at != std::string::npos; at = escaped.find(from, at)) {
      escaped.replace(at, from.size(), to);
      at += to.size();
    }
  }
  ASSERT_NE(escaped.find("\\u0064ur"), std::string::npos);
  EXPECT_EQ(ImportKinetoJson(escaped, "t.json"), plain);
}

// Reading each file whole (analyze) gives the same ranks and the same errors
// as streaming it.
TEST(KinetoImporter, WholeFilesReadTheSame) {
  auto dir = TempDir("shared");
  WriteGzip(dir / "trace_rank_0.json.gz", kCurrent);
  WriteFile(dir / "trace_rank_1.json", kCurrent);
  KinetoOpenOptions whole;
  whole.whole_files = true;
  auto a = OpenKineto(dir.string());
  auto b = OpenKineto(dir.string(), whole);
  ASSERT_EQ(b->rank_count(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(b->ReadRank(i), a->ReadRank(i));
  std::ifstream in(dir / "trace_rank_0.json.gz", std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  WriteFile(dir / "trace_rank_0.json.gz", gz.substr(0, gz.size() / 2));
  std::string plain_error, shared_error;
  try { a->ReadRank(0); } catch (const InputError& e) { plain_error = e.what(); }
  try { b->ReadRank(0); } catch (const InputError& e) { shared_error = e.what(); }
  EXPECT_NE(plain_error.find("truncated gzip stream"), std::string::npos) << plain_error;
  EXPECT_EQ(shared_error, plain_error);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace moetrace

namespace moetrace {
namespace {

// Quotes, backslashes and brackets inside strings must not confuse the
// structural scanner that cuts traceEvents into events.
TEST(KinetoImporter, TrickyStrings) {
  Rank r = ImportKinetoJson(R"J({"meta": {"s": "}]\"[{", "t": ["\\", "\\\""]},
    "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a\"}],{[\\", "pid": 1, "tid": 1, "ts": 1, "dur": 1,
     "args": {"Input type": ["]}", "\\\\\""], "Call stack": "f(x) {\n}"}},
    {"ph": "X", "cat": "cpu_op", "name": "caf\u00e9 \ud83d\ude00", "pid": 1, "tid": 1, "ts": 2, "dur": 1}
  ]})J");
  ASSERT_EQ(r.tracks.size(), 1u);
  const EventTable& t = r.tracks[0].events;
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(r.strings.Get(t.name[0]), "a\"}],{[\\");
  EXPECT_EQ(r.strings.Get(t.name[1]), "caf\xC3\xA9 \xF0\x9F\x98\x80");
}

}  // namespace
}  // namespace moetrace
