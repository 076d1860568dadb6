// The DB importer over the real msprof export in ../shared/traces/ascend/msprof-db.
// Expected figures were computed independently with python3's sqlite3 module:
//   OVERLAP_ANALYSIS (deviceId 2): type 0 (Computing) 11 rows, sum(endNs-startNs)
//   = 663872 ns; type 3 (Free) 11 rows, 140864736 ns; no type 1 / 2 rows;
//   min(startNs) 1698220811392354694, max(endNs) 1698220811533883302 -> span
//   141528608 ns.
//   TASK: 24 rows, all deviceId 2; streams 16 (14 rows), 18 (9), 8 (1);
//   11 join COMPUTE_TASK_INFO, 8 join COMMUNICATION_TASK_INFO (its 9th row,
//   globalTaskId 46938, has no TASK row; TASK 46933 has no info row);
//   NPU_OP_MEM: 494 rows, all deviceId 0; CANN_API 4 rows; MSTX_EVENTS 13.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "formats/ascend_db/ascend_db_importer.h"
#include "formats/open_trace.h"
#include "formats/real_traces_dir.h"
#include "formats/formats_test_util.h"

namespace moetrace {
namespace {

namespace fs = std::filesystem;

using testing_formats::Stat;

const Track* FindTrack(const Rank& r, std::string_view name) {
  for (const Track& t : r.tracks) {
    if (r.strings.Get(t.name) == name) return &t;
  }
  return nullptr;
}

class MsprofDb : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = RealTracesRoot() + "/ascend/msprof-db";
    if (!fs::exists(dir_)) GTEST_SKIP() << "real trace absent (set MOETRACE_REAL_TRACES): " << dir_;
  }
  std::string dir_;
};

TEST_F(MsprofDb, DetectedFromContentAsFileAndDirectory) {
  EXPECT_EQ(DetectFormat(dir_), TraceFormat::kAscendDb);
  EXPECT_EQ(DetectFormat(dir_ + "/msprof_0.db"), TraceFormat::kAscendDb);
  EXPECT_STREQ(TraceFormatName(TraceFormat::kAscendDb), "ascend-db");
  // The text-only Ascend inputs are not taken for a DB.
  EXPECT_FALSE(LooksLikeAscendDb(RealTracesRoot() + "/ascend/advisor-timeline"));
}

TEST_F(MsprofDb, RanksAndIdentity) {
  auto src = OpenTrace(dir_);
  const Metadata& md = src->metadata();
  EXPECT_EQ(md.source, "ascend");
  EXPECT_EQ(md.device, "Ascend910B");
  std::map<std::string, std::string> attrs(md.attributes.begin(), md.attributes.end());
  EXPECT_EQ(attrs["ascend.input"], "db");
  EXPECT_EQ(attrs["ascend.db.files"], "msprof_0.db");
  EXPECT_EQ(attrs["ascend.rank_rule"], "device_id");
  EXPECT_EQ(attrs["ascend.db.session.baseTimeNs"], "1577808000000000000");
  // Device 2 has the tasks, device 0 only NPU_OP_MEM rows.
  ASSERT_EQ(src->rank_count(), 2u);
  Rank r0 = src->ReadRank(0), r2 = src->ReadRank(1);
  EXPECT_EQ(r0.rank, 0);
  EXPECT_EQ(r0.device_id, 0);
  EXPECT_EQ(r2.rank, 2);
  EXPECT_EQ(r2.device_id, 2);
  EXPECT_EQ(r2.pid, 2750);  // globalTid 11814731181473 >> 32
}

TEST_F(MsprofDb, OverlapFiguresAsRecorded) {
  auto src = OpenTrace(dir_ + "/msprof_0.db");
  std::map<std::string, double> ref;
  for (const LabeledValue& v : src->metadata().reference) {
    EXPECT_EQ(v.rank, 2);
    EXPECT_EQ(v.step, kNone);
    ref[v.key] = v.value;
  }
  EXPECT_EQ(ref.size(), 5u);
  EXPECT_DOUBLE_EQ(ref["overlap_analysis.computing_us"], 663.872);
  EXPECT_DOUBLE_EQ(ref["overlap_analysis.computing_segments"], 11);
  EXPECT_DOUBLE_EQ(ref["overlap_analysis.free_us"], 140864.736);
  EXPECT_DOUBLE_EQ(ref["overlap_analysis.free_segments"], 11);
  EXPECT_DOUBLE_EQ(ref["overlap_analysis.span_us"], 141528.608);
}

TEST_F(MsprofDb, EventsPerCategoryAndNames) {
  auto src = OpenTrace(dir_);
  Rank r = src->ReadRank(1);
  std::map<Category, int> per_cat;
  int device_tracks = 0, host_tracks = 0, counters = 0;
  for (const Track& t : r.tracks) {
    device_tracks += t.kind == TrackKind::kDeviceStream;
    host_tracks += t.kind == TrackKind::kHostThread;
    counters += t.kind == TrackKind::kCounter;
    for (Category c : t.events.category) ++per_cat[c];
  }
  EXPECT_EQ(device_tracks, 3);  // streams 16, 18, 8
  EXPECT_EQ(host_tracks, 3);    // CANN_API's thread, two MSTX threads
  EXPECT_EQ(counters, 0);
  EXPECT_EQ(per_cat[Category::kCompute], 11);
  EXPECT_EQ(per_cat[Category::kCopy], 8);        // HCCL plane sub-tasks
  // 4 tasks with no info, the hcom_allReduce task of stream 8 (no
  // COMMUNICATION_OP row: runtime work, as the profiler counts it), and
  // aclrtSynchronizeStream.
  EXPECT_EQ(per_cat[Category::kSync], 4 + 1 + 1);
  EXPECT_EQ(per_cat[Category::kCollective], 0);
  EXPECT_EQ(per_cat[Category::kLaunch], 1);      // aclrtGetDeviceCount: connectionId 0 = task 0's
  EXPECT_EQ(per_cat[Category::kHostOp], 2);      // aclrtMemcpy x2 (connection 2 has no task)
  EXPECT_EQ(per_cat[Category::kMarker], 13);
  EXPECT_EQ(r.EventCount(), 41u);  // 24 tasks, 4 CANN calls, 13 MSTX ranges

  const Track* s16 = FindTrack(r, "Stream 16");
  ASSERT_NE(s16, nullptr);
  EXPECT_EQ(s16->native_id, 16);
  ASSERT_EQ(s16->events.size(), 14u);
  EXPECT_EQ(r.strings.Get(s16->events.name[0]), "aclnnInplaceZero_ZerosLikeAiCore_ZerosLike");
  EXPECT_EQ(s16->events.ts[0], 1698220811392354694);
  EXPECT_EQ(s16->events.dur[0], 1698220811392966786 - 1698220811392354694);
  EXPECT_EQ(s16->events.correlation[0], 0);
  EXPECT_EQ(r.strings.Get(s16->events.name[1]), "aclnnCast_CastAiCore_Cast");
  EXPECT_EQ(s16->events.correlation[1], 35);

  const Track* s8 = FindTrack(r, "Stream 8");
  ASSERT_NE(s8, nullptr);
  ASSERT_EQ(s8->events.size(), 1u);
  EXPECT_EQ(r.strings.Get(s8->events.name[0]), "hcom_allReduce__305_880_1");
  EXPECT_EQ(s8->events.correlation[0], -1);  // connectionId 4294967295
  EXPECT_EQ(s8->events.category[0], Category::kSync);
  EXPECT_TRUE(s8->comms.empty());
  int64_t without_op = 0;
  for (const auto& [k, v] : r.import_stats) {
    if (k == "read.db.TASK.hcom_without_op") without_op = v;
  }
  EXPECT_EQ(without_op, 1);

  const Track* s18 = FindTrack(r, "Stream 18");
  ASSERT_NE(s18, nullptr);
  EXPECT_EQ(r.strings.Get(s18->events.name[0]), "Memcpy");

  EXPECT_EQ(Stat(r, "read.db.TASK.row"), 24);
  EXPECT_EQ(Stat(r, "read.db.TASK.compute"), 11);
  EXPECT_EQ(Stat(r, "read.db.TASK.comm_subtask"), 8);
  EXPECT_EQ(Stat(r, "read.db.CANN_API.row"), 4);
  EXPECT_EQ(Stat(r, "read.db.MSTX_EVENTS.row"), 13);
  EXPECT_EQ(Stat(r, "read.db.COMMUNICATION_OP.row"), 0);  // the table is empty
  // Tables this export lacks are counted, not errors.
  EXPECT_EQ(Stat(r, "skipped.db.table_missing.PYTORCH_API"), 1);
  EXPECT_EQ(Stat(r, "skipped.db.table_missing.MEMORY_RECORD"), 1);
  EXPECT_EQ(Stat(r, "skipped.db.table_missing.ENUM_HCCL_DATA_TYPE"), 1);
}

TEST_F(MsprofDb, MemoryOfDeviceZero) {
  auto src = OpenTrace(dir_);
  Rank r = src->ReadRank(0);
  EXPECT_EQ(r.tracks.size(), 2u);  // the two counters, no events
  const Track* a = FindTrack(r, "operator_memory allocated");
  const Track* v = FindTrack(r, "operator_memory reserved");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(a->counter, CounterKind::kMemAllocated);
  EXPECT_EQ(v->counter, CounterKind::kMemReserved);
  EXPECT_EQ(a->sample_ts.size(), 494u);
  // The first row: totalAllocate 131072, totalReserve 1229258752 at 1710490360222620070.
  EXPECT_EQ(a->sample_ts[0], 1710490360222620070);
  EXPECT_EQ(a->sample_value[0], 131072);
  EXPECT_EQ(v->sample_value[0], 1229258752);
  EXPECT_EQ(Stat(r, "read.db.NPU_OP_MEM.row"), 494);
}

TEST_F(MsprofDb, ComputeTasksCarryTheirInputShapes) {
  // python3 sqlite3: COMPUTE_TASK_INFO joined to TASK (stream 16) by
  // globalTaskId, ordered by startNs, inputShapes looked up in STRING_IDS:
  // '"1676480000"', '"1,2049"', ..., 'NULL' for the Tril MemSet (msprof's
  // "no shapes"), '";;"' for Range (three inputs without dims).
  auto src = OpenTrace(dir_);
  const Rank r = src->ReadRank(1);  // device 2: the rank with the tasks
  const Track* s16 = FindTrack(r, "Stream 16");
  ASSERT_NE(s16, nullptr);
  std::vector<std::pair<std::string, std::string>> got;
  for (size_t i = 0; i < s16->events.size(); ++i) {
    if (s16->events.category[i] != Category::kCompute) continue;
    got.emplace_back(r.strings.Get(s16->events.name[i]), r.strings.Get(s16->events.ShapeAt(i)));
  }
  const std::vector<std::pair<std::string, std::string>> want = {
      {"aclnnInplaceZero_ZerosLikeAiCore_ZerosLike", "1676480000"},
      {"aclnnCast_CastAiCore_Cast", "1,2049"},
      {"aclnnInplaceOne_OnesLikeAiCore_OnesLike", "1,2048,2048"},
      {"aclnnTril_Tril_MemSet", ""},
      {"aclnnTril_Tril_Tril", "1,2048,2048"},
      {"aclnnInplaceOne_OnesLikeAiCore_OnesLike", "1,2048"},
      {"aclnnArange_ArangeAiCore_Range", ";;"},
      {"aclnnEqScalar_EqualAiCore_Equal", "2048;"},
      {"aclnnLtScalar_LessAiCore_Less", "1,1,2048,2048;"},
      {"aclnnLtScalar_CastAiCore_Cast", "1,2048"},
      {"aclnnLtScalar_LessAiCore_Less", "1,2048;"},
  };
  EXPECT_EQ(got, want);
  EXPECT_EQ(Stat(r, "read.db.COMPUTE_TASK_INFO.input_shapes"), 10);
  EXPECT_EQ(Stat(r, "skipped.db.COMPUTE_TASK_INFO.input_shapes_not_in_string_ids"), 0);
  // Communication tasks have no shapes.
  for (const Track& t : r.tracks) {
    if (&t == s16) continue;
    for (size_t i = 0; i < t.events.size(); ++i) EXPECT_EQ(t.events.ShapeAt(i), 0u);
  }
}

}  // namespace
}  // namespace moetrace
