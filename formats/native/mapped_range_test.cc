#include "formats/native/mapped_range.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace moetrace::native {
namespace {

constexpr size_t kPage = 4096;

// A file of `pages` pages, byte i holding i % 251, opened read-only.
struct TempFile {
  explicit TempFile(const std::string& name, size_t pages) {
    path = ::testing::TempDir() + "mapped_" + std::to_string(getpid()) + "_" + name;
    std::string bytes(pages * kPage, '\0');
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i % 251);
    FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  }
  ~TempFile() {
    ::close(fd);
    std::remove(path.c_str());
  }
  void ShrinkTo(size_t bytes) const { ASSERT_EQ(::truncate(path.c_str(), off_t(bytes)), 0); }
  std::string path;
  int fd = -1;
};

struct ReadByte {
  const uint8_t* at;
  uint8_t value;
};
void Read(void* p) {
  auto* r = static_cast<ReadByte*>(p);
  r->value = *static_cast<const volatile uint8_t*>(r->at);
}

TEST(MappedRange, MapsTheRangeAskedFor) {
  TempFile f("range", 3);
  MappedRange m;
  ASSERT_TRUE(m.Map(f.fd, 5000, 3000));  // not page aligned: pages 1..1 (4096..8191)
  EXPECT_TRUE(m.Covers(5000, 3000));
  EXPECT_TRUE(m.Covers(7999, 1));
  EXPECT_FALSE(m.Covers(4999, 2));
  EXPECT_FALSE(m.Covers(7999, 2));
  EXPECT_EQ(*m.At(5000), 5000 % 251);
  EXPECT_EQ(*m.At(7999), 7999 % 251);
  EXPECT_EQ(m.OffsetOf(reinterpret_cast<uintptr_t>(m.At(6001))), 6001u);
  m.Unmap();
  EXPECT_FALSE(m.mapped());
  EXPECT_FALSE(m.Covers(5000, 1));
}

// The file shrinks under the mapping: reading a lost page is a SIGBUS that
// the guard turns into `false` with the faulting address, again and again
// (the handler leaves SIGBUS unblocked), on any thread; the pages that are
// left still read.
TEST(MappedRange, ShrunkFileFaultsAreCaughtByTheGuard) {
  TempFile f("shrink", 4);
  MappedRange m;
  ASSERT_TRUE(m.Map(f.fd, 0, 4 * kPage));
  f.ShrinkTo(kPage);
  for (int round = 0; round < 3; ++round) {
    ReadByte r{m.At(2 * kPage + 17), 0};
    uintptr_t fault = 0;
    EXPECT_FALSE(RunGuarded(m.lo(), m.hi(), Read, &r, &fault));
    EXPECT_EQ(fault, reinterpret_cast<uintptr_t>(m.At(2 * kPage + 17)));
    EXPECT_EQ(m.OffsetOf(fault), 2 * kPage + 17);
  }
  ReadByte ok{m.At(100), 0};
  uintptr_t fault = 0;
  EXPECT_TRUE(RunGuarded(m.lo(), m.hi(), Read, &ok, &fault));
  EXPECT_EQ(ok.value, 100);
  EXPECT_EQ(fault, 0u);
  uint64_t other_thread_fault = 0;
  std::thread t([&] {
    ReadByte r{m.At(3 * kPage), 0};
    uintptr_t a = 0;
    if (!RunGuarded(m.lo(), m.hi(), Read, &r, &a)) other_thread_fault = m.OffsetOf(a);
  });
  t.join();
  EXPECT_EQ(other_thread_fault, 3 * kPage);
}

// Outside a guard (or outside its range) a SIGBUS is what it always was:
// the process dies of it.
TEST(MappedRangeDeathTest, UnguardedFaultStillKills) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  TempFile f("unguarded", 2);
  MappedRange m;
  ASSERT_TRUE(m.Map(f.fd, 0, 2 * kPage));
  f.ShrinkTo(0);
  // The handler is installed (by a guard that caught nothing) before the
  // unguarded read, so this checks its fall-through to the default action.
  ReadByte first{m.At(0), 0};
  uintptr_t fault = 0;
  ASSERT_FALSE(RunGuarded(m.lo(), m.hi(), Read, &first, &fault));
  auto unguarded = [&] {
    ReadByte r{m.At(kPage), 0};
    Read(&r);
  };
  EXPECT_EXIT(unguarded(), ::testing::KilledBySignal(SIGBUS), "");
  // Armed, but for another range: not caught either.
  auto other_range = [&] {
    ReadByte r{m.At(kPage), 0};
    uintptr_t a = 0;
    RunGuarded(m.At(0), m.At(1), Read, &r, &a);
  };
  EXPECT_EXIT(other_range(), ::testing::KilledBySignal(SIGBUS), "");
}

}  // namespace
}  // namespace moetrace::native
