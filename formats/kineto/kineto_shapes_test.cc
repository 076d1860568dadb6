#include "formats/kineto/kineto_shapes.h"

#include <gtest/gtest.h>

#include <string>

#include "formats/kineto/kineto_importer.h"
#include "formats/native/native_test_util.h"
#include "formats/formats_test_util.h"

namespace moetrace {
namespace {

using testing_formats::Stat;

std::string Normalized(std::string_view json) {
  std::string out;
  NormalizeInputDims(json, &out);
  return out;
}

TEST(KinetoShapes, NormalizeInputDimsGivesTheCompactSpelling) {
  EXPECT_EQ(Normalized("[[4096, 1024], [1024]]"), "[[4096, 1024], [1024]]");
  EXPECT_EQ(Normalized("[[4096,1024],[1024]]"), "[[4096, 1024], [1024]]");
  EXPECT_EQ(Normalized("[\n    [\n        512\n    ],\n    [],\n    []\n]"), "[[512], [], []]");
  EXPECT_EQ(Normalized("[[], []]"), "[[], []]");
  // Strings keep their spaces and commas.
  EXPECT_EQ(Normalized("[ \"a, b\" ,[1]]"), "[\"a, b\", [1]]");
  EXPECT_EQ(Normalized("[\"x\\\" ,y\"]"), "[\"x\\\" ,y\"]");
}

// A host thread: aten::linear (dims) > aten::addmm (dims) > cudaLaunchKernel
// (corr 7) and aten::linear > cudaLaunchKernel (corr 8) outside addmm;
// record_function "fwd" (no dims) > cudaLaunchKernel (corr 9); a kernel for
// each, and a kernel (corr 10) whose launch is not in the file.
constexpr const char* kTrace = R"({"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "fwd", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
 {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 10, "dur": 100,
  "args": {"External id": 1, "Input Dims": [[4096,1024],[512,1024],[512]]}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 20, "dur": 50,
  "args": {"External id": 2, "Input Dims": [
      [512],
      [4096, 1024],
      [1024, 512]
  ]}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 30, "dur": 5,
  "args": {"correlation": 7, "External id": 2}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 80, "dur": 5,
  "args": {"correlation": 8, "External id": 1}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 200, "dur": 5,
  "args": {"correlation": 9}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::odd", "pid": 1, "tid": 1, "ts": 300, "dur": 5,
  "args": {"Input Dims": "not a list"}},
 {"ph": "X", "cat": "kernel", "name": "sm90_gemm", "pid": 0, "tid": 7, "ts": 40, "dur": 30,
  "args": {"correlation": 7, "device": 0, "stream": 7}},
 {"ph": "X", "cat": "kernel", "name": "bias_add", "pid": 0, "tid": 7, "ts": 90, "dur": 3,
  "args": {"correlation": 8, "device": 0, "stream": 7}},
 {"ph": "X", "cat": "kernel", "name": "relu", "pid": 0, "tid": 7, "ts": 210, "dur": 3,
  "args": {"correlation": 9, "device": 0, "stream": 7}},
 {"ph": "X", "cat": "kernel", "name": "lost", "pid": 0, "tid": 7, "ts": 220, "dur": 3,
  "args": {"correlation": 10, "device": 0, "stream": 7}}
]})";

const Track& TrackNamed(const Rank& r, TrackKind kind) {
  for (const Track& t : r.tracks) {
    if (t.kind == kind && !t.events.empty()) return t;
  }
  throw std::runtime_error("no track");
}

TEST(KinetoShapes, KernelsTakeTheInnermostLaunchingOpsDims) {
  const Rank r = ImportKinetoJson(kTrace);
  const Track& host = TrackNamed(r, TrackKind::kHostThread);
  const Track& dev = TrackNamed(r, TrackKind::kDeviceStream);
  auto shape = [&](const Track& t, std::string_view name) {
    for (size_t i = 0; i < t.events.size(); ++i) {
      if (r.strings.Get(t.events.name[i]) == name) return std::string(r.strings.Get(t.events.ShapeAt(i)));
    }
    return std::string("(no event)");
  };
  // cpu_ops keep their own, as the profiler writes them compactly.
  EXPECT_EQ(shape(host, "aten::linear"), "[[4096, 1024], [512, 1024], [512]]");
  EXPECT_EQ(shape(host, "aten::addmm"), "[[512], [4096, 1024], [1024, 512]]");
  EXPECT_EQ(shape(host, "fwd"), "");
  EXPECT_EQ(shape(host, "aten::odd"), "");
  EXPECT_EQ(shape(host, "cudaLaunchKernel"), "");
  EXPECT_EQ(shape(dev, "sm90_gemm"), "[[512], [4096, 1024], [1024, 512]]");
  EXPECT_EQ(shape(dev, "bias_add"), "[[4096, 1024], [512, 1024], [512]]");
  EXPECT_EQ(shape(dev, "relu"), "");
  EXPECT_EQ(shape(dev, "lost"), "");
  EXPECT_EQ(Stat(r, "link.shape"), 2);
  EXPECT_EQ(Stat(r, "skipped.shape.launch_outside_shaped_op"), 1);
  EXPECT_EQ(Stat(r, "skipped.shape.no_launch"), 1);
  EXPECT_EQ(Stat(r, "skipped.arg.Input Dims"), 1);
}

TEST(KinetoShapes, ATraceWithoutInputDimsHasNoShapeColumnsNorStats) {
  std::string t = kTrace;
  for (size_t p; (p = t.find("Input Dims")) != std::string::npos;) t.replace(p, 10, "Input Xxxx");
  const Rank r = ImportKinetoJson(t);
  for (const Track& tr : r.tracks) EXPECT_TRUE(tr.events.shape.empty());
  for (const auto& [k, v] : r.import_stats) EXPECT_EQ(k.find("shape"), std::string::npos) << k;
}

TEST(KinetoShapes, ConvertToNativeAndBackIsLossless) {
  // convert a.json -> b.mtrace -> c.mtrace: the same shapes, the same bytes.
  Trace a;
  a.metadata.source = "kineto";
  a.ranks.push_back(ImportKinetoJson(kTrace));
  const std::string b = testing_native::Encode(a);
  const Trace back = testing_native::Decode(b);
  EXPECT_TRUE(back == a);
  EXPECT_EQ(testing_native::Encode(back), b);
}

}  // namespace
}  // namespace moetrace
