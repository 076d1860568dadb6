// Every real Ascend input converts: lossless through .mtrace, and the
// Perfetto and Chrome JSON writers accept it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "formats/ascend/ascend_importer.h"
#include "formats/chrome/chrome_json_writer.h"
#include "formats/native/native_reader.h"
#include "formats/native/native_writer.h"
#include "formats/perfetto/perfetto_writer.h"
#include "formats/real_traces_dir.h"

namespace moetrace {
namespace {

namespace fs = std::filesystem;

class AscendConvert : public ::testing::TestWithParam<const char*> {};

TEST_P(AscendConvert, RoundTripsThroughNativeAndExports) {
  std::string in = RealTracesRoot() + "/ascend/" + GetParam();
  if (!fs::exists(in)) GTEST_SKIP() << "real trace absent (set MOETRACE_REAL_TRACES): " << in;
  Trace t = ReadAll(*OpenAscend(in));
  ASSERT_FALSE(t.ranks.empty());
  std::string base = ::testing::TempDir() + "ascend_" + std::to_string(getpid()) + "_" +
                     std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                     fs::path(in).stem().string();
  auto write = [&](std::unique_ptr<TraceSink> sink) {
    for (const Rank& r : t.ranks) sink->AddRank(r);
    sink->Finish(t.metadata);
  };
  write(CreateNativeSink(base + ".mtrace"));
  Trace back = ReadAll(*OpenNative(base + ".mtrace"));
  EXPECT_TRUE(back == t) << "lossless .mtrace round trip";
  write(CreatePerfettoSink(base + ".pftrace"));
  write(CreateChromeJsonSink(base + ".json"));
  EXPECT_GT(fs::file_size(base + ".pftrace"), 0u);
  EXPECT_GT(fs::file_size(base + ".json"), 0u);
  for (const char* ext : {".mtrace", ".pftrace", ".json"}) fs::remove(base + ext);
}

INSTANTIATE_TEST_SUITE_P(RealTraces, AscendConvert,
                         ::testing::Values("advisor-timeline", "kernel_details-with-hccl.csv",
                                           "kernel_details-aic-metrics.csv", "cluster-output"));

}  // namespace
}  // namespace moetrace
