#include "formats/ascend/trace_view.h"

#include <gtest/gtest.h>

#include "formats/errors.h"
#include "formats/formats_test_util.h"

namespace moetrace {
namespace {

using testing_formats::ErrorOf;

using testing_formats::Stat;

const Track* FindTrack(const Rank& r, TrackKind kind, int64_t native) {
  for (const Track& t : r.tracks) {
    if (t.kind == kind && t.native_id == native) return &t;
  }
  return nullptr;
}

// A dispatch-thread launch issuing two tasks, an enqueue / dequeue chain, an
// HCCL all-to-allv on the Communication process, a task joined only through
// async_npu, a sync, a step, and an Overlap Analysis segment.
constexpr const char* kSmall = R"({"traceEvents": [
 {"ph":"M","name":"process_name","pid":10,"tid":0,"args":{"name":"Python"}},
 {"ph":"M","name":"process_name","pid":11,"tid":0,"args":{"name":"CANN"}},
 {"ph":"M","name":"process_name","pid":12,"tid":0,"args":{"name":"Ascend Hardware"}},
 {"ph":"M","name":"process_name","pid":13,"tid":0,"args":{"name":"Communication"}},
 {"ph":"M","name":"process_name","pid":14,"tid":0,"args":{"name":"Overlap Analysis"}},
 {"ph":"M","name":"thread_name","pid":12,"tid":5,"args":{"name":"Stream 5"}},
 {"ph":"X","name":"ProfilerStep#7","pid":10,"tid":10,"ts":"100.000","dur":1000,"cat":"cpu_op"},
 {"ph":"X","name":"aten::mm","pid":10,"tid":10,"ts":"110.000","dur":50,"cat":"cpu_op"},
 {"ph":"X","name":"Enqueue","pid":10,"tid":10,"ts":"120.000","dur":5.5,"cat":"enqueue"},
 {"ph":"s","name":"enqueue_to_dequeue","id":1,"pid":10,"tid":10,"ts":"120.000","cat":"async_task_queue","bp":"e"},
 {"ph":"X","name":"Dequeue@aclnnMm","pid":10,"tid":20,"ts":"130.000","dur":40,"cat":"dequeue"},
 {"ph":"f","name":"enqueue_to_dequeue","id":1,"pid":10,"tid":20,"ts":"130.000","cat":"async_task_queue","bp":"e"},
 {"ph":"X","name":"AscendCL@aclnnMm","pid":11,"tid":20,"ts":"135.000","dur":20.0004,"args":{}},
 {"ph":"s","name":"HostToDevice1","id":"77","pid":11,"tid":20,"ts":"140.000","cat":"HostToDevice"},
 {"ph":"s","name":"HostToDevice2","id":"78","pid":11,"tid":20,"ts":"141.000","cat":"HostToDevice"},
 {"ph":"X","name":"aclnnMm_TransData","pid":12,"tid":5,"ts":"200.001","dur":1.2695,"args":{"Task Type":"AI_CORE"}},
 {"ph":"X","name":"aclnnMm_MatMulV2","pid":12,"tid":5,"ts":"202.000","dur":10,"args":{"Task Type":"AI_CORE"}},
 {"ph":"f","name":"HostToDevice1","id":"77","pid":12,"tid":5,"ts":"200.001","cat":"HostToDevice","bp":"e"},
 {"ph":"f","name":"HostToDevice2","id":"78","pid":12,"tid":5,"ts":"202.000","cat":"HostToDevice","bp":"e"},
 {"ph":"X","name":"aten::add","pid":10,"tid":10,"ts":"300.000","dur":30,"cat":"cpu_op"},
 {"ph":"X","name":"Enqueue","pid":10,"tid":10,"ts":"305.000","dur":2,"cat":"enqueue"},
 {"ph":"s","name":"torch_to_npu","id":99,"pid":10,"tid":10,"ts":"301.000","cat":"async_npu","bp":"e"},
 {"ph":"X","name":"MEMCPY_ASYNC","pid":12,"tid":5,"ts":"400.000","dur":3},
 {"ph":"f","name":"torch_to_npu","id":99,"pid":12,"tid":5,"ts":"400.000","cat":"async_npu","bp":"e"},
 {"ph":"X","name":"AscendCL@aclrtSynchronizeDevice","pid":11,"tid":10,"ts":"500.000","dur":80},
 {"ph":"X","name":"hcom_alltoallv__77_3","pid":13,"tid":1,"ts":"600.5","dur":40},
 {"ph":"X","name":"Notify_Wait","pid":13,"tid":2,"ts":"600.5","dur":1},
 {"ph":"X","name":"Computing","pid":14,"tid":0,"ts":"200.001","dur":1.2695},
 {"ph":"s","name":"orphan","id":5,"pid":10,"tid":10,"ts":"1.000","cat":"async_npu"},
 {"ph":"C","name":"mem","pid":10,"tid":10,"ts":"1.000","args":{"v":1}}
]})";

TEST(TraceView, LaunchGroupsShareOneCorrelation) {
  Rank r;
  ImportTraceView(kSmall, "small.json", &r);
  const Track* main = FindTrack(r, TrackKind::kHostThread, 10);
  const Track* disp = FindTrack(r, TrackKind::kHostThread, 20);
  const Track* stream = FindTrack(r, TrackKind::kDeviceStream, 5);
  ASSERT_TRUE(main && disp && stream);
  EXPECT_EQ(main->role, TrackRole::kHostMain);
  EXPECT_EQ(disp->role, TrackRole::kHostDispatch);
  EXPECT_EQ(r.strings.Get(stream->name), "Stream 5");
  ASSERT_EQ(stream->events.size(), 3u);
  // Enqueue (main) -> Dequeue + AscendCL launch (dispatch) -> two tasks.
  int64_t c = stream->events.correlation[0];
  EXPECT_GE(c, 0);
  EXPECT_EQ(stream->events.correlation[1], c);
  ASSERT_EQ(disp->events.size(), 2u);
  EXPECT_EQ(disp->events.category[0], Category::kLaunch);  // Dequeue
  EXPECT_EQ(disp->events.category[1], Category::kLaunch);  // AscendCL@aclnnMm
  EXPECT_EQ(disp->events.correlation[0], c);
  EXPECT_EQ(disp->events.correlation[1], c);
  EXPECT_EQ(disp->events.dur[1], 20000);  // 20.0004 µs
  // The main thread: step marker, op, enqueue(c), op, enqueue(async_npu), sync.
  ASSERT_EQ(main->events.size(), 6u);
  EXPECT_EQ(main->events.category[0], Category::kMarker);
  EXPECT_EQ(main->events.step[0], 7);
  EXPECT_EQ(main->events.category[2], Category::kLaunch);
  EXPECT_EQ(main->events.correlation[2], c);
  EXPECT_EQ(main->events.dur[2], 5500);
  // The memcpy task joined through async_npu to the Enqueue inside aten::add.
  int64_t c2 = stream->events.correlation[2];
  EXPECT_GE(c2, 0);
  EXPECT_NE(c2, c);
  EXPECT_EQ(main->events.correlation[4], c2);
  EXPECT_EQ(stream->events.category[2], Category::kCopy);
  EXPECT_EQ(main->events.category[5], Category::kSync);
  EXPECT_EQ(main->events.flags[5], kFlagBlocking);
  // Steps through the launch.
  EXPECT_EQ(stream->events.step[0], 7);
  EXPECT_EQ(stream->events.step[2], 7);
  // Exact times.
  EXPECT_EQ(stream->events.ts[0], 200001);
  EXPECT_EQ(stream->events.dur[0] + stream->events.dur[1], 11270);  // 1.2695 + 10, carried
  // HCCL op on the Communication process, sub-task skipped.
  const Track* comm = FindTrack(r, TrackKind::kDeviceStream, 1);
  ASSERT_NE(comm, nullptr);
  EXPECT_EQ(comm->role, TrackRole::kDeviceComm);
  ASSERT_EQ(comm->events.size(), 1u);
  EXPECT_EQ(comm->events.category[0], Category::kCollective);
  EXPECT_EQ(comm->events.ts[0], 600500);
  const CommRecord& rec = comm->comms[comm->events.comm[0]];
  EXPECT_EQ(rec.kind, CollectiveKind::kAllToAllV);
  EXPECT_EQ(r.strings.Get(rec.group), "77");
  EXPECT_EQ(rec.sequence, 3);
  EXPECT_EQ(r.pid, 10);
  // Counted, not dropped.
  EXPECT_EQ(Stat(r, "skipped.hccl.subtask"), 1);
  EXPECT_EQ(Stat(r, "skipped.overlap_analysis"), 1);
  EXPECT_EQ(Stat(r, "skipped.ph_C"), 1);
  EXPECT_EQ(Stat(r, "skipped.flow.async_npu.unmatched_end"), 1);
  EXPECT_EQ(Stat(r, "linked.flow.HostToDevice"), 2);
  EXPECT_EQ(Stat(r, "linked.device_task"), 3);
  EXPECT_EQ(Stat(r, "unlinked.device_task"), 1);  // the HCCL op
  EXPECT_EQ(Stat(r, "read.events"), 30);
  for (const Track& t : r.tracks) EXPECT_TRUE(t.events.IsSortedByTime());
}

TEST(TraceView, OverlapAnalysisScan) {
  auto refs = ScanOverlapAnalysis(kSmall, "small.json", 3);
  ASSERT_EQ(refs.size(), 3u);
  EXPECT_EQ(refs[0].key, "overlap_analysis.computing_us");
  EXPECT_EQ(refs[0].value, 1.2695);
  EXPECT_EQ(refs[0].rank, 3);
  EXPECT_EQ(refs[1].key, "overlap_analysis.computing_segments");
  EXPECT_EQ(refs[1].value, 1);
  EXPECT_EQ(refs[2].key, "overlap_analysis.span_us");
}

// The import's own pass gives the scan's figures exactly, and the same rank.
TEST(TraceView, OverlapAnalysisInTheImportPass) {
  Rank r;
  std::vector<LabeledValue> refs;
  ImportTraceView(kSmall, "small.json", &r, &refs, 3);
  ASSERT_EQ(refs.size(), 3u);
  EXPECT_EQ(refs[0].key, "overlap_analysis.computing_us");
  EXPECT_EQ(refs[0].value, 1.2695);
  EXPECT_EQ(refs[0].rank, 3);
  EXPECT_EQ(refs[1].value, 1);
  EXPECT_EQ(refs[2].key, "overlap_analysis.span_us");
  EXPECT_EQ(refs[2].value, ScanOverlapAnalysis(kSmall, "small.json", 3)[2].value);
  EXPECT_EQ(Stat(r, "skipped.overlap_analysis"), 1);  // the rows are still not imported
}

// A segment with an odd time fails the import asking for the figures, as it
// fails the scan; without the figures asked for it is skipped and counted.
TEST(TraceView, OverlapSegmentWithOddTime) {
  const char* json =
      R"({"traceEvents":[{"ph":"X","name":"Free","pid":9,"tid":0,"ts":"x","dur":1}]})";
  Rank r;
  std::vector<LabeledValue> refs;
  EXPECT_THROW(ScanOverlapAnalysis(json, "o.json", 0), InputError);
  EXPECT_THROW(ImportTraceView(json, "o.json", &r, &refs, 0), InputError);
  Rank plain;
  ImportTraceView(json, "o.json", &plain);
  EXPECT_EQ(Stat(plain, "skipped.event.ts"), 1);
}

TEST(TraceView, BareArrayAndStringIds) {
  Rank r;
  ImportTraceView(R"([{"ph":"X","name":"k","pid":"npu","tid":"stream 7","ts":1.5,"dur":2,"cat":"cpu_op"}])",
                  "a.json", &r);
  ASSERT_EQ(r.tracks.size(), 1u);
  EXPECT_EQ(r.tracks[0].events.ts[0], 1500);
  EXPECT_EQ(r.tracks[0].events.category[0], Category::kHostOp);
}

TEST(TraceView, ClassifiesTasks) {
  EXPECT_EQ(ClassifyAscendTask("hcom_allReduce__1_0", "", ""), Category::kCollective);
  EXPECT_EQ(ClassifyAscendTask("hcom_send__1_0", "", ""), Category::kP2P);
  EXPECT_EQ(ClassifyAscendTask("hcom_receive__1_0", "", ""), Category::kP2P);
  EXPECT_EQ(ClassifyAscendTask("x", "hcom_broadcast_", "HCCL"), Category::kCollective);
  EXPECT_EQ(ClassifyAscendTask("MEMCPY_ASYNC", "Other", ""), Category::kCopy);
  EXPECT_EQ(ClassifyAscendTask("MatMul", "MatMulV2", "AI_CORE"), Category::kCompute);
  EXPECT_EQ(ClassifyAscendTask("Cast", "Cast", "AI_CPU"), Category::kCompute);
  EXPECT_EQ(ClassifyAscendTask("MemSet", "MemSet", "AI_VECTOR_CORE"), Category::kCompute);
  EXPECT_EQ(HcclKind("hcom_alltoallv__3_1"), CollectiveKind::kAllToAllV);
  EXPECT_EQ(HcclKind("hcom_alltoall__3_1"), CollectiveKind::kAllToAll);
  EXPECT_EQ(HcclKind("hcom_reduceScatter__3_1"), CollectiveKind::kReduceScatter);
  EXPECT_EQ(HcclKind("hcom_reduce__3_1"), CollectiveKind::kReduce);
  EXPECT_EQ(HcclKind("hcom_allGather_"), CollectiveKind::kAllGather);
  EXPECT_EQ(HcclKind("hcom_weird__3_1"), CollectiveKind::kOther);
  std::string_view g;
  int64_t seq = -1;
  ASSERT_TRUE(ParseHcclName("hcom_broadcast__501_0@6297232067196334501", &g, &seq));
  EXPECT_EQ(g, "501");
  EXPECT_EQ(seq, 0);
  EXPECT_FALSE(ParseHcclName("Cast66", &g, &seq));
}

// Odd values in a readable document skip their event, counted.
TEST(TraceView, OddValuesAreCountedNotFatal) {
  Rank r;
  ImportTraceView(R"([{"ph":"X","ts":"12a","dur":1,"pid":1,"tid":1},
    {"ph":"X","ts":"1","dur":"slow","pid":1,"tid":1},
    {"ph":"X","ts":"1","pid":1,"tid":1},
    {"ph":"X","ts":"1","dur":"-2","pid":1,"tid":1},
    {"ph":"s","ts":"x","id":1,"pid":1,"tid":1},
    {"ph":5,"name":[1],"cat":{},"ts":"1","dur":1,"pid":1,"tid":1},
    {"ph":"X","name":7,"cat":"cpu_op","ts":"1","dur":"2","pid":1,"tid":1}])", "tv.json", &r);
  EXPECT_EQ(Stat(r, "skipped.event.ts"), 2);
  EXPECT_EQ(Stat(r, "skipped.event.dur"), 2);
  EXPECT_EQ(Stat(r, "skipped.event.no_dur"), 1);
  EXPECT_EQ(Stat(r, "skipped.field.ph"), 1);
  EXPECT_EQ(Stat(r, "skipped.field.name"), 2);
  EXPECT_EQ(Stat(r, "skipped.field.cat"), 1);
  EXPECT_EQ(Stat(r, "skipped.no_phase"), 1);
  EXPECT_EQ(Stat(r, "read.events"), 7);
  EXPECT_EQ(r.EventCount(), 1u);  // the cpu_op without a name
}

TEST(TraceView, BadInputNamesFileAndPosition) {
  Rank r;
  std::string truncated = ErrorOf([&] { ImportTraceView(R"([{"ph":"X","ts":"1","dur":)", "tv.json", &r); });
  EXPECT_EQ(truncated.rfind("tv.json: ", 0), 0u) << truncated;
  EXPECT_NE(truncated.find("malformed JSON"), std::string::npos) << truncated;
  std::string garbage = ErrorOf([&] { ImportTraceView("not json", "tv.json", &r); });
  EXPECT_NE(garbage.find("tv.json: byte 0"), std::string::npos) << garbage;
  EXPECT_NE(garbage.find("malformed JSON"), std::string::npos) << garbage;
  std::string bad_event = ErrorOf([&] { ImportTraceView("[1, 2]", "tv.json", &r); });
  EXPECT_NE(bad_event.find("malformed JSON"), std::string::npos) << bad_event;
  // Found while the text is indexed, before any event is read: a file cut
  // after an event ends where more was expected; an unclosed name, its quote.
  const std::string cut = R"([{"ph":"X","name":"a","ts":"1","dur":"2","pid":1,"tid":1}, )";
  EXPECT_EQ(ErrorOf([&] { ImportTraceView(cut, "tv.json", &r); }).rfind("tv.json: byte 59: ", 0), 0u);
  EXPECT_EQ(cut.size(), 59u);
  EXPECT_EQ(ErrorOf([&] { ImportTraceView(R"([{"ph":"X","name":"a)", "tv.json", &r); }).substr(0, 18),
            "tv.json: byte 18: ");
}

}  // namespace
}  // namespace moetrace
