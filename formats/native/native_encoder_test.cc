// Ranks encoded off the sink's thread (CreateEncoder + AddEncoded) give the
// same file as AddRank.
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include <unistd.h>

#include "formats/errors.h"
#include "formats/native/native_writer.h"
#include "formats/ordered_ranks.h"
#include "formats/sample_trace.h"
#include "formats/formats_test_util.h"

namespace moetrace {
namespace {

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
        for (size_t i = w; i < t.ranks.size(); i += 2) enc[i] = encoder->Encode(t.ranks[i], i);
      });
    }
    for (auto& th : pool) th.join();
    sink->AddRank(t.ranks[0]);  // mixing both ways is fine
    for (size_t i = 1; i < enc.size(); ++i) sink->AddEncoded(std::move(enc[i]));
    sink->Finish(t.metadata);
  }
  std::string a = testing_formats::FileBytes(dir + "enc_a.mtrace"), b = testing_formats::FileBytes(dir + "enc_b.mtrace");
  EXPECT_GT(a.size(), 1000u);
  EXPECT_TRUE(a == b);
}

// convert's path: read and encoded on workers, appended here in order.
TEST(NativeEncoder, WriteRanksInOrderSameBytesOnAnyThreadCount) {
  const Trace t = MakeSampleTrace(9, 300, 7);
  NativeWriteOptions opts;
  opts.max_block_rows = 128;
  const std::string dir = ::testing::TempDir();
  {
    auto sink = CreateNativeSink(dir + "order_ref.mtrace", opts);
    for (const Rank& r : t.ranks) sink->AddRank(r);
    sink->Finish(t.metadata);
  }
  const std::string ref = testing_formats::FileBytes(dir + "order_ref.mtrace");
  MemorySource src(t);
  for (size_t threads : {1, 2, 4}) {
    const std::string path = dir + "order_" + std::to_string(threads) + ".mtrace";
    auto sink = CreateNativeSink(path, opts);
    size_t calls = 0;
    WriteRanksInOrder(src, threads, 3, *sink, [&](size_t i, const Rank& r) {
      EXPECT_EQ(i, calls++);
      EXPECT_EQ(r.rank, t.ranks[i].rank);
    });
    sink->Finish(t.metadata);
    EXPECT_EQ(calls, 9u);
    EXPECT_TRUE(testing_formats::FileBytes(path) == ref) << threads << " threads";
  }
  // A sink without encoders gets AddRank, in order.
  MemorySink memory;
  WriteRanksInOrder(src, 3, 3, memory, [](size_t, const Rank&) {});
  ASSERT_EQ(memory.trace().ranks.size(), 9u);
  for (size_t i = 0; i < 9; ++i) EXPECT_EQ(memory.trace().ranks[i].rank, t.ranks[i].rank);
}

// A rank that cannot be read: the ranks before it are written, then its error.
TEST(NativeEncoder, WriteRanksInOrderStopsAtTheFirstBadRank) {
  struct BadFourth : MemorySource {
    using MemorySource::MemorySource;
    void ReadRankInto(size_t i, Rank* out) const override {
      if (i == 4) throw InputError("bad rank 4");
      MemorySource::ReadRankInto(i, out);
    }
  };
  BadFourth src(MakeSampleTrace(9, 50, 2));
  MemorySink memory;
  EXPECT_THROW(WriteRanksInOrder(src, 2, 3, memory, [](size_t, const Rank&) {}), InputError);
  EXPECT_EQ(memory.trace().ranks.size(), 4u);
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
