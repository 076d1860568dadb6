// A readable document is never rejected for an odd value (issue #13): a
// number written as a string is read as the number, a value of the wrong
// type is skipped, an event without a usable ts, pid or tid is dropped, and
// invalid UTF-8 is repaired; each is counted in Rank::import_stats. Only
// what makes the document unreadable is an error.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "formats/errors.h"
#include "formats/kineto/kineto_importer.h"
#include "formats/formats_test_util.h"

namespace moetrace {
namespace {

using testing_formats::Stat;

size_t Events(const Rank& r) {
  size_t n = 0;
  for (const Track& t : r.tracks) n += t.events.size();
  return n;
}

const Track* TrackOfKind(const Rank& r, TrackKind kind) {
  for (const Track& t : r.tracks) {
    if (t.kind == kind) return &t;
  }
  return nullptr;
}

// A launch, its kernel and a copy, as ROCm / SGLang write them: every
// number of args as a string.
const char* kStringNumbers = R"J({"traceEvents": [
  {"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 1, "tid": 2, "ts": 100, "dur": 5, "args": {"correlation": "42", "external id": "7"}},
  {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 3, "ts": 110, "dur": 20, "args": {"correlation": "42", "stream": "3", "device": "0", "external id": "7"}},
  {"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpyWithStream", "pid": 1, "tid": 2, "ts": 200, "dur": 30, "args": {"correlation": 43, "bytes": "13248"}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 3, "ts": 205, "dur": 10, "args": {"correlation": 43, "stream": 3, "device": 0, "bytes": " 13248 "}}
]})J";

TEST(KinetoLenient, NumericStringsAreReadAsNumbers) {
  const Rank r = ImportKinetoJson(kStringNumbers, "t.json");
  const Track* dev = TrackOfKind(r, TrackKind::kDeviceStream);
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(dev->native_id, 3);
  ASSERT_EQ(dev->events.size(), 2u);
  EXPECT_EQ(dev->events.correlation[0], 42);
  EXPECT_EQ(dev->events.bytes[1], 13248);
  const Track* host = TrackOfKind(r, TrackKind::kHostThread);
  ASSERT_NE(host, nullptr);
  ASSERT_EQ(host->events.size(), 2u);
  EXPECT_EQ(host->events.category[0], Category::kLaunch);
  EXPECT_EQ(host->events.correlation[0], 42);
  EXPECT_EQ(Stat(r, "coerced.arg.correlation"), 2);
  EXPECT_EQ(Stat(r, "coerced.arg.external id"), 2);
  EXPECT_EQ(Stat(r, "coerced.arg.stream"), 1);
  EXPECT_EQ(Stat(r, "coerced.arg.device"), 1);
  EXPECT_EQ(Stat(r, "coerced.arg.bytes"), 2);
}

// One kernel with one field replaced by a value of another type.
std::string Kernel(const std::string& field) {
  return R"J({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 3, "ts": 10, "dur": 5, "args": {"stream": 3, "correlation": 1}},
    {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 3, "ts": 20, "dur": 5, )J" +
         field + R"J(}]})J";
}

struct Swap {
  const char* fields;  // the second event's fields
  const char* stat;    // what is counted
  size_t events;       // what is kept
};

TEST(KinetoLenient, EveryFieldOfTheWrongTypeIsCountedNotRejected) {
  const Swap swaps[] = {
      {R"("args": {"stream": 3, "correlation": true})", "skipped.arg.correlation", 2},
      {R"("args": {"stream": 3, "correlation": "x"})", "skipped.arg.correlation", 2},
      {R"("args": {"stream": [3], "correlation": 2})", "skipped.arg.stream", 2},
      {R"("args": {"stream": 3, "device": {}})", "skipped.arg.device", 2},
      {R"("args": {"stream": 3, "bytes": "many"})", "skipped.arg.bytes", 2},
      {R"("args": {"stream": 3, "External id": false})", "skipped.arg.External id", 2},
      {R"("args": {"stream": 3, "Collective name": 5})", "skipped.arg.Collective name", 2},
      {R"("args": {"stream": 3, "Process Group Name": []})", "skipped.arg.Process Group Name", 2},
      {R"("args": {"stream": 3, "Process Group Description": 1})",
       "skipped.arg.Process Group Description", 2},
      {R"("args": {"stream": 3, "dtype": 4})", "skipped.arg.dtype", 2},
      {R"("args": {"stream": 3, "In msg nelems": "n"})", "skipped.arg.In msg nelems", 2},
      {R"("args": {"stream": 3, "Group size": {}})", "skipped.arg.Group size", 2},
      {R"("args": {"stream": 3, "In split size": "[1, x]"})", "skipped.arg.In split size", 2},
      {R"("args": {"stream": 3, "Out split size": [1, true]})", "skipped.arg.Out split size", 2},
      {R"("args": {"stream": 3, "Process Group Ranks": {"a": 1}})",
       "skipped.arg.Process Group Ranks", 2},
      {R"("args": {"stream": 3, "Total Allocated": "lots"})", "skipped.arg.Total Allocated", 2},
      {R"("args": 7)", "skipped.field.args", 2},
      {R"("args": {"stream": 3}, "dur": "long")", "skipped.field.dur", 2},
      {R"("args": {"stream": 3}, "dur": [5])", "skipped.field.dur", 2},
      {R"("args": {"stream": 3}, "name": 12)", "skipped.field.name", 2},
      {R"("args": {"stream": 3}, "id": {})", "skipped.field.id", 2},
      {R"("args": {"stream": 3}, "cat": 1)", "skipped.field.cat", 1},
      {R"("args": {"stream": 3}, "ph": 88)", "skipped.field.ph", 1},
      {R"("args": {"stream": 3}, "ts": "abc")", "skipped.event.ts", 1},
      {R"("args": {"stream": 3}, "ts": {"us": 1})", "skipped.event.ts", 1},
      {R"("args": {"stream": 3}, "ts": 1e30)", "skipped.event.ts", 1},
      {R"("args": {"stream": 3}, "pid": 99999999999999999999)", "skipped.event.pid", 1},
      {R"("args": {"stream": 3}, "pid": 1e20)", "skipped.event.pid", 1},
      {R"("args": {"stream": 3}, "tid": true)", "skipped.event.tid", 1},
  };
  for (const Swap& s : swaps) {
    SCOPED_TRACE(s.fields);
    Rank r;
    ASSERT_NO_THROW(r = ImportKinetoJson(Kernel(s.fields), "t.json"));
    EXPECT_EQ(Stat(r, s.stat), 1);
    EXPECT_EQ(Events(r), s.events);
  }
}

// A kept event keeps what was readable: the dur that was skipped leaves a
// zero-length op at its ts, the bad name an empty one.
TEST(KinetoLenient, WhatIsReadableOfAnOddEventIsKept) {
  const Rank r = ImportKinetoJson(Kernel(R"("args": {"stream": 3, "correlation": [2]}, "dur": "x")"),
                                  "t.json");
  const Track* dev = TrackOfKind(r, TrackKind::kDeviceStream);
  ASSERT_NE(dev, nullptr);
  ASSERT_EQ(dev->events.size(), 2u);
  EXPECT_EQ(dev->events.ts[1], 20000);
  EXPECT_EQ(dev->events.dur[1], 0);
  EXPECT_EQ(dev->events.correlation[1], -1);
  EXPECT_EQ(r.strings.Get(dev->events.name[1]), "k2");
}

// Bad syntax is still an error with its position.
TEST(KinetoLenient, SyntaxErrorsStillNameTheByte) {
  try {
    ImportKinetoJson(R"({"traceEvents": [{"ph": "X", "ts": tru, "dur": 1}]})", "t.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("t.json: byte ", 0), 0u) << e.what();
  }
}

std::filesystem::path LenientTempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("moetrace_lenient_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void LenientWriteGzip(const std::filesystem::path& p, const std::string& s) {
  gzFile f = gzopen(p.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzwrite(f, s.data(), unsigned(s.size()));
  gzclose(f);
}

const char* kBadUtf8 =
    "{\"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\xC3\x28\xFF\", \"pid\": 0, \"tid\": 3,"
    " \"ts\": 10, \"dur\": 5, \"args\": {\"stream\": 3}}]}";

// Two invalid bytes (a cut two-byte sequence and 0xFF) become two U+FFFD,
// on the single pass (a string in memory) and on the streaming one (gzip).
TEST(KinetoLenient, InvalidUtf8IsRepaired) {
  const std::string want = "gemm\xEF\xBF\xBD(\xEF\xBF\xBD";
  const Rank whole = ImportKinetoJson(kBadUtf8, "t.json");
  ASSERT_EQ(Events(whole), 1u);
  EXPECT_EQ(whole.strings.Get(TrackOfKind(whole, TrackKind::kDeviceStream)->events.name[0]), want);
  EXPECT_EQ(Stat(whole, "repaired.utf8"), 2);

  const auto dir = LenientTempDir("utf8");
  LenientWriteGzip(dir / "t.json.gz", kBadUtf8);
  const Rank streamed = OpenKineto((dir / "t.json.gz").string())->ReadRank(0);
  ASSERT_EQ(Events(streamed), 1u);
  EXPECT_EQ(streamed.strings.Get(TrackOfKind(streamed, TrackKind::kDeviceStream)->events.name[0]),
            want);
  EXPECT_EQ(Stat(streamed, "repaired.utf8"), 2);
  std::filesystem::remove_all(dir);
}

// 5 MiB of whitespace between two events, gzipped: the streaming reader
// reads past its 4 MiB window instead of taking the end of the window for
// the end of the file.
TEST(KinetoLenient, LongWhitespaceRunsInGzipAreRead) {
  std::string doc = "{\"traceEvents\": [\n";
  doc += R"({"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 3, "ts": 10, "dur": 5, "args": {"stream": 3}},)";
  doc += std::string(5u << 20, ' ');
  doc += R"({"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "tid": 3, "ts": 20, "dur": 5, "args": {"stream": 3}})";
  doc += std::string(5u << 20, '\n');
  doc += "]" + std::string(5u << 20, '\t') + "}" + std::string(5u << 20, ' ');
  const auto dir = LenientTempDir("ws");
  LenientWriteGzip(dir / "t.json.gz", doc);
  const Rank streamed = OpenKineto((dir / "t.json.gz").string())->ReadRank(0);
  EXPECT_EQ(Events(streamed), 2u);
  KinetoOpenOptions whole;
  whole.whole_files = true;
  const Rank read_whole = OpenKineto((dir / "t.json.gz").string(), whole)->ReadRank(0);
  EXPECT_EQ(Events(read_whole), 2u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace moetrace
