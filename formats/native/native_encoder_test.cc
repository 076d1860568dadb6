// Ranks encoded off the sink's thread (CreateEncoder + AddEncoded) give the
// same file as AddRank.
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include <unistd.h>

#include "formats/native/native_writer.h"
#include "formats/sample_trace.h"

namespace moetrace {
namespace {

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(NativeEncoder, EncodedOnThreadsSameBytesAsAddRank) {
  Trace t = MakeSampleTrace(6, 300, 5);
  NativeWriteOptions opts;
  opts.max_block_rows = 128;  // several blocks per track
  const std::string dir = ::testing::TempDir();
  {
    auto sink = CreateNativeSink(dir + "enc_a.mtrace", opts);
    for (const Rank& r : t.ranks) sink->AddRank(r);
    sink->Finish(t.metadata);
  }
  {
    auto sink = CreateNativeSink(dir + "enc_b.mtrace", opts);
    std::vector<std::unique_ptr<EncodedRank>> enc(t.ranks.size());
    std::vector<std::thread> pool;
    for (size_t w = 0; w < 2; ++w) {
      pool.emplace_back([&, w] {
        auto encoder = sink->CreateEncoder();
        for (size_t i = w; i < t.ranks.size(); i += 2) enc[i] = encoder->Encode(t.ranks[i]);
      });
    }
    for (auto& th : pool) th.join();
    sink->AddRank(t.ranks[0]);  // mixing both ways is fine
    for (size_t i = 1; i < enc.size(); ++i) sink->AddEncoded(std::move(enc[i]));
    sink->Finish(t.metadata);
  }
  std::string a = ReadBytes(dir + "enc_a.mtrace"), b = ReadBytes(dir + "enc_b.mtrace");
  EXPECT_GT(a.size(), 1000u);
  EXPECT_TRUE(a == b);
}

TEST(NativeEncoder, ForeignEncodedRankIsRejected) {
  struct Other : EncodedRank {};
  auto sink = CreateNativeSink(::testing::TempDir() + "enc_c_" + std::to_string(::getpid()) + ".mtrace");
  EXPECT_THROW(sink->AddEncoded(std::make_unique<Other>()), std::invalid_argument);
  MemorySink memory;
  EXPECT_EQ(memory.CreateEncoder(), nullptr);
  EXPECT_THROW(memory.AddEncoded(std::make_unique<Other>()), std::logic_error);
}

}  // namespace
}  // namespace moetrace
