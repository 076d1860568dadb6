#include "formats/chrome/chrome_json_writer.h"

#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "formats/errors.h"
#include "formats/export/track_labels.h"
#include "formats/kineto/kineto_importer.h"
#include "formats/sample_trace.h"
#include "formats/formats_test_util.h"

namespace moetrace {
namespace {

namespace fs = std::filesystem;
using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

std::string CjTempPath(const std::string& name) {
  return (fs::temp_directory_path() /
          ("moetrace_cj_" + std::to_string(getpid()) + "_" + name)).string();
}

std::string WriteTrace(const Trace& t, const std::string& name) {
  const std::string path = CjTempPath(name);
  auto sink = CreateChromeJsonSink(path);
  for (const Rank& r : t.ranks) sink->AddRank(r);
  sink->Finish(t.metadata);
  std::string text = testing_formats::FileBytes(path);
  fs::remove(path);
  return text;
}

class ChromeSampleTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    trace_ = new Trace(MakeSampleTrace(4, 64, 3));
    text_ = new std::string(WriteTrace(*trace_, "sample.json"));
    parser_ = new simdjson::dom::parser();
    doc_ = new element(parser_->parse(*text_));
  }
  static void TearDownTestSuite() {
    delete doc_;
    delete parser_;
    delete text_;
    delete trace_;
  }
  static array Events() { return (*doc_)["traceEvents"].get_array(); }
  static Trace* trace_;
  static std::string* text_;
  static simdjson::dom::parser* parser_;
  static element* doc_;
};
Trace* ChromeSampleTest::trace_ = nullptr;
std::string* ChromeSampleTest::text_ = nullptr;
simdjson::dom::parser* ChromeSampleTest::parser_ = nullptr;
element* ChromeSampleTest::doc_ = nullptr;

TEST_F(ChromeSampleTest, CountsEventsByPhase) {
  std::map<std::string, int> by_ph;
  for (element e : Events()) by_ph[std::string(std::string_view(e["ph"]))]++;
  // Per rank: 192 launches + 192 dequeues + 192 device ops + 28 syncs as X,
  // the zero-length step marker as i, one flow per device op, 2 counters x
  // 192 samples, process name + sort index and 2 M events per thread track.
  // Plus 4 MoE routing instants on their own (named, sorted) thread.
  EXPECT_EQ(by_ph["X"], 4 * (192 * 3 + 28));
  EXPECT_EQ(by_ph["i"], 4 * (1 + 4));
  EXPECT_EQ(by_ph["s"], 4 * 192);
  EXPECT_EQ(by_ph["f"], 4 * 192);
  EXPECT_EQ(by_ph["C"], 4 * 2 * 192);
  EXPECT_EQ(by_ph["M"], 4 * (2 + 6 * 2));
  EXPECT_EQ(by_ph.size(), 6u);
  EXPECT_EQ(std::string_view((*doc_)["displayTimeUnit"]), "ns");
  // Several ranks in one file: no single distributedInfo applies.
  EXPECT_EQ((*doc_)["distributedInfo"].error(), simdjson::NO_SUCH_FIELD);
}

TEST_F(ChromeSampleTest, NamesProcessesAndThreads) {
  std::map<int64_t, std::string> processes;
  std::map<std::pair<int64_t, int64_t>, std::string> threads;
  for (element e : Events()) {
    if (std::string_view(e["ph"]) != "M") continue;
    std::string_view name = e["name"];
    if (name == "process_name") {
      processes[int64_t(e["pid"])] = std::string(std::string_view(e["args"]["name"]));
    } else if (name == "thread_name") {
      threads[{int64_t(e["pid"]), int64_t(e["tid"])}] =
          std::string(std::string_view(e["args"]["name"]));
    }
  }
  EXPECT_EQ(processes.count(0), 0u) << "pid 0 is the idle process in trace processors";
  EXPECT_EQ(processes[3], "rank 2 (node0)");  // pid = rank + 1
  EXPECT_EQ(threads[std::make_pair(int64_t{3}, int64_t{1002})], "python");
  EXPECT_EQ(threads[std::make_pair(int64_t{3}, int64_t{2002})], "dequeue");
  // Stream 0: tid 0 is the idle thread in trace processors, so a synthetic one.
  EXPECT_EQ(threads[std::make_pair(int64_t{3}, int64_t{1'000'000'000})], "NPU stream 0 (compute)");
  EXPECT_EQ(threads[std::make_pair(int64_t{3}, int64_t{1})], "NPU stream 1 (comm: hccl)");
  EXPECT_EQ(threads[std::make_pair(int64_t{3}, int64_t{2})], "NPU stream 2 (copy)");
  EXPECT_EQ(threads[std::make_pair(int64_t{3}, int64_t{1'000'000'001})], "MoE routing");
  EXPECT_EQ(threads.size(), 4u * 6);
}

TEST_F(ChromeSampleTest, FlowsGoFromLastLaunchToDeviceOp) {
  struct End { int64_t pid, tid; double ts; };
  std::map<uint64_t, std::vector<End>> starts, ends;
  for (element e : Events()) {
    std::string_view ph = e["ph"];
    if (ph != "s" && ph != "f") continue;
    EXPECT_EQ(std::string_view(e["cat"]), "ac2g");
    End end{int64_t(e["pid"]), int64_t(e["tid"]), double(e["ts"])};
    if (ph == "s") {
      starts[uint64_t(e["id"])].push_back(end);
    } else {
      EXPECT_EQ(std::string_view(e["bp"]), "e");
      ends[uint64_t(e["id"])].push_back(end);
    }
  }
  ASSERT_EQ(starts.size(), 4u * 192);
  for (const auto& [id, s] : starts) {
    ASSERT_EQ(s.size(), 1u) << id;
    ASSERT_EQ(ends[id].size(), 1u) << id;
    EXPECT_EQ(s[0].pid, ends[id][0].pid);
    EXPECT_EQ(s[0].tid, 2000 + s[0].pid - 1);  // the dequeue ends after the enqueue
    EXPECT_TRUE(ends[id][0].tid <= 2 || ends[id][0].tid == 1'000'000'000);  // a device stream
    EXPECT_LT(s[0].ts, ends[id][0].ts);
  }
}

TEST_F(ChromeSampleTest, ArgsCarryTheModelFields) {
  const Rank& rank = trace_->ranks[1];
  const Track& comm = rank.tracks[3];
  const CommRecord& rec = comm.comms[0];
  bool seen_compute = false, seen_collective = false;
  for (element e : Events()) {
    if (std::string_view(e["ph"]) != "X" || int64_t(e["pid"]) != ExportPid(1)) continue;
    object args = e["args"];
    std::string_view cat = args["category"];
    if (cat == "compute" && !seen_compute) {
      seen_compute = true;
      const Track& s = rank.tracks[2];
      EXPECT_EQ(std::string_view(e["cat"]), "kernel");
      EXPECT_EQ(std::string_view(e["name"]), rank.strings.Get(s.events.name[0]));
      EXPECT_EQ(std::string_view(args["phase"]), "forward");
      EXPECT_EQ(int64_t(args["step"]), 0);
      EXPECT_EQ(int64_t(args["layer"]), s.events.layer[0]);
      EXPECT_EQ(int64_t(args["micro_batch"]), s.events.micro_batch[0]);
      EXPECT_EQ(int64_t(args["correlation"]), s.events.correlation[0]);
      EXPECT_EQ(uint64_t(args["flops"]), s.events.flops[0]);
      EXPECT_EQ(uint64_t(args["bytes"]), s.events.bytes[0]);
      EXPECT_EQ(int64_t(args["device"]), 1);
      EXPECT_EQ(int64_t(args["stream"]), 0);
    }
    if (cat == "collective" && !seen_collective) {
      seen_collective = true;
      EXPECT_EQ(std::string_view(args["comm_kind"]), "all_to_allv");
      EXPECT_EQ(std::string_view(args["comm_class"]), "EP");
      EXPECT_EQ(std::string_view(args["group"]), "ep_group_0");
      EXPECT_EQ(int64_t(args["sequence"]), rec.sequence);
      EXPECT_EQ(int64_t(args["group_size"]), 4);
      EXPECT_EQ(uint64_t(args["comm_bytes"]), rec.bytes);
      array ranks = args["group_ranks"];
      EXPECT_EQ(ranks.size(), 4u);
      array splits = args["send_splits"];
      ASSERT_EQ(splits.size(), 4u);
      EXPECT_EQ(uint64_t(splits.at(2)), comm.Splits(rec.send_splits)[2]);
    }
  }
  EXPECT_TRUE(seen_compute);
  EXPECT_TRUE(seen_collective);
}

TEST_F(ChromeSampleTest, CountersHoldTheSamples) {
  const Track& mem = trace_->ranks[3].tracks[5];
  std::vector<double> values;
  for (element e : Events()) {
    if (std::string_view(e["ph"]) != "C" || int64_t(e["pid"]) != ExportPid(3)) continue;
    if (std::string_view(e["name"]) != "mem.allocated") continue;
    values.push_back(double(e["args"]["bytes"]));
  }
  EXPECT_EQ(values, mem.sample_value);
}

TEST_F(ChromeSampleTest, RoutingRecordsCarryTokenCounts) {
  const Rank& rank = trace_->ranks[2];
  std::vector<std::vector<int64_t>> tokens;
  for (element e : Events()) {
    std::string_view cat;
    if (e["cat"].get(cat) != simdjson::SUCCESS || cat != "moe_routing") continue;
    if (int64_t(e["pid"]) != ExportPid(2)) continue;
    std::vector<int64_t> v;
    for (element x : e["args"]["tokens_per_expert"].get_array()) v.push_back(int64_t(x));
    tokens.push_back(v);
    EXPECT_EQ(std::string_view(e["name"]), "routing layer " + std::to_string(tokens.size() - 1));
  }
  ASSERT_EQ(tokens.size(), rank.routing.size());
  for (size_t i = 0; i < tokens.size(); ++i) EXPECT_EQ(tokens[i], rank.routing[i].tokens_per_expert);
}

TEST_F(ChromeSampleTest, OtherDataKeepsTheMetadata) {
  object other = (*doc_)["otherData"];
  EXPECT_EQ(std::string_view(other["source"]), "sample");
  EXPECT_EQ(std::string_view(other["device"]), "Ascend 910B");
  EXPECT_EQ(int64_t(other["layout"]["world_size"]), 4);
  EXPECT_EQ(int64_t(other["ranks"]), 4);
  EXPECT_EQ(std::string_view(other["config_json"]), trace_->metadata.config_json);
  EXPECT_EQ(std::string_view(other["attributes"]["generator"]), "sample");
  array gt = other["ground_truth"];
  EXPECT_EQ(gt.size(), trace_->metadata.ground_truth.size());
  EXPECT_EQ(double(gt.at(2)["value"]), 12346.0);  // rank 0 total, rank 0 EP, rank 1 total
}

TEST(ChromeJsonWriter, TimestampsAreExactMicroseconds) {
  Trace t;
  Rank& r = t.ranks.emplace_back();
  r.rank = 7;
  Track& h = r.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "main", 42);
  h.events.Append({.ts = 1700000000000001234, .dur = 1, .name = r.strings.Intern("a"),
                   .category = Category::kHostOp});
  h.events.Append({.ts = 1700000000000002000, .dur = 999999, .name = r.strings.Intern("b"),
                   .category = Category::kHostOp});
  std::string text = WriteTrace(t, "ts.json");
  EXPECT_NE(text.find("\"ts\":1700000000000001.234,\"dur\":0.001,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"ts\":1700000000000002.000,\"dur\":999.999,"), std::string::npos);
  simdjson::dom::parser parser;
  element doc = parser.parse(text);
  EXPECT_EQ(int64_t(doc["distributedInfo"]["rank"]), 7);
  // Before the events, where Kineto readers look for it.
  EXPECT_EQ(text.rfind("{\"distributedInfo\":{\"rank\": 7, \"world_size\": 1},", 0), 0u) << text;
}

TEST(ChromeJsonWriter, InputShapesAreAStringArg) {
  Trace t;
  Rank& r = t.ranks.emplace_back();
  Track& d = r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "stream 7", 7);
  d.events.Append({.ts = 1000, .dur = 1000, .name = r.strings.Intern("MatMulV2"),
                   .category = Category::kCompute, .shape = r.strings.Intern("8192,512;512")});
  d.events.Append({.ts = 3000, .dur = 1000, .name = r.strings.Intern("Cast"),
                   .category = Category::kCompute});
  std::string text = WriteTrace(t, "shapes.json");
  simdjson::dom::parser parser;
  element doc = parser.parse(text);
  std::map<std::string, std::string> shapes;
  for (element e : doc["traceEvents"].get_array()) {
    std::string_view name, shape;
    if (e["name"].get(name) || e["ph"].get_string().value() != "X") continue;
    shapes[std::string(name)] = e["args"]["input_shapes"].get(shape) ? "(none)" : std::string(shape);
  }
  EXPECT_EQ(shapes["MatMulV2"], "8192,512;512");
  EXPECT_EQ(shapes["Cast"], "(none)");
}

TEST(ChromeJsonWriter, EscapesHostileNames) {
  const std::string hostile = std::string("<script>alert(\"x\")</script> C:\\dir\nline2 ") +
                              '\x01' + " bad\xff" + " ok\xC3\xA9";
  Trace t;
  Rank& r = t.ranks.emplace_back();
  r.host = "host\"1";
  Track& h = r.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "thread\t\\", 3);
  h.events.Append({.ts = 1000, .dur = 5, .name = r.strings.Intern(hostile),
                   .category = Category::kHostOp});
  std::string text = WriteTrace(t, "escape.json");
  EXPECT_EQ(text.find("<script>"), std::string::npos);
  EXPECT_EQ(text.find('\x01'), std::string::npos);
  EXPECT_NE(text.find("\\u0001"), std::string::npos);
  simdjson::dom::parser parser;
  element doc = parser.parse(text);
  std::set<std::string> names;
  for (element e : doc["traceEvents"].get_array()) {
    std::string_view ph = e["ph"];
    if (ph == "X") names.insert(std::string(std::string_view(e["name"])));
    if (ph == "M" && std::string_view(e["name"]).ends_with("_name")) {
      names.insert(std::string(std::string_view(e["args"]["name"])));
    }
  }
  const std::string expected = std::string("<script>alert(\"x\")</script> C:\\dir\nline2 ") +
                               '\x01' + " bad\xEF\xBF\xBD ok\xC3\xA9";
  EXPECT_EQ(names, (std::set<std::string>{expected, "rank 0 (host\"1)", "thread\t\\"}));
}

TEST(ChromeJsonWriter, CollidingOrMissingTidsGetDistinctOnes) {
  Trace t;
  Rank& r = t.ranks.emplace_back();
  r.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "host", 1);
  r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "stream 1", 1);
  r.AddTrack(TrackKind::kHostThread, TrackRole::kHostOther, "anon", -1);
  r.AddTrack(TrackKind::kHostThread, TrackRole::kHostOther, "zero", 0);
  std::string text = WriteTrace(t, "tids.json");
  simdjson::dom::parser parser;
  element doc = parser.parse(text);
  std::map<std::string, int64_t> tid;
  for (element e : doc["traceEvents"].get_array()) {
    if (std::string_view(e["name"]) == "thread_name") {
      tid[std::string(std::string_view(e["args"]["name"]))] = int64_t(e["tid"]);
    }
  }
  EXPECT_EQ(tid["host"], 1);
  EXPECT_EQ(tid["NPU stream 1 (compute)"], 1'000'000'000);
  EXPECT_EQ(tid["anon"], 2);  // its index
  EXPECT_EQ(tid["zero"], 1'000'000'001);
}

TEST(ChromeJsonWriter, DeviceStreamsSortBelowHostThreads) {
  Trace t;
  Rank& r = t.ranks.emplace_back();
  r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "stream 4", 4);
  r.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "main", 10);
  std::string text = WriteTrace(t, "sort.json");
  simdjson::dom::parser parser;
  element doc = parser.parse(text);
  std::map<int64_t, int64_t> sort_index;  // by tid
  for (element e : doc["traceEvents"].get_array()) {
    if (std::string_view(e["name"]) == "thread_sort_index") {
      sort_index[int64_t(e["tid"])] = int64_t(e["args"]["sort_index"]);
    }
  }
  ASSERT_EQ(sort_index.size(), 2u);
  EXPECT_LT(sort_index[10], sort_index[4]);
}

// Corrupt in-memory ranks (ids out of range, mismatched counter columns,
// negative durations, NaN samples) still give valid JSON.
TEST(ChromeJsonWriter, SurvivesInconsistentRanks) {
  Trace t;
  Rank& r = t.ranks.emplace_back();
  Track& s = r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "stream 1", 1);
  s.events.Append({.ts = 10, .dur = -5, .name = 999, .category = Category::kCollective,
                   .comm = 7});
  Track& c = r.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "mem");
  c.sample_ts = {1, 2, 3};
  c.sample_value = {std::nan(""), 4.5};
  std::string text = WriteTrace(t, "corrupt.json");
  simdjson::dom::parser parser;
  element doc = parser.parse(text);
  std::map<std::string, int> by_ph;
  for (element e : doc["traceEvents"].get_array()) by_ph[std::string(std::string_view(e["ph"]))]++;
  EXPECT_EQ(by_ph["i"], 1);  // negative duration: an instant
  EXPECT_EQ(by_ph["C"], 2);  // only complete samples
  EXPECT_NE(text.find("\"name\":\"\""), std::string::npos);  // unknown name id -> ""
}

// What we write reads back through our own Kineto importer: same rank, same
// events per thread / stream, exact nanosecond times, launches linked.
TEST(ChromeJsonWriter, ReadsBackThroughTheKinetoImporter) {
  Trace t = MakeSampleTrace(1, 16, 5);
  t.ranks[0].rank = 6;
  const Rank& want = t.ranks[0];
  Rank got = ImportKinetoJson(WriteTrace(t, "kineto.json"), "kineto.json");
  EXPECT_EQ(got.rank, 6);
  size_t matched = 0;
  for (const Track& w : want.tracks) {
    if (w.kind == TrackKind::kCounter) continue;  // Kineto keeps memory as [memory] events
    for (const Track& g : got.tracks) {
      if (g.kind != w.kind || g.native_id != w.native_id) continue;
      ++matched;
      ASSERT_EQ(g.events.size(), w.events.size()) << want.strings.Get(w.name);
      EXPECT_EQ(g.events.ts, w.events.ts);
      EXPECT_EQ(g.events.dur, w.events.dur);
      EXPECT_EQ(g.events.correlation, w.events.correlation);
      for (size_t i = 0; i < w.events.size(); ++i) {
        EXPECT_EQ(got.strings.Get(g.events.name[i]), want.strings.Get(w.events.name[i]));
      }
    }
  }
  EXPECT_EQ(matched, 5u);
}

// A file of several ranks is for viewing: read back, its ranks' processes
// would make one rank of many threads and streams, so the importer refuses
// it (the one-rank files of `convert -o DIR/` read back as above).
TEST(ChromeJsonWriter, ManyRanksInOneFileAreNotReadBack) {
  const std::string text = WriteTrace(MakeSampleTrace(3, 16, 5), "three.json");
  try {
    ImportKinetoJson(text, "three.json");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "three.json: a Chrome JSON of 3 ranks written by `moetrace convert`, for viewing only: analyze "
              "the trace it came from, or convert that to .mtrace or to DIR/ (a file per rank)");
  }
}

TEST(ChromeJsonWriter, NothingIsLeftOnDiskWithoutFinish) {
  const std::string path = CjTempPath("abandoned.json");
  {
    auto sink = CreateChromeJsonSink(path);
    sink->AddRank(MakeSampleTrace(1, 4).ranks[0]);
  }
  EXPECT_FALSE(fs::exists(path));
  for (const auto& entry : fs::directory_iterator(fs::path(path).parent_path())) {
    EXPECT_EQ(entry.path().filename().string().rfind(fs::path(path).filename().string(), 0),
              std::string::npos)
        << entry.path();
  }
}

TEST(ChromeJsonWriter, UnwritablePathThrowsInputError) {
  EXPECT_THROW(CreateChromeJsonSink("/nonexistent-dir/x.json"), InputError);
}

}  // namespace
}  // namespace moetrace
