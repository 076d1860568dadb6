#include "formats/ascend/kept_buffer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "formats/errors.h"

namespace moetrace {
namespace {

TEST(KeptBuffer, TheThreadsBufferIsReusedAndLentToOneAtATime) {
  const char* first = nullptr;
  {
    KeptBuffer a = KeptBuffer::Copy(KeptBuffer::kJsonText, "{\"a\":1}", 64);
    first = a.data();
    EXPECT_EQ(a.view(), "{\"a\":1}");
    EXPECT_EQ(a.capacity(), 7u + 64u);
    for (size_t i = 0; i < 64; ++i) ASSERT_EQ(a.data()[7 + i], 0) << i;  // simdjson's padding
    // A second buffer while the first is alive: its own memory, the first's
    // text untouched.
    KeptBuffer b = KeptBuffer::Copy(KeptBuffer::kJsonText, "[2]", 64);
    EXPECT_NE(b.data(), a.data());
    EXPECT_EQ(b.view(), "[2]");
    EXPECT_EQ(a.view(), "{\"a\":1}");
    // Another slot is lent independently.
    KeptBuffer c = KeptBuffer::Copy(KeptBuffer::kCsvText, "x,y\n", 0);
    EXPECT_NE(c.data(), a.data());
    EXPECT_EQ(c.view(), "x,y\n");
  }
  // The next file of the thread gets the same (already mapped) memory.
  KeptBuffer d = KeptBuffer::Copy(KeptBuffer::kJsonText, "[3]", 64);
  EXPECT_EQ(d.data(), first);
  EXPECT_EQ(d.view(), "[3]");
  KeptBuffer moved = std::move(d);
  EXPECT_EQ(moved.data(), first);
  EXPECT_EQ(moved.view(), "[3]");
}

TEST(KeptBuffer, LoadReadsTheWholeFileOrNamesIt) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "kept_buffer_test.json").string();
  std::string text(100000, 'x');
  text[0] = '[';
  text[99999] = ']';
  std::ofstream(path, std::ios::binary) << text;
  {
    KeptBuffer b = KeptBuffer::Load(KeptBuffer::kJsonText, path, 64);
    EXPECT_EQ(b.view(), text);
    EXPECT_EQ(b.data()[100000], 0);
  }
  std::remove(path.c_str());
  try {
    KeptBuffer::Load(KeptBuffer::kJsonText, path, 64);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": cannot open file");
  }
}

TEST(KeptBuffer, MapGivesTheFileAndZeroPaddingAtAnyLength) {
  // Load maps files over kKeptBufferBytes; Map is tested directly on small
  // ones, at a page boundary (padding from the zero pages after the file)
  // and inside a page (from the file's last page, past its end).
  for (size_t size : {size_t{4096}, size_t{5000}}) {
    const std::string path =
        (std::filesystem::temp_directory_path() / "kept_buffer_map_test.json").string();
    std::string text(size, 'y');
    text[size / 2] = '\n';
    std::ofstream(path, std::ios::binary) << text;
    {
      KeptBuffer b = KeptBuffer::Map(path, 64);
      ASSERT_NE(b.data(), nullptr) << size;
      EXPECT_EQ(b.view(), text);
      for (size_t i = 0; i < 64; ++i) ASSERT_EQ(b.data()[size + i], 0) << size << " " << i;
      KeptBuffer moved = std::move(b);  // the mapping moves, unmapped once
      EXPECT_EQ(moved.view(), text);
      EXPECT_EQ(b.data(), nullptr);
    }
    std::remove(path.c_str());
    EXPECT_EQ(KeptBuffer::Map(path, 64).data(), nullptr);  // missing: Load reports it
  }
}

}  // namespace
}  // namespace moetrace
