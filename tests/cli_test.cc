// End-to-end tests of the moetrace command line: exit codes, messages and
// the files each subcommand writes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "formats/native/native_reader.h"
#include "formats/native/native_writer.h"
#include "formats/sample_trace.h"
#include "formats/trace_io.h"
#include "tests/run_command.h"

namespace moetrace::testing {
namespace {

namespace fs = std::filesystem;

std::string WriteSample(const std::string& dir, int ranks = 3) {
  std::string path = dir + "/sample.mtrace";
  MemorySource source(MakeSampleTrace(ranks, 32, 5));
  auto sink = CreateNativeSink(path);
  Copy(source, *sink);
  return path;
}

TEST(Cli, VersionAndHelpExitZero) {
  CommandResult v = RunMoetrace("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.output.find("moetrace 0."), std::string::npos) << v.output;
  CommandResult h = RunMoetrace("--help");
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.output.find("convert"), std::string::npos);
  EXPECT_NE(h.output.find("info"), std::string::npos);
  EXPECT_EQ(RunMoetrace("info --help").exit_code, 0);
}

TEST(Cli, BadUsageExitsTwo) {
  EXPECT_EQ(RunMoetrace("").exit_code, 2);
  CommandResult unknown = RunMoetrace("no-such-command");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("moetrace: unknown command 'no-such-command' (moetrace --help lists them)"),
            std::string::npos)
      << unknown.output;
  EXPECT_EQ(RunMoetrace("convert").exit_code, 2);
  CommandResult r = RunMoetrace("info /nonexistent/trace.mtrace");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("/nonexistent/trace.mtrace"), std::string::npos) << r.output;
}

TEST(Cli, UnknownInputNamesFileAndPosition) {
  std::string dir = TempDir("unknown");
  std::string path = dir + "/garbage.bin";
  std::ofstream(path) << "this is not a trace";
  CommandResult r = RunMoetrace("info " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find(path + ": byte 0"), std::string::npos) << r.output;
}

TEST(Cli, InfoJsonHasStableKeys) {
  std::string dir = TempDir("info");
  std::string path = WriteSample(dir);
  CommandResult r = RunMoetrace("info --json " + path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // 3 ranks x (3 streams x 32 device ops) split by category of the sample.
  EXPECT_NE(r.output.find("\"ranks\": 3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"events_by_category\": {"), std::string::npos);
  EXPECT_NE(r.output.find("\"device_stream\": 9"), std::string::npos);
  EXPECT_NE(r.output.find("\"host_thread\": 6"), std::string::npos);
  EXPECT_NE(r.output.find("\"counter\": 6"), std::string::npos);
  EXPECT_NE(r.output.find("\"format\": \"native\""), std::string::npos);
  EXPECT_NE(r.output.find("\"comm_exposed_ns\": 12345"), std::string::npos) << r.output;
  // Same input, same bytes.
  EXPECT_EQ(RunMoetrace("info --json " + path).output, r.output);
}

TEST(Cli, ConvertToEveryFormat) {
  std::string dir = TempDir("convert");
  std::string path = WriteSample(dir);
  for (const char* ext : {".mtrace", ".pftrace", ".json"}) {
    std::string out = dir + "/out" + ext;
    CommandResult r = RunMoetrace("convert " + path + " -o " + out);
    ASSERT_EQ(r.exit_code, 0) << ext << ": " << r.output;
    EXPECT_GT(fs::file_size(out), 1000u) << ext;
  }
  // native -> native is byte-identical.
  EXPECT_EQ(ReadFile(dir + "/out.mtrace"), ReadFile(path));
  // A Chrome JSON of several ranks is for viewing: read back, its ranks'
  // processes would make one rank, so it exits 2 saying so. One rank's file
  // reads back through the Kineto importer.
  CommandResult r = RunMoetrace("info --json " + dir + "/out.json");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("out.json: a Chrome JSON of 3 ranks written by `moetrace convert`, for viewing only"),
            std::string::npos)
      << r.output;
  ASSERT_EQ(RunMoetrace("convert " + path + " --ranks 1 -o " + dir + "/one.json").exit_code, 0);
  r = RunMoetrace("info --json " + dir + "/one.json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"format\": \"kineto\""), std::string::npos) << r.output;
}

// --ranks keeps exactly those ranks, whole; a selection of nothing, or a
// bad window, exits 2 and writes nothing.
TEST(Cli, ConvertSelectsRanks) {
  std::string dir = TempDir("convert_sel");
  std::string path = WriteSample(dir, 4);
  CommandResult r = RunMoetrace("convert " + path + " --ranks 1-2 --threads 2 -o " + dir + "/sel.mtrace");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  Trace all = ReadAll(*OpenNative(path));
  Trace sel = ReadAll(*OpenNative(dir + "/sel.mtrace"));
  ASSERT_EQ(sel.ranks.size(), 2u);
  EXPECT_EQ(sel.ranks[0], all.ranks[1]);
  EXPECT_EQ(sel.ranks[1], all.ranks[2]);
  r = RunMoetrace("convert " + path + " --ranks 9 -o " + dir + "/none.mtrace");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--ranks: no rank of the input has a selected id (its ids are 0..3)"),
            std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/none.mtrace"));
  r = RunMoetrace("convert " + path + " --window 5ms:1ms -o " + dir + "/w.mtrace");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(fs::exists(dir + "/w.mtrace"));
}

// -o DIR/ writes a Kineto file per rank that reads back as the same ranks,
// each carrying its own rank id (for moetrace and for HTA's rank regex).
TEST(Cli, ConvertToAFilePerRank) {
  std::string dir = TempDir("convert_dir");
  std::string path = WriteSample(dir, 3);
  CommandResult r = RunMoetrace("convert " + path + " --ranks 1-2 -o " + dir + "/per-rank/");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("wrote " + dir + "/per-rank/ (2 ranks)"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/per-rank/rank-0.json"));
  EXPECT_EQ(ReadFile(dir + "/per-rank/rank-2.json").rfind("{\"distributedInfo\":{\"rank\": 2, ", 0),
            0u);
  r = RunMoetrace("info --json " + dir + "/per-rank");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"format\": \"kineto\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"ranks\": 2"), std::string::npos) << r.output;
  r = RunMoetrace("analyze " + dir + "/per-rank --json " + dir + "/a.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("replaces"), std::string::npos) << r.output;
  // Into a directory that holds another conversion's files: refused, exit 2.
  r = RunMoetrace("convert " + path + " -o " + dir + "/per-rank/");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("already holds rank-1.json"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/per-rank/rank-0.json"));
  // The same rank id from two inputs: refused, not overwritten.
  r = RunMoetrace("convert " + path + " " + path + " -o " + dir + "/twice/");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("rank 0 comes twice in the inputs"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/twice"));  // created by the run, removed with its staging
}

// What a user meets before any work, and what a failure leaves: nothing.
TEST(Cli, OutputsAndSelectionsAreCheckedAndFailuresLeaveNothing) {
  std::string dir = TempDir("checked");
  std::string path = WriteSample(dir, 3);
  const std::string tiny = dir + "/tiny.mtrace";
  ASSERT_EQ(RunMoetrace("generate --preset tiny-moe -o " + tiny).exit_code, 0);
  const std::string before = ReadFile(tiny);
  // An output that is an input: exit 2, the input untouched.
  CommandResult r = RunMoetrace("report " + tiny + " --no-advice --html " + dir + "/./tiny.mtrace");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("is also an input"), std::string::npos) << r.output;
  EXPECT_EQ(ReadFile(tiny), before);
  // An output in a missing directory: exit 2 before the work.
  r = RunMoetrace("analyze " + tiny + " --json " + dir + "/nodir/a.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("nodir/a.json: directory '" + dir + "/nodir' does not exist"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("moetrace analyze:"), std::string::npos) << r.output;  // no summary
  // The same trace twice: exit 2, in analyze and in convert (nothing written).
  r = RunMoetrace("analyze " + tiny + " " + tiny);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("rank 0 is also in " + tiny), std::string::npos) << r.output;
  r = RunMoetrace("convert " + path + " " + path + " -o " + dir + "/dup.mtrace");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("rank 0 comes twice in the inputs; give each rank once"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/dup.mtrace"));
  // Steps the trace does not have, or not one range: exit 2.
  r = RunMoetrace("analyze " + tiny + " --steps 9");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--steps: 9: selects no step of the input"), std::string::npos) << r.output;
  r = RunMoetrace("analyze " + tiny + " --steps 0,2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--steps: 0,2: analyze takes one range of steps"), std::string::npos) << r.output;
  // A convert cut that keeps no event: exit 2, nothing written.
  r = RunMoetrace("convert " + tiny + " --window 9s:10s -o " + dir + "/w.mtrace");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--window: 9s:10s: selects no event of the input"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/w.mtrace"));
  // A failed conversion to DIR/ leaves no rank file (a truncated second input).
  const std::string bad = dir + "/bad.mtrace";
  std::ofstream(bad, std::ios::binary) << ReadFile(path).substr(0, 4000);
  r = RunMoetrace("convert " + tiny + " " + bad + " -o " + dir + "/set/");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/set")) << r.output;
  // A gate baseline that is not an analysis (here advise's document): exit 2.
  ASSERT_EQ(RunMoetrace("advise " + tiny + " --no-replay --no-layout --json " + dir + "/adv.json").exit_code, 0);
  r = RunMoetrace("gate " + tiny + " --baseline " + dir + "/adv.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("adv.json: not an `analyze --json` document: it has no \"cluster\" section"),
            std::string::npos)
      << r.output;
}

TEST(Cli, UnknownOutputTypeExitsTwoAndWritesNothing) {
  std::string dir = TempDir("badout");
  std::string path = WriteSample(dir);
  CommandResult r = RunMoetrace("convert " + path + " -o " + dir + "/out.xyz");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(fs::exists(dir + "/out.xyz"));
}

TEST(Cli, TruncatedNativeTraceExitsTwoWithOffset) {
  std::string dir = TempDir("truncated");
  std::string path = WriteSample(dir);
  std::string bytes = ReadFile(path);
  for (int k = 1; k < 64; k += 7) {
    std::string cut = dir + "/cut.mtrace";
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() * k / 64);
    CommandResult r = RunMoetrace("info " + cut);
    EXPECT_EQ(r.exit_code, 2) << "k=" << k << ": " << r.output;
    EXPECT_NE(r.output.find("byte "), std::string::npos) << "k=" << k << ": " << r.output;
    std::string out = dir + "/cut-out.mtrace";
    EXPECT_EQ(RunMoetrace("convert " + cut + " -o " + out).exit_code, 2);
    EXPECT_FALSE(fs::exists(out)) << "a failed convert left a file";
  }
}

}  // namespace
}  // namespace moetrace::testing
