// Bad DBs: an InputError naming the file, or a read with counts; never a
// crash or an SQLite error escaping.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "formats/ascend_db/ascend_db_importer.h"
#include "formats/ascend_db/db_comm.h"
#include "formats/ascend_db/db_host.h"
#include "formats/errors.h"
#include "formats/open_trace.h"
#include "formats/real_traces_dir.h"
#include "formats/formats_test_util.h"

namespace moetrace {
namespace {

namespace fs = std::filesystem;

std::string DbTempPath(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("moetrace_db_bad_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return (d / name).string();
}

void MakeDb(const std::string& path, const std::string& sql) {
  fs::remove(path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  std::string e = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << e;
}

std::string OpenError(const std::string& path) {
  try {
    auto src = OpenTrace(path);
    for (size_t i = 0; i < src->rank_count(); ++i) src->ReadRank(i);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

using testing_formats::Stat;

TEST(AscendDbBadInput, MissingStringIdsIsAnInputError) {
  std::string p = DbTempPath("msprof_1.db");
  MakeDb(p, "CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER);"
            "INSERT INTO TASK VALUES (1, 2, 0);");
  EXPECT_EQ(DetectFormat(p), TraceFormat::kAscendDb);
  EXPECT_EQ(OpenError(p), p + ": required table STRING_IDS is missing (not a complete msprof / "
                            "torch_npu profiler export)");
}

// Times the trace model cannot hold (an end at INT64_MAX: a span of
// centuries, or past int64 once subtracted) are skipped as bad times; names
// that are not UTF-8 are repaired and counted.
TEST(AscendDbBadInput, TimesOutOfRangeSkippedAndNamesRepaired) {
  std::string p = DbTempPath("msprof_3.db");
  MakeDb(p, "CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);"
            "INSERT INTO STRING_IDS VALUES (0, CAST(X'4D6174FF' AS TEXT));"
            "CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER,"
            " connectionId INTEGER, globalTaskId INTEGER PRIMARY KEY, taskType INTEGER);"
            "INSERT INTO TASK VALUES (100, 150, 0, 7, 1, 0);"
            "INSERT INTO TASK VALUES (200, 9223372036854775807, 0, 7, 2, 0);"
            "INSERT INTO TASK VALUES (-9223372036854775807, 150, 0, 7, 3, 0);");
  Rank r = OpenTrace(p)->ReadRank(0);
  EXPECT_EQ(r.EventCount(), 1u);
  EXPECT_EQ(Stat(r, "skipped.db.TASK.bad_time"), 2);
  EXPECT_EQ(Stat(r, "repaired.utf8"), 1);
  ASSERT_EQ(r.tracks.size(), 1u);
  EXPECT_EQ(r.strings.Get(r.tracks[0].events.name[0]), "Mat\xEF\xBF\xBD");
}

TEST(AscendDbBadInput, MissingTablesAndColumnsAndOddValuesAreCounted) {
  std::string p = DbTempPath("msprof_2.db");
  // No COMPUTE_TASK_INFO, no CANN_API...; TASK without streamId; odd values.
  MakeDb(p, "CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);"
            "INSERT INTO STRING_IDS VALUES (0, 'EVENT_RECORD'), (1, 'MEMCPY_ASYNC');"
            "CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER,"
            " connectionId INTEGER, globalTaskId INTEGER PRIMARY KEY, taskType INTEGER);"
            "INSERT INTO TASK VALUES (100, 150, 0, 7, 1, 0);"
            "INSERT INTO TASK VALUES (NULL, 150, 0, 7, 2, 0);"       // no start: skipped
            "INSERT INTO TASK VALUES ('abc', 150, 0, 7, 3, 0);"      // text start: skipped
            "INSERT INTO TASK VALUES (200, 190, 0, 4294967295, 4, 1);"  // end < start: dur 0
            "INSERT INTO TASK VALUES (300, 310, 0, NULL, 5, 99);");  // unknown string id
  auto src = OpenTrace(p);
  ASSERT_EQ(src->rank_count(), 1u);
  Rank r = src->ReadRank(0);
  EXPECT_EQ(r.EventCount(), 3u);
  EXPECT_EQ(Stat(r, "read.db.TASK.row"), 3);
  EXPECT_EQ(Stat(r, "skipped.db.TASK.bad_time"), 2);
  EXPECT_EQ(Stat(r, "coerced.db.TASK.negative_duration"), 1);
  EXPECT_EQ(Stat(r, "coerced.db.TASK.no_stream"), 3);
  EXPECT_EQ(Stat(r, "coerced.db.unknown_string_id"), 1);
  EXPECT_EQ(Stat(r, "skipped.db.column_missing.TASK.streamId"), 1);
  EXPECT_EQ(Stat(r, "skipped.db.table_missing.COMPUTE_TASK_INFO"), 1);
  EXPECT_EQ(Stat(r, "skipped.db.table_missing.COMMUNICATION_TASK_INFO"), 1);
  EXPECT_EQ(Stat(r, "skipped.db.table_missing.COMMUNICATION_OP"), 1);
  EXPECT_EQ(Stat(r, "skipped.db.table_missing.CANN_API"), 1);
  EXPECT_EQ(Stat(r, "skipped.db.table_missing.PYTORCH_API"), 1);
  EXPECT_EQ(Stat(r, "skipped.db.table_missing.MSTX_EVENTS"), 1);
  EXPECT_EQ(Stat(r, "skipped.db.table_missing.MEMORY_RECORD"), 1);
  EXPECT_EQ(Stat(r, "skipped.db.table_missing.NPU_OP_MEM"), 1);
  ASSERT_EQ(r.tracks.size(), 1u);
  const Track& t = r.tracks[0];
  EXPECT_EQ(r.strings.Get(t.name), "Stream -1");
  EXPECT_EQ(t.events.category[0], Category::kSync);  // EVENT_RECORD: no kernel info
  EXPECT_EQ(t.events.correlation[0], 7);
  EXPECT_EQ(t.events.category[1], Category::kCopy);  // MEMCPY_ASYNC
  EXPECT_EQ(t.events.dur[1], 0);
  EXPECT_EQ(t.events.correlation[1], -1);
  EXPECT_EQ(r.strings.Get(t.events.name[2]), "");
}

TEST(AscendDbBadInput, TruncatedRealDbIsAnInputErrorNamingTheFile) {
  std::string real = RealTracesRoot() + "/ascend/msprof-db/msprof_0.db";
  if (!fs::exists(real)) GTEST_SKIP() << "real trace absent: " << real;
  std::ifstream in(real, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), 106496u);
  // Cut inside the schema page, and later inside the data pages.
  for (size_t cut : {size_t{100}, size_t{4096}, size_t{50000}, size_t{100000}}) {
    SCOPED_TRACE(cut);
    std::string p = DbTempPath("msprof_cut.db");
    std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(cut));
    EXPECT_EQ(DetectFormat(p), TraceFormat::kAscendDb);  // magic present: the open says why
    std::string err = OpenError(p);
    EXPECT_EQ(err.rfind(p + ": SQLite: ", 0), 0u) << err;
    EXPECT_NE(err.find("malformed"), std::string::npos) << err;
  }
}

TEST(AscendDbBadInput, NotAnSqliteFileIsNotADb) {
  std::string p = DbTempPath("msprof_3.db");
  std::ofstream(p) << "hello";
  EXPECT_FALSE(LooksLikeAscendDb(p));
  EXPECT_EQ(DetectFormat(p), TraceFormat::kUnknown);
}

TEST(AscendDbHelpers, StepNamesAndHcclSizes) {
  EXPECT_EQ(StepOfMarker("ProfilerStep#12"), 12);
  EXPECT_EQ(StepOfMarker("step 3"), 3);
  EXPECT_EQ(StepOfMarker("Step_4"), 4);
  EXPECT_EQ(StepOfMarker("step#5"), 5);
  EXPECT_EQ(StepOfMarker("steps 5"), -1);
  EXPECT_EQ(StepOfMarker("ProfilerStep#"), -1);
  EXPECT_EQ(StepOfMarker("ProfilerStep#1x"), -1);
  EXPECT_EQ(HcclTypeBytes("FP16"), 2);
  EXPECT_EQ(HcclTypeBytes("BFP16"), 2);
  EXPECT_EQ(HcclTypeBytes("INT64"), 8);
  EXPECT_EQ(HcclTypeBytes("INT128"), 16);
  EXPECT_EQ(HcclTypeBytes("COMPLEX"), 0);
}

}  // namespace
}  // namespace moetrace
