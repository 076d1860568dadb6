// HTA's rows from the importer's pass equal those of HTA's own reader, and
// a file the pass cannot give whole is left to that reader.
#include "analyzer/hta/imported_rows.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <thread>

#include "formats/kineto/kineto_rank_reader.h"
#include "formats/kineto/whole_trace_file.h"
#include "formats/real_traces_dir.h"

namespace moetrace::hta {
namespace {

void ExpectSameRows(const RankRows& a, const RankRows& b) {
  EXPECT_EQ(a.file, b.file);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.fractional, b.fractional);
  EXPECT_EQ(a.idx, b.idx);
  EXPECT_EQ(a.ts, b.ts);
  EXPECT_EQ(a.dur, b.dur);
  EXPECT_EQ(a.stream, b.stream);
  EXPECT_EQ(a.correlation, b.correlation);
  EXPECT_EQ(a.kclass, b.kclass);
  EXPECT_EQ(a.bits, b.bits);
  EXPECT_EQ(a.step_strings, b.step_strings);
  EXPECT_EQ(a.bad_step_name, b.bad_step_name);
}

// The importer's read of `text` as file `name`, observed; nullopt when the
// pass did not give the rows.
std::optional<RankRows> Imported(const std::string& name, std::string_view text,
                                 bool inflated = false) {
  ImportedRows imported;
  PaddedBuffer buf = PaddedBuffer::FromString(text);
  KinetoEventObserver* o = imported.ObserverFor(name, inflated);
  if (!o) return std::nullopt;
  ReadKinetoRank(buf, name, 0, "default", nullptr, {}, o);
  imported.Close();  // Take waits for rows that will not come otherwise
  return imported.Take(name);
}

// Every rule of the rows in one file: a second traceEvents array replaces
// the first, a second "args" resets stream and correlation, numeric strings,
// null and missing cat, escaped names, a fractional ts (fractional mode).
constexpr const char* kTricky = R"({"distributedInfo": {"rank": 5},
 "traceEvents": [{"ph":"X","cat":"kernel","name":"dropped","ts":1,"dur":1,"args":{"stream":7}}],
 "traceEvents": [
 {"ph":"X","cat":"cpu_op","name":"ProfilerStep#4","ts":100,"dur":50},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":110,"dur":10,"args":{"correlation":12}},
 {"ph":"X","cat":"kernel","name":"nccl\nAllReduce","ts":130.5,"dur":20,"args":{"stream":7,"correlation":12.9}},
 {"ph":"X","cat":"kernel","name":"g\"emm","ts":131,"dur":2,"args":{"stream":7},"args":{"correlation":4}},
 {"ph":"X","cat":null,"name":"no cat","ts":140,"dur":5},
 {"ph":"X","name":"missing cat","ts":141,"dur":5},
 {"ph":"X","cat":"Trace","name":"PyTorch Profiler","ts":0,"dur":1000},
 {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","ts":150,"dur":3,"dur":4,"args":{"stream":"8","correlation":13}},
 {"ph":"i","cat":"cpu_instant_event","name":"[memory]","ts":151,"s":"t"},
 {"ph":"M","name":"process_name","pid":1,"args":{"name":"x"}},
 {"ph":"X","cat":"ProfilerStep#5","name":"ProfilerStepX","ts":160,"dur":1}
]})";

TEST(ImportedRows, EqualHtasOwnReaderOnTrickyEvents) {
  RankRows own = ParseKinetoRows("t.json", kTricky);
  ASSERT_EQ(own.rank, 5);
  ASSERT_TRUE(own.fractional);
  // Not rows: null or missing cat, the Trace span, no dur (instant, metadata).
  ASSERT_EQ(own.size(), 6u);
  std::optional<RankRows> imported = Imported("t.json", kTricky);
  ASSERT_TRUE(imported.has_value());
  ExpectSameRows(*imported, own);
}

TEST(ImportedRows, EqualHtasOwnReaderInIntegerMode) {
  const std::string text = R"({"traceEvents": [
 {"ph":"X","cat":"kernel","name":"k","ts":-0,"dur":3,"args":{"stream":7,"correlation":1}},
 {"ph":"X","cat":"kernel","name":"Event Sync","ts":5 ,"dur":2.5,"args":{"stream":7}}
]})";
  RankRows own = ParseKinetoRows("rank-2.json", text);
  ASSERT_FALSE(own.fractional);
  std::optional<RankRows> imported = Imported("rank-2.json", text);
  ASSERT_TRUE(imported.has_value());
  ExpectSameRows(*imported, own);
}

TEST(ImportedRows, LeavesWhatThePassCannotGiveToHtasReader) {
  // An escaped numeric string: the pass carries strings as written.
  EXPECT_FALSE(Imported("e.json", R"({"traceEvents": [
 {"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"args":{"stream":"\u0037"}}]})").has_value());
  // A BOM sends the importer to its streaming reader, which does not observe.
  EXPECT_FALSE(Imported("b.json", "\xEF\xBB\xBF{\"traceEvents\": []}").has_value());
  // gzip data in a file named .json: HTA decides by name and fails on it.
  EXPECT_FALSE(Imported("g.json", R"({"traceEvents": []})", /*inflated=*/true).has_value());
  std::optional<RankRows> gz = Imported("g.json.gz", R"({"traceEvents": []})", true);
  ASSERT_TRUE(gz.has_value());
  EXPECT_EQ(gz->size(), 0u);
  // Take waits for the importer: here on another thread, which completes
  // the file after Take started waiting.
  ImportedRows imported;
  std::thread hta([&] {
    std::optional<RankRows> r = imported.Take("w.json");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->size(), 1u);
    EXPECT_EQ(r->rank, 4);
  });
  const std::string text = R"({"distributedInfo": {"rank": 4}, "traceEvents": [
 {"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"args":{"stream":7}}]})";
  PaddedBuffer buf = PaddedBuffer::FromString(text);
  ReadKinetoRank(buf, "w.json", 0, "default", nullptr, {}, imported.ObserverFor("w.json", false));
  hta.join();
  // A file never read, or read but not completed, has nothing once the
  // importer is done; after Close no observer is given (later reads, e.g.
  // report's timeline).
  KinetoEventObserver* unfinished = imported.ObserverFor("u.json", false);
  ASSERT_NE(unfinished, nullptr);
  unfinished->Restart();
  // A read that ended without passing every event on: no waiting for it.
  imported.ObserverFor("i.json", false)->Incomplete();
  EXPECT_FALSE(imported.Take("i.json").has_value());
  imported.Close();
  EXPECT_FALSE(imported.Take("never.json").has_value());
  EXPECT_FALSE(imported.Take("u.json").has_value());
  EXPECT_EQ(imported.ObserverFor("a.json", false), nullptr);
}

// A path read twice at once (`analyze t.json t.json`): the first read's
// observer stays alive, and the later read's outcome is the one that counts.
TEST(ImportedRows, SamePathReadTwice) {
  ImportedRows imported;
  KinetoEventObserver* first = imported.ObserverFor("t.json", false);
  KinetoEventObserver* second = imported.ObserverFor("t.json", false);
  ASSERT_NE(first, second);
  KinetoEventFacts f;
  f.cat = {KinetoRawValue::kString, "kernel", false};
  f.dur = {KinetoRawValue::kNumber, "1", false};
  f.ts = {KinetoRawValue::kNumber, "5", false};
  first->OnEvent(f);  // still alive
  second->Complete("{}");
  first->Complete("{}");  // too late: not the read that counts
  std::optional<RankRows> rows = imported.Take("t.json");
  ASSERT_TRUE(rows.has_value());
  EXPECT_EQ(rows->size(), 0u);
}

TEST(ImportedRows, AbandonedTakeThrows) {
  ImportedRows imported;
  std::thread hta([&] { EXPECT_THROW(imported.Take("slow.json"), ImportedRows::Abandoned); });
  imported.Close(/*abandon=*/true);
  hta.join();
}

TEST(ImportedRows, EqualHtasOwnReaderOnRealTraces) {
  const std::filesystem::path dir = std::filesystem::path(RealTracesRoot()) / "kineto";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no real traces at " << dir;
  std::set<std::string> sets;
  for (const auto& set : std::filesystem::directory_iterator(dir)) {
    if (!set.is_directory()) continue;
    sets.insert(set.path().filename().string());
    for (const std::string& f : ListTraceFiles(set.path().string())) {
      SCOPED_TRACE(f);
      const RankRows own = ParseKinetoRows(f, ReadMaybeGzip(f));
      // One thread, then two (the rows of the tail come from a fork).
      for (int threads : {1, 2}) {
        SCOPED_TRACE(threads);
        ImportedRows imported;
        WholeTraceFile whole = ReadWholeTraceFile(f);
        ReadKinetoRank(whole.text, f, 0, "default", nullptr, {},
                       imported.ObserverFor(f, whole.gzip), threads);
        imported.Close();
        std::optional<RankRows> rows = imported.Take(f);
        ASSERT_TRUE(rows.has_value());
        ExpectSameRows(*rows, own);
      }
    }
  }
  // Every set is walked; new ones appear in the folder over time, these
  // are known to be there.
  for (const char* known : {"a2a-2rank", "allreduce-v100", "b200-eager", "cuda-sync-alexnet",
                            "legacy-resnet50", "mi300-resnet-ckpt", "ns-resolution",
                            "sglang-decode"}) {
    EXPECT_EQ(sets.count(known), 1u) << known;
  }
}

}  // namespace
}  // namespace moetrace::hta
