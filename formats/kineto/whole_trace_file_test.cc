// ReadWholeTraceFile must give exactly the bytes the streaming reader gives,
// whatever the gzip file looks like, and the same errors for bad ones.
#include "formats/kineto/whole_trace_file.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <simdjson.h>
#include <zlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "formats/errors.h"

namespace moetrace {
namespace {

namespace fs = std::filesystem;

class WholeTraceFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("moetrace_whole_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& bytes) {
    std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  fs::path dir_;
};

// One gzip member holding `text`.
std::string Gzip(const std::string& text) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, text.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = unsigned(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = unsigned(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string Text(size_t n) {
  std::string t = "{\"traceEvents\": [";
  for (size_t i = 0; t.size() < n; ++i) {
    t += "{\"ph\": \"X\", \"name\": \"k" + std::to_string(i % 13) + "\", \"ts\": " +
         std::to_string(i * 7) + "},\n";
  }
  return t;
}

std::string Str(const PaddedBuffer& b) { return std::string(b.view()); }

TEST_F(WholeTraceFileTest, GzipIsInflatedWholeAndPadded) {
  const std::string text = Text(3 << 20);
  std::string p = Write("t.json.gz", Gzip(text));
  WholeTraceFile w = ReadWholeTraceFile(p);
  EXPECT_TRUE(w.gzip);
  ASSERT_EQ(w.text.size(), text.size());
  EXPECT_EQ(Str(w.text), text);
  EXPECT_EQ(w.text.padded_size() - w.text.size(), size_t(simdjson::SIMDJSON_PADDING));
  for (size_t i = w.text.size(); i < w.text.padded_size(); ++i) ASSERT_EQ(w.text.data()[i], 0);
  EXPECT_EQ(Str(ReadTraceFile(p)), text);
}

TEST_F(WholeTraceFileTest, PlainFileIsReadAsIs) {
  const std::string text = Text(100000);
  WholeTraceFile w = ReadWholeTraceFile(Write("t.json", text));
  EXPECT_FALSE(w.gzip);
  EXPECT_EQ(Str(w.text), text);
}

TEST_F(WholeTraceFileTest, ConcatenatedMembersAreOneStream) {
  // The trailer announces only the last member's size: a small last member
  // leaves too little room, a large one too much. Both must read whole.
  const std::string a = Text(500000), b = Text(1000);
  for (const std::string& last : {b, Text(900000)}) {
    std::string p = Write("m.json.gz", Gzip(a) + Gzip(last));
    WholeTraceFile w = ReadWholeTraceFile(p);
    EXPECT_EQ(Str(w.text), a + last);
  }
}

TEST_F(WholeTraceFileTest, LyingTrailerGivesTheStreamingError) {
  const std::string text = Text(400000);
  std::string gz = Gzip(text);
  // ISIZE says 10 bytes (as a > 4 GiB file's would, mod 2^32): no room.
  gz[gz.size() - 4] = 10;
  gz[gz.size() - 3] = gz[gz.size() - 2] = gz[gz.size() - 1] = 0;
  // The CRC-checked stream now fails its length check in both readers.
  std::string p = Write("lie.json.gz", gz);
  std::string whole_error, stream_error;
  try { ReadWholeTraceFile(p); } catch (const InputError& e) { whole_error = e.what(); }
  try { ReadTraceFile(p); } catch (const InputError& e) { stream_error = e.what(); }
  EXPECT_EQ(whole_error, stream_error);
  EXPECT_NE(whole_error.find("lie.json.gz: compressed byte "), std::string::npos) << whole_error;
}

TEST_F(WholeTraceFileTest, CorruptAndTruncatedGiveTheStreamingErrors) {
  const std::string gz = Gzip(Text(300000));
  std::string corrupt = gz;
  for (size_t i = 100; i < 140; ++i) corrupt[i] = char(corrupt[i] ^ 0x5a);
  std::string truncated = gz.substr(0, gz.size() / 2);
  for (const std::string& bytes : {corrupt, truncated}) {
    std::string p = Write("bad.json.gz", bytes);
    std::string whole_error, stream_error;
    try { ReadWholeTraceFile(p); } catch (const InputError& e) { whole_error = e.what(); }
    try { ReadTraceFile(p); } catch (const InputError& e) { stream_error = e.what(); }
    EXPECT_FALSE(whole_error.empty());
    EXPECT_EQ(whole_error, stream_error);
    EXPECT_NE(whole_error.find("bad.json.gz: compressed byte "), std::string::npos)
        << whole_error;
  }
}

TEST_F(WholeTraceFileTest, MissingFileNamesIt) {
  try {
    ReadWholeTraceFile((dir_ / "none.json.gz").string());
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("none.json.gz: cannot open"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace moetrace
