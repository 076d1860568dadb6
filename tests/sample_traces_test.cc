// sample-traces/ holds small traces the project makes itself. This test
// checks that each committed file is exactly what the code produces today;
// with MOETRACE_REGENERATE_SAMPLES=1 it rewrites them instead
// (scripts/make-sample-traces.sh).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "formats/native/native_writer.h"
#include "formats/sample_trace.h"
#include "formats/trace_io.h"
#include "tests/run_command.h"

namespace moetrace::testing {
namespace {

void CheckOrRegenerate(const std::string& name, const Trace& trace) {
  std::string committed = std::string(MOETRACE_SOURCE_DIR) + "/sample-traces/" + name;
  bool regenerate = std::getenv("MOETRACE_REGENERATE_SAMPLES") != nullptr;
  std::string path = regenerate ? committed : TempDir("samples") + "/" + name;
  MemorySource source(trace);
  auto sink = CreateNativeSink(path);
  Copy(source, *sink);
  if (regenerate) return;
  ASSERT_TRUE(std::filesystem::exists(committed)) << committed << " is missing";
  EXPECT_EQ(ReadFile(path), ReadFile(committed))
      << committed << " differs from what the code writes; run scripts/make-sample-traces.sh";
}

TEST(SampleTraces, SampleMtraceIsReproducible) {
  CheckOrRegenerate("sample.mtrace", MakeSampleTrace(4, 64, 1));
}

}  // namespace
}  // namespace moetrace::testing
