// The importer over the real torch_npu traces in ../shared/traces/ascend.
// Every expected count is made here from the raw file, independently of the
// importer (simdjson DOM for JSON, line scanning for CSV, long double times).
#include <simdjson.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "formats/ascend/ascend_importer.h"
#include "formats/ascend/trace_view.h"
#include "formats/real_traces_dir.h"
#include "formats/formats_test_util.h"

namespace moetrace {
namespace {

namespace fs = std::filesystem;

#define REQUIRE_PATH(p)                                                       \
  do {                                                                        \
    if (!fs::exists(p)) GTEST_SKIP() << "real trace absent (set MOETRACE_REAL_TRACES): " << (p); \
  } while (0)

// µs decimal text -> ns, through long double (64-bit mantissa: exact enough
// to compare, and not the importer's parser).
int64_t RawNs(std::string_view s) {
  std::string t(s);
  return static_cast<int64_t>(std::llroundl(std::strtold(t.c_str(), nullptr) * 1000.0L));
}

int64_t RawNsOf(simdjson::dom::element e) {
  std::string_view s;
  if (e.get_string().get(s) == simdjson::SUCCESS) return RawNs(s);
  double d = e.get_double();
  return static_cast<int64_t>(std::llround(d * 1000.0));
}

const LabeledValue* FindRef(const Metadata& md, int32_t rank, std::string_view key) {
  for (const auto& r : md.reference) {
    if (r.rank == rank && r.key == key) return &r;
  }
  return nullptr;
}

using testing_formats::Stat;

struct RawX {
  std::string name, cat;
  int64_t pid, tid, ts, end;
};

// Length of the union of intervals.
int64_t UnionLength(std::vector<std::pair<int64_t, int64_t>> v, int64_t* pieces = nullptr) {
  std::sort(v.begin(), v.end());
  int64_t total = 0, n = 0;
  int64_t cs = 0, ce = INT64_MIN;
  for (auto [s, e] : v) {
    if (s > ce) {
      if (ce != INT64_MIN) {
        total += ce - cs;
        ++n;
      }
      cs = s;
      ce = e;
    } else {
      ce = std::max(ce, e);
    }
  }
  if (ce != INT64_MIN) {
    total += ce - cs;
    ++n;
  }
  if (pieces) *pieces = n;
  return total;
}

class AdvisorTimeline : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = RealTracesRoot() + "/ascend/advisor-timeline";
    REQUIRE_PATH(dir_);
    auto src = OpenAscend(dir_);
    trace_ = ReadAll(*src);
    ASSERT_EQ(trace_.ranks.size(), 1u);
    // Raw file, DOM (fine for a test over a 600 KB file).
    simdjson::dom::element root = parser_.load(dir_ + "/ASCEND_PROFILER_OUTPUT/trace_view.json");
    std::map<int64_t, std::string> proc;
    for (simdjson::dom::element e : root.get_array()) {
      std::string_view ph = e["ph"];
      if (ph == "M" && std::string_view(e["name"]) == "process_name") {
        proc[int64_t(e["pid"])] = std::string(std::string_view(e["args"]["name"]));
      }
    }
    for (simdjson::dom::element e : root.get_array()) {
      std::string_view ph = e["ph"];
      std::string_view cat;
      if (e["cat"].get(cat) != simdjson::SUCCESS) cat = {};
      int64_t pid = e["pid"], tid = e["tid"];
      std::string p = proc[pid];
      if (ph == "X") {
        int64_t ts = RawNsOf(e["ts"]);
        RawX x{std::string(std::string_view(e["name"])), std::string(cat), pid, tid, ts,
               ts + RawNsOf(e["dur"])};
        by_process_[p].push_back(x);
      } else if (ph == "s" || ph == "f") {
        std::string id;
        int64_t n = 0;
        std::string_view s;
        if (e["id"].get(s) == simdjson::SUCCESS) id = s;
        else if (e["id"].get(n) == simdjson::SUCCESS) id = std::to_string(n);
        else id = std::to_string(uint64_t(e["id"]));
        auto& f = flows_[std::string(cat)][id];
        (ph == "s" ? f.first : f.second) = std::make_pair(tid, RawNsOf(e["ts"]));
      }
    }
  }

  // Latest-starting raw X of `process` on `tid` enclosing `t`.
  const RawX* Enclosing(const std::string& process, int64_t tid, int64_t t,
                        std::string_view cat = {}) const {
    const RawX* best = nullptr;
    for (const RawX& x : by_process_.at(process)) {
      if (x.tid == tid && x.ts <= t && t <= x.end && (cat.empty() || x.cat == cat) &&
          (!best || x.ts > best->ts)) {
        best = &x;
      }
    }
    return best;
  }

  const Track* FindTrack(TrackKind kind, int64_t native) const {
    for (const Track& t : trace_.ranks[0].tracks) {
      if (t.kind == kind && t.native_id == native) return &t;
    }
    return nullptr;
  }
  // Index of the event on `track` starting at `ts` named `name`.
  long EventAt(const Track& t, int64_t ts, std::string_view name) const {
    for (size_t i = 0; i < t.events.size(); ++i) {
      if (t.events.ts[i] == ts && trace_.ranks[0].strings.Get(t.events.name[i]) == name) {
        return static_cast<long>(i);
      }
    }
    return -1;
  }

  std::string dir_;
  Trace trace_;
  simdjson::dom::parser parser_;
  std::map<std::string, std::vector<RawX>> by_process_;
  // cat -> id -> ((tid, ts) of s, (tid, ts) of f)
  std::map<std::string, std::map<std::string, std::pair<std::pair<int64_t, int64_t>,
                                                       std::pair<int64_t, int64_t>>>> flows_;
};

TEST_F(AdvisorTimeline, EventsPerCategoryMatchTheRawFile) {
  const Rank& r = trace_.ranks[0];
  std::map<Category, int64_t> got;
  int64_t device = 0;
  for (const Track& t : r.tracks) {
    for (Category c : t.events.category) ++got[c];
    if (t.kind == TrackKind::kDeviceStream) device += t.events.size();
  }
  // Raw counts.
  const auto& hw = by_process_.at("Ascend Hardware");
  int64_t copies = std::count_if(hw.begin(), hw.end(),
                                 [](const RawX& x) { return x.name.find("MEMCPY") != std::string::npos; });
  int64_t cpu_op = 0, steps = 0, enqueue = 0, dequeue = 0;
  for (const RawX& x : by_process_.at("Python")) {
    if (x.name.rfind("ProfilerStep#", 0) == 0) ++steps;
    else if (x.cat == "cpu_op") ++cpu_op;
    enqueue += x.cat == "enqueue";
    dequeue += x.cat == "dequeue";
  }
  std::set<const RawX*> launches;
  for (auto& [id, sf] : flows_.at("HostToDevice")) {
    const RawX* l = Enclosing("CANN", sf.first.first, sf.first.second);
    ASSERT_NE(l, nullptr);
    launches.insert(l);
  }
  int64_t syncs = 0, cann = 0;
  for (const RawX& x : by_process_.at("CANN")) {
    ++cann;
    bool launch = launches.count(&x) > 0;
    bool sync = x.name.find("aclrtSynchronize") != std::string::npos ||
                (x.name.find("aclrtMemcpy") != std::string::npos &&
                 x.name.find("Async") == std::string::npos);
    if (!launch && sync) ++syncs;
  }
  EXPECT_EQ(hw.size(), 276u);
  EXPECT_EQ(device, 276);
  EXPECT_EQ(got[Category::kCopy], copies);
  EXPECT_EQ(copies, 2);
  EXPECT_EQ(got[Category::kCompute], static_cast<int64_t>(hw.size()) - copies);
  EXPECT_EQ(got[Category::kCollective] + got[Category::kP2P], 0);
  EXPECT_EQ(got[Category::kMarker], steps);
  EXPECT_EQ(steps, 1);
  EXPECT_EQ(got[Category::kLaunch], enqueue + dequeue + static_cast<int64_t>(launches.size()));
  EXPECT_EQ(launches.size(), 146u);
  EXPECT_EQ(got[Category::kSync], syncs);
  EXPECT_EQ(got[Category::kHostOp], cpu_op + cann - static_cast<int64_t>(launches.size()) - syncs);
  // Nothing dropped silently.
  EXPECT_EQ(Stat(r, "read.device.task"), 276);
  EXPECT_EQ(Stat(r, "skipped.overlap_analysis"),
            static_cast<int64_t>(by_process_.at("Overlap Analysis").size()));
  EXPECT_EQ(Stat(r, "read.python.cpu_op"), cpu_op + steps);
  EXPECT_EQ(Stat(r, "read.cann.api"), cann);
  EXPECT_EQ(Stat(r, "skipped.flow.fwdbwd.not_represented"),
            static_cast<int64_t>(flows_.at("fwdbwd").size()));
  EXPECT_EQ(r.pid, 437675);
}

TEST_F(AdvisorTimeline, LaunchesJoinDeviceTasksAsTheFlowsAllow) {
  const Rank& r = trace_.ranks[0];
  // Every HostToDevice flow: the task and the launch carry one correlation.
  std::set<std::pair<int64_t, int64_t>> flow_tasks;
  for (auto& [id, sf] : flows_.at("HostToDevice")) {
    const RawX* l = Enclosing("CANN", sf.first.first, sf.first.second);
    const RawX* task = Enclosing("Ascend Hardware", sf.second.first, sf.second.second);
    ASSERT_NE(task, nullptr);
    flow_tasks.insert({task->tid, task->ts});
    const Track* ht = FindTrack(TrackKind::kHostThread, l->tid);
    const Track* dt = FindTrack(TrackKind::kDeviceStream, task->tid);
    ASSERT_TRUE(ht && dt);
    long hi = EventAt(*ht, l->ts, l->name);
    long di = EventAt(*dt, task->ts, task->name);
    ASSERT_GE(hi, 0);
    ASSERT_GE(di, 0);
    EXPECT_EQ(ht->events.category[hi], Category::kLaunch);
    EXPECT_GE(dt->events.correlation[di], 0);
    EXPECT_EQ(ht->events.correlation[hi], dt->events.correlation[di]) << task->name;
  }
  // The enqueue feeding the dequeue that made a launch shares its correlation.
  int64_t chained = 0;
  for (auto& [id, sf] : flows_.at("async_task_queue")) {
    const RawX* enq = Enclosing("Python", sf.first.first, sf.first.second, "enqueue");
    const RawX* deq = Enclosing("Python", sf.second.first, sf.second.second, "dequeue");
    ASSERT_TRUE(enq && deq);
    const Track* et = FindTrack(TrackKind::kHostThread, enq->tid);
    const Track* dt = FindTrack(TrackKind::kHostThread, deq->tid);
    long ei = EventAt(*et, enq->ts, enq->name);
    long di = EventAt(*dt, deq->ts, deq->name);
    ASSERT_TRUE(ei >= 0 && di >= 0);
    EXPECT_EQ(et->events.category[ei], Category::kLaunch);
    EXPECT_EQ(dt->events.category[di], Category::kLaunch);
    EXPECT_EQ(et->events.correlation[ei], dt->events.correlation[di]);
    bool has_launch = false;
    for (auto& [hid, hsf] : flows_.at("HostToDevice")) {
      if (hsf.first.first == deq->tid && deq->ts <= hsf.first.second && hsf.first.second <= deq->end) {
        has_launch = true;
      }
    }
    if (has_launch) {
      ++chained;
      EXPECT_GE(et->events.correlation[ei], 0);
    }
  }
  EXPECT_EQ(chained, 146);
  // Linked device tasks: at least as many as the flows allow; each has a launch.
  std::set<int64_t> launch_corr;
  int64_t linked = 0;
  for (const Track& t : r.tracks) {
    for (size_t i = 0; i < t.events.size(); ++i) {
      if (t.kind == TrackKind::kHostThread && t.events.category[i] == Category::kLaunch) {
        launch_corr.insert(t.events.correlation[i]);
      }
    }
  }
  for (const Track& t : r.tracks) {
    if (t.kind != TrackKind::kDeviceStream) continue;
    for (int64_t c : t.events.correlation) {
      if (c < 0) continue;
      ++linked;
      EXPECT_TRUE(launch_corr.count(c)) << c;
    }
  }
  EXPECT_GE(linked, static_cast<int64_t>(flow_tasks.size()));
  EXPECT_EQ(flow_tasks.size(), 274u);
  EXPECT_EQ(Stat(r, "linked.device_task"), linked);
}

TEST_F(AdvisorTimeline, StepMarkerAndStepsOnDeviceOps) {
  const RawX* step = nullptr;
  for (const RawX& x : by_process_.at("Python")) {
    if (x.name == "ProfilerStep#1") step = &x;
  }
  ASSERT_NE(step, nullptr);
  const Track* main = FindTrack(TrackKind::kHostThread, step->tid);
  ASSERT_NE(main, nullptr);
  long i = EventAt(*main, step->ts, "ProfilerStep#1");
  ASSERT_GE(i, 0);
  EXPECT_EQ(main->events.category[i], Category::kMarker);
  EXPECT_EQ(main->events.flags[i] & kFlagStepMarker, kFlagStepMarker);
  EXPECT_EQ(main->events.step[i], 1);
  EXPECT_EQ(main->events.End(i), step->end);
  EXPECT_EQ(main->role, TrackRole::kHostMain);
  // A device op is in step 1 when its launch group started inside the marker.
  int64_t in_step = 0, linked = 0;
  for (const Track& t : trace_.ranks[0].tracks) {
    if (t.kind != TrackKind::kDeviceStream) continue;
    for (size_t k = 0; k < t.events.size(); ++k) {
      if (t.events.correlation[k] < 0) continue;
      ++linked;
      in_step += t.events.step[k] == 1;
    }
  }
  // Launches of this trace before ProfilerStep#1 begins: none of the Enqueue /
  // AscendCL launches precede the marker's start in the raw file?
  int64_t before = 0;
  for (auto& [id, sf] : flows_.at("HostToDevice")) {
    if (sf.first.second < step->ts || sf.first.second > step->end) ++before;
  }
  EXPECT_EQ(in_step, linked - before);
}

TEST_F(AdvisorTimeline, OverlapAnalysisIsKeptAndRecomputedFromDeviceTasks) {
  const Metadata& md = trace_.metadata;
  EXPECT_EQ(md.source, "ascend");
  const LabeledValue* computing = FindRef(md, 0, "overlap_analysis.computing_us");
  const LabeledValue* free = FindRef(md, 0, "overlap_analysis.free_us");
  ASSERT_TRUE(computing && free);
  EXPECT_NEAR(computing->value, 1788.25, 0.01);
  EXPECT_NEAR(free->value, 9481.67, 0.01);
  EXPECT_EQ(FindRef(md, 0, "overlap_analysis.computing_segments")->value, 274);
  EXPECT_EQ(FindRef(md, 0, "overlap_analysis.free_segments")->value, 273);
  EXPECT_EQ(FindRef(md, 0, "overlap_analysis.communication_us"), nullptr);

  // Recompute from the imported device tasks.
  std::vector<std::pair<int64_t, int64_t>> busy, all;
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const Track& t : trace_.ranks[0].tracks) {
    if (t.kind != TrackKind::kDeviceStream) continue;
    for (size_t i = 0; i < t.events.size(); ++i) {
      first = std::min(first, t.events.ts[i]);
      last = std::max(last, t.events.End(i));
      all.emplace_back(t.events.ts[i], t.events.End(i));
      Category c = t.events.category[i];
      if (c == Category::kCompute || c == Category::kCollective || c == Category::kP2P) {
        busy.emplace_back(t.events.ts[i], t.events.End(i));
      }
    }
  }
  // The device span, exact to the ns. (The traces README quotes the end as
  // ...174.2; the file's last task ends at ...172.701 + 1.42 = ...174.121.)
  EXPECT_EQ(first, 1704161511422904204);
  EXPECT_EQ(last, 1704161511434174121);
  int64_t pieces = 0;
  int64_t computing_ns = UnionLength(busy, &pieces);
  int64_t free_ns = (last - first) - computing_ns;
  EXPECT_NEAR(computing_ns / 1000.0, 1788.25, 0.01);
  EXPECT_NEAR(free_ns / 1000.0, 9481.67, 0.01);
  EXPECT_NEAR(computing_ns / 1000.0, computing->value, 0.01);
  EXPECT_NEAR(free_ns / 1000.0, free->value, 0.01);
  EXPECT_EQ(pieces, 274);
  // The profiler's Free counts copies (MEMCPY_ASYNC, 1.11 + 1.08 µs) as free;
  // METRICS.md's free_ns does not: they differ by exactly the exposed copy time.
  int64_t metrics_free = (last - first) - UnionLength(all);
  EXPECT_EQ(free_ns - metrics_free, 2190);
}

// A single rank's trace_view.json is imported by the open (one parse for
// the rank and its Overlap Analysis figures); the first read hands that
// import over, a second read imports again: the same rank, the same figures.
TEST_F(AdvisorTimeline, TheOpensImportIsTheRankAndGivesTheScansFigures) {
  auto src = OpenAscend(dir_);
  const Rank first = src->ReadRank(0);
  const Rank again = src->ReadRank(0);
  EXPECT_EQ(first.rank, 0);
  EXPECT_EQ(first.import_stats, again.import_stats);
  ASSERT_EQ(first.tracks.size(), again.tracks.size());
  ASSERT_EQ(first.tracks.size(), trace_.ranks[0].tracks.size());
  for (size_t t = 0; t < first.tracks.size(); ++t) {
    EXPECT_EQ(first.tracks[t].name, again.tracks[t].name);
    EXPECT_EQ(first.tracks[t].events.ts, again.tracks[t].events.ts);
    EXPECT_EQ(first.tracks[t].events.dur, again.tracks[t].events.dur);
    EXPECT_EQ(first.tracks[t].events.correlation, again.tracks[t].events.correlation);
  }
  EXPECT_EQ(first.strings.size(), again.strings.size());
  const auto scan =
      ScanOverlapAnalysisFile(dir_ + "/ASCEND_PROFILER_OUTPUT/trace_view.json", 0);
  std::vector<LabeledValue> overlap;
  for (const LabeledValue& l : src->metadata().reference) {
    if (l.key.rfind("overlap_analysis.", 0) == 0) overlap.push_back(l);
  }
  ASSERT_EQ(overlap.size(), 5u);  // computing and free: _us, _segments; span_us
  ASSERT_EQ(overlap.size(), scan.size());
  for (size_t i = 0; i < scan.size(); ++i) {
    EXPECT_EQ(overlap[i].key, scan[i].key);
    EXPECT_EQ(overlap[i].value, scan[i].value);
    EXPECT_EQ(overlap[i].rank, scan[i].rank);
  }
}

TEST(AscendRealTraces, KernelDetailsWithHcclHasTheBroadcastAsACollective) {
  std::string path = RealTracesRoot() + "/ascend/kernel_details-with-hccl.csv";
  REQUIRE_PATH(path);
  ASSERT_TRUE(LooksLikeAscend(path));
  Trace t = ReadAll(*OpenAscend(path));
  ASSERT_EQ(t.ranks.size(), 1u);
  const Rank& r = t.ranks[0];
  // Raw count: data lines and HCCL lines (no quoted newlines in this file).
  std::ifstream in(path);
  std::string line;
  int64_t rows = -1, hccl = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line == "\r") continue;
    ++rows;
    hccl += line.find(",HCCL,") != std::string::npos;
  }
  std::map<Category, int64_t> got;
  for (const Track& tr : r.tracks) {
    EXPECT_EQ(tr.kind, TrackKind::kDeviceStream);
    EXPECT_TRUE(tr.events.IsSortedByTime());
    for (Category c : tr.events.category) ++got[c];
  }
  EXPECT_EQ(rows, 591);
  EXPECT_EQ(got[Category::kCollective], hccl);
  EXPECT_EQ(hccl, 19);
  EXPECT_EQ(got[Category::kCompute], rows - hccl);
  EXPECT_EQ(static_cast<int64_t>(r.EventCount()), rows);
  // The 309 ms broadcast.
  bool found = false;
  for (const Track& tr : r.tracks) {
    for (size_t i = 0; i < tr.events.size(); ++i) {
      if (r.strings.Get(tr.events.name[i]) != "hcom_broadcast__445_0") continue;
      found = true;
      EXPECT_EQ(tr.events.category[i], Category::kCollective);
      EXPECT_EQ(tr.events.ts[i], 1699529622793969500);
      EXPECT_EQ(tr.events.dur[i], 308926680);
      EXPECT_EQ(tr.events.step[i], 1);
      EXPECT_EQ(tr.role, TrackRole::kDeviceComm);
      ASSERT_GE(tr.events.comm[i], 0);
      const CommRecord& c = tr.comms[tr.events.comm[i]];
      EXPECT_EQ(c.kind, CollectiveKind::kBroadcast);
      EXPECT_EQ(r.strings.Get(c.group), "445");
      EXPECT_EQ(c.sequence, 0);
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(Stat(r, "read.kernel_details.row"), rows);
  // Input Shapes (python3's csv module: 425 of the 591 rows have shapes;
  // 122 are "" and 44 "N/A", the HCCL rows among them). The first row's
  // field is """544404480""": the shapes inside msprof's quotes.
  EXPECT_EQ(Stat(r, "read.kernel_details.input_shapes"), 425);
  for (const Track& tr : r.tracks) {
    for (size_t i = 0; i < tr.events.size(); ++i) {
      const std::string_view name = r.strings.Get(tr.events.name[i]);
      if (name == "ZerosLike46") EXPECT_EQ(r.strings.Get(tr.events.ShapeAt(i)), "544404480");
      if (name.starts_with("hcom_")) EXPECT_EQ(tr.events.ShapeAt(i), 0u) << name;
    }
  }
}

TEST(AscendRealTraces, KernelDetailsWithAicMetricsKeepsExactTimes) {
  std::string path = RealTracesRoot() + "/ascend/kernel_details-aic-metrics.csv";
  REQUIRE_PATH(path);
  Trace t = ReadAll(*OpenAscend(path));
  ASSERT_EQ(t.ranks.size(), 1u);
  ASSERT_EQ(t.ranks[0].tracks.size(), 1u);
  const Track& tr = t.ranks[0].tracks[0];
  EXPECT_EQ(tr.native_id, 2);
  std::ifstream in(path);
  std::string line;
  int64_t rows = -1;
  while (std::getline(in, line)) rows += !line.empty();
  EXPECT_EQ(static_cast<int64_t>(tr.events.size()), rows);
  EXPECT_EQ(rows, 29);
  EXPECT_TRUE(tr.events.IsSortedByTime());
  // Row 2: "1736413971558972.912\t" (quoted, with a tab) and 185.504 µs.
  size_t k = std::find(tr.events.ts.begin(), tr.events.ts.end(), 1736413971558972912) -
             tr.events.ts.begin();
  ASSERT_LT(k, tr.events.size());
  EXPECT_EQ(tr.events.dur[k], 185504);
  EXPECT_EQ(tr.events.step[k], 19);
  EXPECT_EQ(t.ranks[0].strings.Get(tr.events.name[k]), "aclnnMatmul_MatMulCommon_MatMulV2");
  // Its Input Shapes field, """81920,4096;8192,512""", without msprof's quotes.
  EXPECT_EQ(t.ranks[0].strings.Get(tr.events.ShapeAt(k)), "81920,4096;8192,512");
  EXPECT_EQ(Stat(t.ranks[0], "read.kernel_details.input_shapes"), 29);
  for (Category c : tr.events.category) EXPECT_EQ(c, Category::kCompute);
}

TEST(AscendRealTraces, ClusterOutputGivesPerRankReferenceFigures) {
  std::string dir = RealTracesRoot() + "/ascend/cluster-output";
  REQUIRE_PATH(dir);
  ASSERT_TRUE(LooksLikeAscend(dir));
  auto src = OpenAscend(dir);
  ASSERT_EQ(src->rank_count(), 8u);
  const Metadata& md = src->metadata();
  EXPECT_NEAR(FindRef(md, 0, "step_trace.computing_us")->value, 80309.68717187493, 1e-6);
  EXPECT_NEAR(FindRef(md, 7, "step_trace.free_us")->value, 1061577.0900000043, 1e-6);
  EXPECT_NEAR(FindRef(md, 5, "step_trace.communication_not_overlapped_us")->value, 756374.86, 1e-6);
  // Per-rank HCCL op counts, counted here from the raw JSON: {group: {step:
  // {op: {rank: record}}}}, without the profiler's "Total Op Info".
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.load(dir + "/cluster_communication.json");
  std::map<int32_t, int64_t> ops;
  std::map<int32_t, double> hccs_mb;
  for (auto [g, steps] : root.get_object()) {
    for (auto [s, op_map] : steps.get_object()) {
      for (auto [op, ranks] : op_map.get_object()) {
        if (op == "Total Op Info") continue;
        for (auto [rk, rec] : ranks.get_object()) {
          int32_t rank = std::stoi(std::string(rk));
          ++ops[rank];
          double mb = 0;
          simdjson::dom::element e;
          if (rec["Communication Bandwidth Info"]["HCCS"]["Transit Size(MB)"].get(e) == simdjson::SUCCESS) {
            mb = e.is_double() ? double(e) : double(int64_t(e));
          }
          hccs_mb[rank] += mb;
        }
      }
    }
  }
  ASSERT_FALSE(ops.empty());
  for (auto [rank, n] : ops) {
    const LabeledValue* v = FindRef(md, rank, "communication.op_count");
    ASSERT_NE(v, nullptr) << rank;
    EXPECT_EQ(v->value, n) << rank;
    const LabeledValue* b = FindRef(md, rank, "communication.hccs.transit_size_bytes");
    ASSERT_NE(b, nullptr);
    EXPECT_NEAR(b->value, hccs_mb[rank] * 1e6, 1e-3);  // MB = 1e6 bytes (msprof)
  }
  // Per op: every record's figures, in its step ("step" -> kNone), exactly
  // as written; counted and compared independently here.
  size_t records = 0;
  for (auto [g, steps] : root.get_object()) {
    for (auto [s, op_map] : steps.get_object()) {
      for (auto [op, ranks] : op_map.get_object()) {
        if (op == "Total Op Info") continue;
        std::string prefix = "communication.op." + std::string(op) + ".";
        for (auto [rk, rec] : ranks.get_object()) {
          int32_t rank = std::stoi(std::string(rk));
          ++records;
          for (auto [k, v] : rec["Communication Time Info"].get_object()) {
            std::string key = k == "Elapse Time(ms)"   ? "elapse_time_ms"
                              : k == "Wait Time(ms)"   ? "wait_time_ms"
                              : k == "Idle Time(ms)"   ? "idle_time_ms"
                                                       : "";
            if (key.empty()) continue;
            const LabeledValue* x = FindRef(md, rank, prefix + key);
            ASSERT_NE(x, nullptr) << prefix + key;
            EXPECT_EQ(x->step, kNone);
            EXPECT_EQ(x->value, double(v)) << prefix + key;
          }
          double mb = 0;
          simdjson::dom::element e;
          if (rec["Communication Bandwidth Info"]["HCCS"]["Transit Size(MB)"].get(e) == simdjson::SUCCESS) {
            mb = e.is_double() ? double(e) : double(int64_t(e));
          }
          const LabeledValue* x = FindRef(md, rank, prefix + "hccs.transit_size_mb");
          if (mb != 0) {
            ASSERT_NE(x, nullptr) << prefix;
            EXPECT_EQ(x->value, mb);
          }
        }
      }
    }
  }
  size_t elapse_keys = 0;
  for (const auto& r : md.reference) {
    std::string_view k = r.key;
    if (k.rfind("communication.op.", 0) == 0 && k.size() > 15 &&
        k.substr(k.size() - 15) == ".elapse_time_ms") {
      ++elapse_keys;
    }
  }
  EXPECT_EQ(elapse_keys, records);
  // A few figures read off the file by hand.
  const std::string b0 = "communication.op.hcom_broadcast__501_0@6297232067196334501.";
  EXPECT_EQ(FindRef(md, 0, b0 + "elapse_time_ms")->value, 121.73694384375);
  EXPECT_EQ(FindRef(md, 0, b0 + "synchronization_time_ms")->value, 102.699834);
  EXPECT_EQ(FindRef(md, 1, b0 + "idle_time_ms")->value, 20.782182390624996);
  EXPECT_EQ(FindRef(md, 0, b0 + "hccs.bandwidth_gb_s")->value, 2.7012);
  EXPECT_EQ(FindRef(md, 0, b0 + "hccs.size_3072.count")->value, 18);
  EXPECT_EQ(FindRef(md, 0, b0 + "hccs.size_3072.time_ms")->value, 0.0202498125);
  EXPECT_EQ(FindRef(md, 0, b0 + "pcie.size_2944.count")->value, 1);
  EXPECT_EQ(FindRef(md, 0, b0 + "rdma.transit_size_mb"), nullptr);  // all zero: omitted
  // SDMA (= HCCS + PCIE) + RDMA: 0.08531199999999997 MB.
  EXPECT_EQ(FindRef(md, 0, b0 + "transit_bytes")->value, 85312);
  Rank r0 = src->ReadRank(0);
  EXPECT_EQ(r0.rank, 0);
  EXPECT_EQ(r0.EventCount(), 0u);
  EXPECT_EQ(Stat(r0, "read.cluster_reference_only"), 1);
}

TEST(AscendRealTraces, TheAscendFolderIsAParentOfOneRankDirectory) {
  std::string dir = RealTracesRoot() + "/ascend";
  REQUIRE_PATH(dir + "/advisor-timeline");
  auto src = OpenAscend(dir);
  ASSERT_EQ(src->rank_count(), 1u);
  std::string ignored;
  for (auto& [k, v] : src->metadata().attributes) {
    if (k == "ascend.ignored") ignored = v;
  }
  EXPECT_NE(ignored.find("kernel_details-with-hccl.csv"), std::string::npos);
  EXPECT_NE(ignored.find("cluster-output"), std::string::npos);
}

}  // namespace
}  // namespace moetrace
