// The Ascend SQLite DB reader end to end: a known trace written as
// ascend_pytorch_profiler DBs (one per rank directory) reads back equal,
// field by field, and analyses to the same figures; `moetrace analyze` and
// `info` on the real msprof export; a truncated DB exits with code 2.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "analyzer/analyze.h"
#include "formats/ascend_db/db_writer.h"
#include "formats/open_trace.h"
#include "tests/run_command.h"

namespace moetrace::testing {
namespace {

namespace fs = std::filesystem;

Track& Add(Rank& r, TrackKind kind, TrackRole role, const std::string& name, int64_t id) {
  return r.AddTrack(kind, role, name, id);
}

Event Ev(Rank& r, const std::string& name, Category c, TimeNs ts, TimeNs dur) {
  Event e;
  e.name = r.strings.Intern(name);
  e.category = c;
  e.ts = ts;
  e.dur = dur;
  return e;
}

// Rank k of a 3-rank job, two ProfilerStep windows, in the DB vocabulary:
// framework ops and steps (PYTORCH_API), launches and a sync (CANN_API),
// kernels (TASK + COMPUTE_TASK_INFO), HCCL plane tasks (COMMUNICATION_TASK_INFO),
// an all-reduce and a send with a peer (COMMUNICATION_OP), MSTX marks and
// ranges, PTA memory (MEMORY_RECORD).
Rank KnownRank(int32_t k) {
  Rank r;
  r.rank = k;
  r.device_id = 4 + k;
  r.pid = 1000 + k;
  Track* s3 = &Add(r, TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "Stream 3", 3);
  Add(r, TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "Stream 5", 5);
  Add(r, TrackKind::kDeviceStream, TrackRole::kDeviceComm, "HCCL tp_group", -1);
  Add(r, TrackKind::kDeviceStream, TrackRole::kDeviceComm, "HCCL pp_group", -1);
  Add(r, TrackKind::kHostThread, TrackRole::kHostOther, "Thread 9", 9);
  Add(r, TrackKind::kHostThread, TrackRole::kHostMain, "Thread 7", 7);
  Add(r, TrackKind::kCounter, TrackRole::kUnspecified, "PTA allocated", -1).counter =
      CounterKind::kMemAllocated;
  Add(r, TrackKind::kCounter, TrackRole::kUnspecified, "PTA reserved", -1).counter =
      CounterKind::kMemReserved;
  s3 = &r.tracks[0];
  Track& s5 = r.tracks[1];
  Track& tp = r.tracks[2];
  Track& pp = r.tracks[3];
  Track& cann = r.tracks[4];
  Track& main = r.tracks[5];
  const TimeNs base = 1'700'000'000'000'000'000 + k * 1'000;
  for (int32_t s = 1; s <= 2; ++s) {
    TimeNs t0 = base + s * 1'000'000;
    int64_t c_mm = 100 * s + 1, c_ar = 100 * s + 2, c_send = 100 * s + 3;
    Event step = Ev(r, "ProfilerStep#" + std::to_string(s), Category::kMarker, t0, 900'000);
    step.flags = kFlagStepMarker;
    step.step = s;
    main.events.Append(step);
    Event mark = Ev(r, "checkpoint", Category::kMarker, t0 + 50, 0);
    mark.flags = kFlagInstant;
    mark.step = s;
    main.events.Append(mark);
    Event fwd = Ev(r, "forward", Category::kMarker, t0 + 60, 500'000);
    fwd.step = s;
    main.events.Append(fwd);
    Event mm = Ev(r, "aten::mm", Category::kHostOp, t0 + 1'000, 30'000);
    mm.correlation = c_mm;
    mm.step = s;
    main.events.Append(mm);
    Event other = Ev(r, "aten::view", Category::kHostOp, t0 + 40'000, 2'000);
    other.step = s;
    main.events.Append(other);
    // CANN thread: the launch of the MatMul, of the all-reduce, of the send, a sync.
    for (auto [name, corr, at] : {std::tuple{"aclnnMm", c_mm, 5'000}, {"HcclAllReduce", c_ar, 50'000},
                                  {"HcclSend", c_send, 60'000}}) {
      Event l = Ev(r, name, Category::kLaunch, t0 + at, 3'000);
      l.correlation = corr;
      l.step = s;
      cann.events.Append(l);
    }
    Event sync = Ev(r, "aclrtSynchronizeDevice", Category::kSync, t0 + 700'000, 150'000);
    sync.flags = kFlagBlocking;
    sync.step = s;
    cann.events.Append(sync);
    // Device.
    Event mmk = Ev(r, "MatMulV2", Category::kCompute, t0 + 100'000, 200'000 + k * 10'000);
    mmk.correlation = c_mm;
    mmk.step = s;
    s3->events.Append(mmk);
    s3->events.Append(Ev(r, "Add", Category::kCompute, t0 + 320'000, 20'000));
    s5.events.Append(Ev(r, "Notify_Wait", Category::kSync, t0 + 150'000, 10'000));
    Event cp = Ev(r, "Memcpy", Category::kCopy, t0 + 170'000, 30'000);
    cp.bytes = 4096;
    s5.events.Append(cp);
    Event ar = Ev(r, "hcom_allReduce__7_" + std::to_string(s), Category::kCollective, t0 + 250'000,
                  150'000);
    ar.correlation = c_ar;
    ar.step = s;
    ar.bytes = 1 << 20;
    ar.comm = static_cast<int32_t>(tp.comms.size());
    CommRecord rec;
    rec.kind = CollectiveKind::kAllReduce;
    rec.group = r.strings.Intern("tp_group");
    rec.sequence = s;
    rec.bytes = 1 << 20;
    tp.comms.push_back(rec);
    tp.events.Append(ar);
    Event snd = Ev(r, "hcom_send__9_" + std::to_string(s), Category::kP2P, t0 + 420'000, 40'000);
    snd.correlation = c_send;
    snd.step = s;
    snd.bytes = 2048;
    snd.comm = static_cast<int32_t>(pp.comms.size());
    CommRecord p2p;
    p2p.kind = CollectiveKind::kSend;
    p2p.group = r.strings.Intern("pp_group");
    p2p.sequence = s;
    p2p.bytes = 2048;
    p2p.peer = (k + 1) % 3;
    pp.comms.push_back(p2p);
    pp.events.Append(snd);
    for (int i = 0; i < 3; ++i) {
      r.tracks[6].sample_ts.push_back(t0 + i * 100'000);
      r.tracks[6].sample_value.push_back(double((s * 10 + i) << 20));
      r.tracks[7].sample_ts.push_back(t0 + i * 100'000);
      r.tracks[7].sample_value.push_back(double(1 << 30));
    }
  }
  for (Track& t : r.tracks) t.events.SortByTime();
  return r;
}

std::string CommText(const Rank& r, const Track& t, size_t i) {
  if (t.events.comm[i] < 0) return "-";
  const CommRecord& c = t.comms.at(static_cast<size_t>(t.events.comm[i]));
  return std::string(CollectiveKindName(c.kind)) + "/" + std::string(r.strings.Get(c.group)) + "/" +
         std::to_string(c.sequence) + "/" + std::to_string(c.peer) + "/" + std::to_string(c.bytes) +
         "/" + std::to_string(c.group_size);
}

void ExpectSameRank(const Rank& want, const Rank& got) {
  EXPECT_EQ(got.rank, want.rank);
  EXPECT_EQ(got.device_id, want.device_id);
  EXPECT_EQ(got.pid, want.pid);
  ASSERT_EQ(got.tracks.size(), want.tracks.size());
  for (const Track& w : want.tracks) {
    std::string_view name = want.strings.Get(w.name);
    SCOPED_TRACE(std::string(name));
    const Track* g = nullptr;
    for (const Track& t : got.tracks) {
      if (got.strings.Get(t.name) == name) g = &t;
    }
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->kind, w.kind);
    EXPECT_EQ(g->role, w.role);
    EXPECT_EQ(g->counter, w.counter);
    EXPECT_EQ(g->native_id, w.native_id);
    EXPECT_EQ(g->sample_ts, w.sample_ts);
    EXPECT_EQ(g->sample_value, w.sample_value);
    ASSERT_EQ(g->events.size(), w.events.size());
    for (size_t i = 0; i < w.events.size(); ++i) {
      SCOPED_TRACE(i);
      EXPECT_EQ(got.strings.Get(g->events.name[i]), want.strings.Get(w.events.name[i]));
      EXPECT_EQ(g->events.ts[i], w.events.ts[i]);
      EXPECT_EQ(g->events.dur[i], w.events.dur[i]);
      EXPECT_EQ(g->events.category[i], w.events.category[i]);
      EXPECT_EQ(g->events.phase[i], w.events.phase[i]);
      EXPECT_EQ(g->events.flags[i], w.events.flags[i]);
      EXPECT_EQ(g->events.correlation[i], w.events.correlation[i]);
      EXPECT_EQ(g->events.step[i], w.events.step[i]);
      EXPECT_EQ(g->events.micro_batch[i], w.events.micro_batch[i]);
      EXPECT_EQ(g->events.layer[i], w.events.layer[i]);
      EXPECT_EQ(g->events.flops[i], w.events.flops[i]);
      EXPECT_EQ(g->events.bytes[i], w.events.bytes[i]);
      EXPECT_EQ(CommText(got, *g, i), CommText(want, w, i));
    }
  }
}

TEST(AscendDbRoundTrip, KnownTraceReadsBackEqualAndAnalysesTheSame) {
  std::string root = TempDir("ascend_db_roundtrip");
  Trace known;
  known.metadata.source = "ascend";
  for (int32_t k = 0; k < 3; ++k) {
    known.ranks.push_back(KnownRank(k));
    fs::path out = fs::path(root) / ("rank" + std::to_string(k) + "_ascend_pt") / "ASCEND_PROFILER_OUTPUT";
    fs::create_directories(out);
    // File names say nothing of the rank: RANK_DEVICE_MAP does.
    WriteAscendDb(known.ranks.back(), 4 + k, (out / "ascend_pytorch_profiler.db").string());
  }
  ASSERT_EQ(DetectFormat(root), TraceFormat::kAscendDb);
  auto src = OpenTrace(root);
  ASSERT_EQ(src->rank_count(), 3u);
  std::map<std::string, std::string> attrs(src->metadata().attributes.begin(),
                                           src->metadata().attributes.end());
  EXPECT_EQ(attrs["ascend.rank_rule"], "rank_device_map");
  EXPECT_EQ(attrs["ascend.input"], "db");
  Trace back;
  back.metadata.source = "ascend";
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    back.ranks.push_back(src->ReadRank(i));
    ExpectSameRank(known.ranks[i], back.ranks.back());
  }
  // The analyzer's figures: every rank's analysis equal.
  AnalyzeOptions opt;
  opt.threads = 1;
  analysis::Analysis a = Analyze(MemorySource(known), opt);
  analysis::Analysis b = Analyze(MemorySource(back), opt);
  ASSERT_EQ(a.ranks_size(), 3);
  ASSERT_EQ(b.ranks_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_GT(a.ranks(i).breakdown().compute_ns(), 0);
    EXPECT_GT(a.ranks(i).breakdown().comm_ns(), 0);
    EXPECT_EQ(a.ranks(i).steps_size(), 2);
    EXPECT_EQ(a.ranks(i).DebugString(), b.ranks(i).DebugString());
  }
}

// A rank directory holding the DB and the text files: the DB is read, and
// said so; without RANK_DEVICE_MAP the rank id comes from profiler_info.
TEST(AscendDbRoundTrip, DbPreferredToTextFilesAndRankFromProfilerInfo) {
  std::string root = TempDir("ascend_db_both") + "/node1_ascend_pt";
  fs::create_directories(root + "/ASCEND_PROFILER_OUTPUT");
  Rank r = KnownRank(0);
  std::string db = root + "/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler.db";
  WriteAscendDb(r, 4, db);
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h, "DROP TABLE RANK_DEVICE_MAP", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(h);
  std::ofstream(root + "/profiler_info_5.json") << R"({"config": {"common_config": {}}, "rank_id": 5})";
  std::ofstream(root + "/ASCEND_PROFILER_OUTPUT/trace_view.json") << R"({"traceEvents": []})";
  ASSERT_EQ(DetectFormat(root), TraceFormat::kAscendDb);
  auto src = OpenTrace(root);
  std::map<std::string, std::string> attrs(src->metadata().attributes.begin(),
                                           src->metadata().attributes.end());
  EXPECT_EQ(attrs["ascend.input"], "db (text files also present, not read)");
  EXPECT_EQ(attrs["ascend.rank_rule"], "profiler_info_or_file_name");
  ASSERT_EQ(src->rank_count(), 1u);
  Rank back = src->ReadRank(0);
  EXPECT_EQ(back.rank, 5);
  EXPECT_EQ(back.EventCount(), r.EventCount());
  // Without the DB the same directory is the text importer's, as before.
  fs::remove(db);
  EXPECT_EQ(DetectFormat(root), TraceFormat::kAscend);
}

// `moetrace analyze` on the real msprof export: device ops, and the Overlap
// Analysis figures the DB records (python3 sqlite3 on OVERLAP_ANALYSIS:
// Computing 663.872 us in 11 segments, Free 140864.736 us in 11, span
// 141528.608 us).
TEST(AscendDbE2e, AnalyzeMsprofDbMatchesItsOverlapAnalysis) {
  std::string root = RealTracesDir();
  if (root.empty() || !fs::exists(root + "/ascend/msprof-db")) GTEST_SKIP() << "no real traces";
  std::string out = TempDir("ascend_db_analyze") + "/a.json";
  CommandResult r = RunMoetrace("analyze '" + root + "/ascend/msprof-db' --json '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  simdjson::dom::parser p;
  simdjson::dom::element doc = p.parse(ReadFile(out));
  simdjson::dom::element rank2;
  for (simdjson::dom::element rk : doc["ranks"].get_array()) {
    if (int64_t(rk["rank"]) == 2) rank2 = rk;
  }
  ASSERT_EQ(int64_t(rank2["rank"]), 2);
  EXPECT_EQ(int64_t(rank2["event_count"]), 41);
  simdjson::dom::element ov = rank2["ascend"]["overlap_analysis"];
  EXPECT_EQ(int64_t(ov["computing_ns"]), 663'872);
  EXPECT_EQ(int64_t(ov["computing_segments"]), 11);
  EXPECT_EQ(int64_t(ov["free_segments"]), 11);
  // The 51.121 us hcom_allReduce task of stream 8 has no COMMUNICATION_OP
  // row: like the profiler, it is no communication, and stays in Free.
  EXPECT_EQ(int64_t(ov["free_ns"]), 140'864'736);
  EXPECT_EQ(int64_t(ov["communication_not_overlapped_ns"]), 0);
  std::map<std::string, std::pair<double, double>> checks;
  for (simdjson::dom::element c : doc["label_checks"].get_array()) {
    std::string_view key = c["key"];
    if (key.substr(0, 17) == "overlap_analysis.") {
      checks[std::string(key)] = {double(c["expected"]), double(c["actual"])};
    }
  }
  EXPECT_EQ(checks.size(), 5u);
  EXPECT_DOUBLE_EQ(checks["overlap_analysis.computing_us"].first, 663.872);
  EXPECT_DOUBLE_EQ(checks["overlap_analysis.computing_us"].second, 663.872);
  EXPECT_DOUBLE_EQ(checks["overlap_analysis.computing_segments"].second, 11);
  EXPECT_DOUBLE_EQ(checks["overlap_analysis.free_segments"].second, 11);
  EXPECT_DOUBLE_EQ(checks["overlap_analysis.free_us"].first, 140864.736);
  EXPECT_NEAR(checks["overlap_analysis.free_us"].second, 140864.736, 1e-6);
  EXPECT_DOUBLE_EQ(checks["overlap_analysis.span_us"].first, 141528.608);
  EXPECT_DOUBLE_EQ(checks["overlap_analysis.span_us"].second, 141528.608);
}

TEST(AscendDbE2e, InfoSaysTheDbWasRead) {
  std::string root = RealTracesDir();
  if (root.empty() || !fs::exists(root + "/ascend/msprof-db")) GTEST_SKIP() << "no real traces";
  CommandResult r = RunMoetrace("info '" + root + "/ascend/msprof-db'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ascend-db"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ascend.input"), std::string::npos) << r.output;
}

TEST(AscendDbE2e, TruncatedDbExitsWithTwoNamingTheFile) {
  std::string root = RealTracesDir();
  std::string real = root + "/ascend/msprof-db/msprof_0.db";
  if (root.empty() || !fs::exists(real)) GTEST_SKIP() << "no real traces";
  std::string bytes = ReadFile(real);
  std::string cut = TempDir("ascend_db_cut") + "/msprof_0.db";
  std::ofstream(cut, std::ios::binary).write(bytes.data(), 50'000);
  CommandResult r = RunMoetrace("info '" + cut + "'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(cut + ": SQLite: "), std::string::npos) << r.output;
}

}  // namespace
}  // namespace moetrace::testing
