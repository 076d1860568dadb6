// Rank discovery and the per-rank files, over small hand-written layouts.
#include "formats/ascend/ascend_importer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "formats/errors.h"
#include "formats/rank_reference.h"
#include "formats/formats_test_util.h"

namespace moetrace {
namespace {

namespace fs = std::filesystem;

using testing_formats::ErrorOf;

using testing_formats::Stat;

std::string Attr(const Metadata& md, std::string_view key) {
  for (const auto& [k, v] : md.attributes) {
    if (k == key) return v;
  }
  return "";
}

const LabeledValue* FindRef(const Metadata& md, int32_t rank, int32_t step, std::string_view key) {
  for (const auto& r : md.reference) {
    if (r.rank == rank && r.step == step && r.key == key) return &r;
  }
  return nullptr;
}

class AscendLayout : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("moetrace_ascend_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const fs::path& rel, std::string_view text) {
    fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  // kernel_details.csv with `n` compute rows on stream 3.
  static std::string Kernels(int n) {
    std::string s = "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Stream ID,Extra\n";
    for (int i = 0; i < n; ++i) {
      s += "1,k" + std::to_string(i) + ",Add,AI_VECTOR_CORE," + std::to_string(1000 + 10 * i) +
           ".5,2.25,3,\"x,y\"\n";
    }
    return s;
  }
  std::string P(const fs::path& rel = {}) const { return (root_ / rel).string(); }

  fs::path root_;
};

TEST_F(AscendLayout, RanksFromProfilerInfoContent) {
  Write("a_ascend_pt/profiler_info_1.json", R"({"config": {"common": 1}, "rank_id": 1})");
  Write("a_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", Kernels(2));
  Write("b_ascend_pt/profiler_info_0.json", R"({"start_info": {"rank_id": 0}})");
  Write("b_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", Kernels(5));
  Write("notes.txt", "hello");
  ASSERT_TRUE(LooksLikeAscend(P()));
  auto src = OpenAscend(P());
  ASSERT_EQ(src->rank_count(), 2u);
  EXPECT_EQ(Attr(src->metadata(), "ascend.rank_rule"), "profiler_info");
  EXPECT_EQ(Attr(src->metadata(), "ascend.ignored"), "notes.txt");
  EXPECT_EQ(src->metadata().layout.world_size, 0);  // a folder may hold a sample of the ranks
  Rank r0 = src->ReadRank(0);
  Rank r1 = src->ReadRank(1);
  EXPECT_EQ(r0.rank, 0);
  EXPECT_EQ(r0.EventCount(), 5u);  // b_ascend_pt
  EXPECT_EQ(r1.rank, 1);
  EXPECT_EQ(r1.EventCount(), 2u);
  ASSERT_EQ(r1.tracks.size(), 1u);
  EXPECT_EQ(r1.tracks[0].native_id, 3);
  EXPECT_EQ(r1.tracks[0].events.ts[1], 1010500);
  EXPECT_EQ(r1.tracks[0].events.dur[1], 2250);
  EXPECT_EQ(r1.tracks[0].events.step[1], 1);
}

TEST_F(AscendLayout, RankFromProfilerInfoFileNameThenDirectoryOrder) {
  Write("x_ascend_pt/profiler_info_3.json", "{}");
  Write("x_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", Kernels(1));
  auto src = OpenAscend(P());
  ASSERT_EQ(src->rank_count(), 1u);
  EXPECT_EQ(src->ReadRank(0).rank, 3);
  // A second rank without profiler_info: every rank falls back to the order.
  Write("y_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", Kernels(2));
  src = OpenAscend(P());
  ASSERT_EQ(src->rank_count(), 2u);
  EXPECT_EQ(Attr(src->metadata(), "ascend.rank_rule"), "directory_order");
  EXPECT_EQ(src->ReadRank(0).rank, 0);
  EXPECT_EQ(src->ReadRank(0).EventCount(), 1u);
  EXPECT_EQ(src->ReadRank(1).rank, 1);
  EXPECT_EQ(src->ReadRank(1).EventCount(), 2u);
}

TEST_F(AscendLayout, DuplicateRankIsAnError) {
  Write("a_ascend_pt/profiler_info.json", R"({"rank_id": 0})");
  Write("a_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", Kernels(1));
  Write("b_ascend_pt/profiler_info.json", R"({"rank_id": "0"})");
  Write("b_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", Kernels(1));
  EXPECT_EQ(ErrorOf([&] { OpenAscend(P()); }),
            P("b_ascend_pt") + ": rank 0 (from profiler_info) is also claimed by " + P("a_ascend_pt"));
}

TEST_F(AscendLayout, RankDirectoryOutputDirectoryAndTraceViewFile) {
  Write("r_ascend_pt/profiler_info_6.json", R"({"rank_id": 6})");
  Write("r_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
        R"([{"ph":"M","name":"process_name","pid":1,"args":{"name":"Ascend Hardware"}},
            {"ph":"X","name":"k","pid":1,"tid":2,"ts":"5.001","dur":1}])");
  for (std::string p : {P("r_ascend_pt"), P("r_ascend_pt/ASCEND_PROFILER_OUTPUT"),
                        P("r_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json")}) {
    ASSERT_TRUE(LooksLikeAscend(p)) << p;
    auto src = OpenAscend(p);
    ASSERT_EQ(src->rank_count(), 1u) << p;
    Rank r = src->ReadRank(0);
    EXPECT_EQ(r.rank, 6) << p;
    ASSERT_EQ(r.EventCount(), 1u);
    EXPECT_EQ(r.tracks[0].events.ts[0], 5001);
    EXPECT_EQ(src->metadata().source, "ascend");
  }
}

TEST_F(AscendLayout, LooseKernelDetailsFilesAreRanksInNameOrder) {
  Write("b-kernels.csv", Kernels(3));
  Write("a-kernels.csv", Kernels(4));
  Write("other.csv", "Foo,Bar\n1,2\n");
  ASSERT_TRUE(LooksLikeAscend(P()));
  auto src = OpenAscend(P());
  ASSERT_EQ(src->rank_count(), 2u);
  EXPECT_EQ(Attr(src->metadata(), "ascend.rank_rule"), "directory_order");
  EXPECT_EQ(src->ReadRank(0).EventCount(), 4u);
  EXPECT_EQ(src->ReadRank(1).EventCount(), 3u);
  EXPECT_EQ(src->ReadRank(1).rank, 1);
}

// A name that is not UTF-8 is repaired and counted; a kernel_details
// without Stream ID (every task on one stream per core) and its short rows
// are counted too.
TEST_F(AscendLayout, KernelDetailsOddNamesShortRowsAndNoStreamColumn) {
  Write("k.csv",
        "Step Id,Name,Start Time(us),Duration(us),Type,Accelerator Core\n"
        "1,Mat\xff\xfemul,1000.5,2.25,MatMul,AI_CORE\n"
        "1,Add,1010.5,1.5,Add\n");
  Rank r = OpenAscend(P("k.csv"))->ReadRank(0);
  EXPECT_EQ(Stat(r, "repaired.utf8"), 2);
  EXPECT_EQ(Stat(r, "coerced.kernel_details.short_row"), 1);
  EXPECT_EQ(Stat(r, "coerced.kernel_details.no_stream_id_column"), 2);
  bool repaired = false;
  for (std::string_view name : r.strings.all()) repaired |= name == "Mat\xEF\xBF\xBD\xEF\xBF\xBDmul";
  EXPECT_TRUE(repaired);
}

TEST_F(AscendLayout, NotAscend) {
  Write("trace.json", R"({"traceEvents": []})");
  EXPECT_FALSE(LooksLikeAscend(P()));
  EXPECT_FALSE(LooksLikeAscend(P("trace.json")));
  EXPECT_FALSE(LooksLikeAscend(P("missing")));
  EXPECT_EQ(ErrorOf([&] { OpenAscend(P()); }),
            P() + ": not Ascend profiler output: no ASCEND_PROFILER_OUTPUT, trace_view.json or "
                  "kernel_details CSV found");
  EXPECT_EQ(ErrorOf([&] { OpenAscend(P("missing")); }), P("missing") + ": no such file or directory");
}

TEST_F(AscendLayout, PerRankFilesBecomeReferencesCountersAndRouting) {
  fs::path out = "r_ascend_pt/ASCEND_PROFILER_OUTPUT";
  Write(out / "kernel_details.csv",
        "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Stream ID,Input Shapes\n"
        // x per group: four groups of tokens, then the weight list.
        "2,GroupedMatmul_1,GroupedMatmul,AI_CORE,10,5,3,\"\"\"12,7168;30,7168;0,7168;5,7168;4,7168,4096\"\"\"\n"
        // one x of 2048 tokens, weights [4, 7168, 4096], group_list [4].
        "2,GroupedMatmul_2,GroupedMatmul,AI_CORE,20,5,3,\"\"\"2048,7168;4,7168,4096;4\"\"\"\n"
        "3,GroupedMatmul_3,GroupedMatmul,AI_CORE,30,5,3,\"\"\"1024,7168;4,7168,4096;4\"\"\"\n"
        "3,hcom_alltoallv__9_4,hcom_alltoallv_,HCCL,40,5,N/A,N/A\n"
        "3,MEMCPY_ASYNC,MEMCPY_ASYNC,AI_CPU,50,1,4,\n");
  Write(out / "step_trace_time.csv",
        "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
        "Communication(Not Overlapped and Exclude Receive),Preparing\n"
        "2,100.5,20,3,23,7.25,130,0,20,1\n3,90,N/A,0,0,10,100,0,0,0\n");
  Write(out / "memory_record.csv",
        "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type\n"
        "PTA,20.000,1.5,4,1.5,0,NPU:0\n"
        "APP,15.000,,100,,0,NPU:0\n"
        "PTA,10.000,0.5,2,0.5,0,NPU:0\n");
  Write(out / "operator_memory.csv",
        "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),"
        "Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),"
        "Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),"
        "Release Total Active(MB),Stream Ptr,Device Type\n"
        "aten::empty,1024,11,19,19,8,8,1.5,4,1.5,0.5,4,0.5,0,NPU:0\n");
  Write(out / "communication.json", R"J({"step2": {"collective": {
      "hcom_alltoallv__9_4@123": {"Communication Time Info": {"Elapse Time(ms)": 0.5, "Wait Time(ms)": 0.25},
        "Communication Bandwidth Info": {"HCCS": {"Transit Size(MB)": 2, "Transit Time(ms)": 0.1}}},
      "Total Op Info": {"Communication Time Info": {"Elapse Time(ms)": 0.5},
        "Communication Bandwidth Info": {}}}}})J");
  auto src = OpenAscend(P("r_ascend_pt"));
  const Metadata& md = src->metadata();
  EXPECT_EQ(FindRef(md, 0, 2, "step_trace.computing_us")->value, 100.5);
  EXPECT_EQ(FindRef(md, 0, 2, "step_trace.communication_not_overlapped_us")->value, 20);
  EXPECT_EQ(FindRef(md, 0, 2, "step_trace.free_us")->value, 7.25);
  EXPECT_EQ(FindRef(md, 0, 3, "step_trace.communication_not_overlapped_us"), nullptr);  // N/A
  EXPECT_EQ(FindRef(md, 0, 3, "step_trace.stage_us")->value, 100);
  EXPECT_EQ(FindRef(md, 0, -1, "communication.op_count")->value, 1);
  EXPECT_EQ(FindRef(md, 0, -1, "communication.elapse_time_us")->value, 500);
  EXPECT_EQ(FindRef(md, 0, -1, "communication.wait_time_us")->value, 250);
  // MB = 1e6 bytes (msprof), so GB/s = MB/ms.
  EXPECT_EQ(FindRef(md, 0, -1, "communication.hccs.transit_size_bytes")->value, 2e6);
  EXPECT_EQ(FindRef(md, 0, -1, "communication.hccs.bandwidth_gb_s")->value, 20);
  // Per op, in the op's step, as written.
  EXPECT_EQ(FindRef(md, 0, 2, "communication.op.hcom_alltoallv__9_4@123.elapse_time_ms")->value, 0.5);
  EXPECT_EQ(FindRef(md, 0, 2, "communication.op.hcom_alltoallv__9_4@123.hccs.transit_size_mb")->value, 2);
  EXPECT_EQ(FindRef(md, 0, 2, "communication.op.hcom_alltoallv__9_4@123.transit_bytes")->value, 2e6);

  Rank r = src->ReadRank(0);
  // Routing: per-group x, then the rank totals.
  ASSERT_EQ(r.routing.size(), 3u);
  EXPECT_EQ(r.routing[0].tokens_per_expert, (std::vector<int64_t>{12, 30, 0, 5}));
  EXPECT_EQ(r.routing[0].step, 2);
  EXPECT_EQ(r.routing[0].layer, 0);
  EXPECT_EQ(r.routing[0].ep_size, 0);
  EXPECT_EQ(r.routing[0].ts, 10000);
  EXPECT_EQ(r.routing[1].tokens_per_expert, (std::vector<int64_t>{2048}));
  EXPECT_EQ(r.routing[1].layer, 1);
  EXPECT_EQ(r.routing[2].layer, 0);  // first of step 3
  EXPECT_EQ(r.routing[2].step, 3);
  EXPECT_EQ(Stat(r, "routing.grouped_matmul.per_group"), 1);
  EXPECT_EQ(Stat(r, "routing.grouped_matmul.rank_total"), 2);
  // Device tracks: stream 3 (compute), HCCL (comm, no stream id), stream 4 (copy).
  std::map<int64_t, const Track*> streams;
  std::vector<const Track*> counters;
  for (const Track& t : r.tracks) {
    if (t.kind == TrackKind::kDeviceStream) streams[t.native_id] = &t;
    if (t.kind == TrackKind::kCounter) counters.push_back(&t);
  }
  ASSERT_EQ(streams.size(), 3u);
  EXPECT_EQ(streams[3]->role, TrackRole::kDeviceCompute);
  EXPECT_EQ(streams[-1]->role, TrackRole::kDeviceComm);
  EXPECT_EQ(streams[-1]->comms[0].kind, CollectiveKind::kAllToAllV);
  EXPECT_EQ(streams[-1]->comms[0].sequence, 4);
  // communication.json's hcom_alltoallv__9_4@123 moved 2 MB: its bytes.
  EXPECT_EQ(streams[-1]->comms[0].bytes, 2000000u);
  EXPECT_EQ(Stat(r, "read.communication_json.ops_matched"), 1);
  EXPECT_EQ(Stat(r, "read.communication_json.ops_unmatched"), 0);
  EXPECT_EQ(streams[4]->role, TrackRole::kDeviceCopy);
  // Memory: PTA allocated / reserved / active, APP reserved, operator_memory as secondary.
  std::map<std::string, const Track*> by_name;
  for (const Track* t : counters) by_name[std::string(r.strings.Get(t->name))] = t;
  ASSERT_TRUE(by_name.count("PTA allocated"));
  const Track* alloc = by_name["PTA allocated"];
  EXPECT_EQ(alloc->counter, CounterKind::kMemAllocated);
  EXPECT_EQ(alloc->sample_ts, (std::vector<TimeNs>{10000, 20000}));
  EXPECT_EQ(alloc->sample_value, (std::vector<double>{0.5 * 1048576, 1.5 * 1048576}));
  EXPECT_EQ(by_name["PTA reserved"]->counter, CounterKind::kMemReserved);
  EXPECT_EQ(by_name["APP reserved"]->counter, CounterKind::kOther);
  EXPECT_EQ(by_name["APP reserved"]->sample_value, (std::vector<double>{100 * 1048576.0}));
  EXPECT_EQ(by_name.count("APP allocated"), 0u);
  ASSERT_TRUE(by_name.count("operator_memory allocated (secondary)"));
  const Track* op = by_name["operator_memory allocated (secondary)"];
  EXPECT_EQ(op->counter, CounterKind::kOther);
  EXPECT_EQ(op->sample_ts, (std::vector<TimeNs>{11000, 19000}));
  EXPECT_EQ(op->sample_value, (std::vector<double>{1.5 * 1048576, 0.5 * 1048576}));
  EXPECT_EQ(Stat(r, "read.memory_record.row"), 3);
  EXPECT_EQ(Stat(r, "read.operator_memory.row"), 1);
}

TEST_F(AscendLayout, OperatorMemoryAloneIsTheAllocatedCounter) {
  Write("ASCEND_PROFILER_OUTPUT/operator_memory.csv",
        "Name,Size(KB),Allocation Time(us),Release Time(us),Allocation Total Allocated(MB),"
        "Allocation Total Reserved(MB),Release Total Allocated(MB),Release Total Reserved(MB)\n"
        "a,1,5,,2,8,,\n");
  Rank r = OpenAscend(P("ASCEND_PROFILER_OUTPUT"))->ReadRank(0);
  ASSERT_EQ(r.tracks.size(), 2u);
  EXPECT_EQ(r.tracks[0].counter, CounterKind::kMemAllocated);
  EXPECT_EQ(r.tracks[0].sample_value, (std::vector<double>{2 * 1048576.0}));
  EXPECT_EQ(r.tracks[1].counter, CounterKind::kMemReserved);
}

TEST_F(AscendLayout, TraceViewIsTheTimelineAndKernelDetailsAddsLoads) {
  fs::path out = "ASCEND_PROFILER_OUTPUT";
  Write(out / "trace_view.json",
        R"([{"ph":"M","name":"process_name","pid":1,"args":{"name":"Ascend Hardware"}},
            {"ph":"X","name":"GroupedMatmul","pid":1,"tid":2,"ts":"10","dur":5}])");
  Write(out / "kernel_details.csv",
        "Name,Type,Start Time(us),Duration(us),Input Shapes\n"
        "GroupedMatmul,GroupedMatmul,10,5,\"\"\"64,128;2,128,256;2\"\"\"\n");
  Rank r = OpenAscend(P())->ReadRank(0);
  EXPECT_EQ(r.EventCount(), 1u);
  EXPECT_EQ(Stat(r, "skipped.kernel_details.row_timeline_from_trace_view"), 1);
  ASSERT_EQ(r.routing.size(), 1u);
  EXPECT_EQ(r.routing[0].tokens_per_expert, (std::vector<int64_t>{64}));
  // The CSV row of the same start and name gives the task its shapes.
  const EventTable& e = r.tracks[0].events;
  EXPECT_EQ(r.strings.Get(e.ShapeAt(0)), "64,128;2,128,256;2");
  EXPECT_EQ(Stat(r, "read.kernel_details.input_shapes_to_timeline"), 1);
}

TEST_F(AscendLayout, KernelDetailsShapesGoOnlyToTheTaskOfTheSameStartAndName) {
  fs::path out = "ASCEND_PROFILER_OUTPUT";
  Write(out / "trace_view.json",
        R"([{"ph":"M","name":"process_name","pid":1,"args":{"name":"Ascend Hardware"}},
            {"ph":"X","name":"MatMulV2","pid":1,"tid":2,"ts":"10.500","dur":5},
            {"ph":"X","name":"Cast","pid":1,"tid":2,"ts":"10.500","dur":1},
            {"ph":"X","name":"MatMulV2","pid":1,"tid":2,"ts":"20","dur":5}])");
  Write(out / "kernel_details.csv",
        "Name,Type,Start Time(us),Duration(us),Input Shapes\n"
        "MatMulV2,MatMulV2,10.5,5,\"\"\"8192,512;512,1024\"\"\"\n"
        "MatMulV2,MatMulV2,20.000,5,N/A\n"
        "Add,Add,30,5,\"\"\"4,4;4,4\"\"\"\n");
  Rank r = OpenAscend(P())->ReadRank(0);
  const EventTable& e = r.tracks[0].events;
  ASSERT_EQ(e.size(), 3u);
  std::vector<std::string> got;
  for (size_t i = 0; i < e.size(); ++i) {
    got.push_back(std::string(r.strings.Get(e.name[i])) + "=" + std::string(r.strings.Get(e.ShapeAt(i))));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"MatMulV2=8192,512;512,1024", "Cast=", "MatMulV2="}));
  EXPECT_EQ(Stat(r, "read.kernel_details.input_shapes_to_timeline"), 1);
  EXPECT_EQ(Stat(r, "skipped.kernel_details.input_shapes_no_timeline_task"), 1);
}

TEST_F(AscendLayout, TraceViewArgsInputShapesAndInputDims) {
  fs::path out = "ASCEND_PROFILER_OUTPUT";
  Write(out / "trace_view.json",
        R"([{"ph":"M","name":"process_name","pid":1,"args":{"name":"Ascend Hardware"}},
            {"ph":"M","name":"process_name","pid":2,"args":{"name":"Python"}},
            {"ph":"X","name":"aten::mm","pid":2,"tid":3,"ts":"1","dur":50,"cat":"cpu_op",
             "args":{"Input Dims":[[8192, 512],
                                   [512,1024]],"Sequence number":4}},
            {"ph":"X","name":"MatMulV2","pid":1,"tid":2,"ts":"10","dur":5,
             "args":{"Task Type":"AI_CORE","Input Shapes":"\"8192,512;512,1024\""}},
            {"ph":"X","name":"Cast","pid":1,"tid":2,"ts":"20","dur":5,
             "args":{"Input Shapes":"N/A"}},
            {"ph":"X","name":"Odd","pid":1,"tid":2,"ts":"30","dur":5,
             "args":{"Input Shapes":7}}])");
  Rank r = OpenAscend(P())->ReadRank(0);
  std::map<std::string, std::string> got;
  for (const Track& t : r.tracks) {
    for (size_t i = 0; i < t.events.size(); ++i) {
      got[std::string(r.strings.Get(t.events.name[i]))] = r.strings.Get(t.events.ShapeAt(i));
    }
  }
  EXPECT_EQ(got["aten::mm"], "[[8192, 512], [512, 1024]]");
  EXPECT_EQ(got["MatMulV2"], "8192,512;512,1024");
  EXPECT_EQ(got["Cast"], "");
  EXPECT_EQ(got["Odd"], "");
  EXPECT_EQ(Stat(r, "skipped.arg.shape"), 1);
}

TEST_F(AscendLayout, BadCsvNamesFileLineAndColumn) {
  Write("ASCEND_PROFILER_OUTPUT/kernel_details.csv",
        "Name,Type,Start Time(us)\nAdd,Add,10\n");
  std::string kd = P("ASCEND_PROFILER_OUTPUT/kernel_details.csv");
  auto src = OpenAscend(P());
  EXPECT_EQ(ErrorOf([&] { src->ReadRank(0); }),
            kd + ": line 1: missing column 'Duration(us)' in the header");
  Write("ASCEND_PROFILER_OUTPUT/kernel_details.csv",
        "Name,Type,Start Time(us),Duration(us)\nAdd,Add,10,1\n\"Mul,2\",Mul,early,1\n");
  EXPECT_EQ(ErrorOf([&] { src->ReadRank(0); }),
            kd + ": line 3: column 'Start Time(us)': expected a number, got 'early'");
  Write("ASCEND_PROFILER_OUTPUT/step_trace_time.csv", "Step,Computing\n1,lots\n");
  EXPECT_EQ(ErrorOf([&] { OpenAscend(P()); }),
            P("ASCEND_PROFILER_OUTPUT/step_trace_time.csv") +
                ": line 2: column 'Computing': expected a number, got 'lots'");
}

// Two ranks, each with an Overlap Analysis process and a step_trace_time.csv:
// opened with figures_with_ranks, the metadata holds a placeholder where each
// rank's overlap figures go and no scan happens; the ranks' reads bring the
// figures, and putting them back gives the list of the scanning open, in its
// order (the analysis JSON lists label checks in that order).
TEST_F(AscendLayout, OverlapFiguresComeWithTheRanks) {
  for (int r : {0, 1}) {
    const std::string dur = r == 0 ? "2.5" : "4";
    const fs::path out = "rank" + std::to_string(r) + "_ascend_pt/ASCEND_PROFILER_OUTPUT";
    Write(out / "trace_view.json",
          R"({"traceEvents": [
 {"ph":"M","name":"process_name","pid":12,"tid":0,"args":{"name":"Ascend Hardware"}},
 {"ph":"M","name":"process_name","pid":14,"tid":0,"args":{"name":"Overlap Analysis"}},
 {"ph":"X","name":"aclnnMm_MatMulV2","pid":12,"tid":5,"ts":"200.000","dur":10,"args":{"Task Type":"AI_CORE"}},
 {"ph":"X","name":"Computing","pid":14,"tid":0,"ts":"200.000","dur":)" + dur + R"(},
 {"ph":"X","name":"Free","pid":14,"tid":0,"ts":"210.000","dur":1}
]})");
    Write(out / "step_trace_time.csv",
          "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free\n"
          "1," + std::to_string(100 + r) + ",20,3,23,7\n");
  }
  const Metadata scanned = OpenAscend(P())->metadata();
  auto figures = std::make_shared<RankReference>();
  auto src = OpenAscend(P(), AscendOpenOptions{figures});
  const Metadata& md = src->metadata();
  // Per rank: computing and free (_us, _segments) and the span.
  ASSERT_EQ(scanned.reference.size(), md.reference.size() - 2 + 2 * 5);
  EXPECT_EQ(FindRef(scanned, 1, -1, "overlap_analysis.computing_us")->value, 4);
  EXPECT_EQ(FindRef(md, 1, -1, "overlap_analysis.computing_us"), nullptr);
  ASSERT_TRUE(HasRankReference(md.reference));
  EXPECT_FALSE(HasRankReference(scanned.reference));
  EXPECT_EQ(md.reference[0], (LabeledValue{0, kNone, std::string(kRankReferenceKey), 0}));
  // Every other figure as the scanning open has it.
  std::vector<LabeledValue> others, without_placeholders;
  for (const LabeledValue& l : scanned.reference) {
    if (!l.key.starts_with("overlap_analysis.")) others.push_back(l);
  }
  for (const LabeledValue& l : md.reference) {
    if (l.key != kRankReferenceKey) without_placeholders.push_back(l);
  }
  EXPECT_EQ(without_placeholders, others);

  // Rank 1 read first, and twice: kept once, placed by rank id, not by arrival.
  Rank r1 = src->ReadRank(1);
  src->ReadRank(1);
  Rank r0 = src->ReadRank(0);
  EXPECT_EQ(r1, OpenAscend(P())->ReadRank(1));  // the rank itself as without the option
  const std::vector<LabeledValue> only0 = figures->Take({0});
  ASSERT_EQ(only0.size(), 5u);
  EXPECT_EQ(only0[0], (LabeledValue{0, kNone, "overlap_analysis.computing_us", 2.5}));
  EXPECT_EQ(only0[4], (LabeledValue{0, kNone, "overlap_analysis.span_us", 11}));  // 200 to 211 µs
  const std::vector<LabeledValue> only1 = figures->Take({1, 0});  // 0 was taken
  ASSERT_EQ(only1.size(), 5u);
  EXPECT_EQ(only1[0], (LabeledValue{1, kNone, "overlap_analysis.computing_us", 4}));

  std::vector<LabeledValue> carried = only1;
  carried.insert(carried.end(), only0.begin(), only0.end());
  EXPECT_EQ(ResolveRankReference(md.reference, carried), scanned.reference);
  // A rank that was not read (skipped): its placeholder goes, nothing else.
  std::vector<LabeledValue> expected;
  for (const LabeledValue& l : scanned.reference) {
    if (l.rank == 0 || !l.key.starts_with("overlap_analysis.")) expected.push_back(l);
  }
  EXPECT_EQ(ResolveRankReference(md.reference, only0), expected);
  // One rank: its figures come from the open's import as before, no placeholder.
  auto one = OpenAscend(P("rank1_ascend_pt"), AscendOpenOptions{figures});
  EXPECT_EQ(FindRef(one->metadata(), 0, -1, "overlap_analysis.computing_us")->value, 4);
  EXPECT_FALSE(HasRankReference(one->metadata().reference));
}

TEST_F(AscendLayout, BadTraceViewIsReportedAtOpen) {
  Write("ASCEND_PROFILER_OUTPUT/trace_view.json", R"([{"ph":"X","ts":"1","dur":1},)");
  std::string e = ErrorOf([&] { OpenAscend(P()); });
  EXPECT_EQ(e.rfind(P("ASCEND_PROFILER_OUTPUT/trace_view.json") + ": byte ", 0), 0u) << e;
  EXPECT_NE(e.find("malformed JSON"), std::string::npos) << e;
}

}  // namespace
}  // namespace moetrace
