// Helpers shared by the native format tests.
#pragma once

#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "formats/native/native_reader.h"
#include "formats/native/native_writer.h"
#include "formats/trace_io.h"

namespace moetrace::testing_native {

inline std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "native_" + std::to_string(getpid()) + "_" + name;
}

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void WriteTrace(const Trace& t, const std::string& path, NativeWriteOptions opts = {}) {
  auto sink = CreateNativeSink(path, opts);
  for (const Rank& r : t.ranks) sink->AddRank(r);
  sink->Finish(t.metadata);
}

// Writes `t` and returns the file's bytes.
inline std::string Encode(const Trace& t, NativeWriteOptions opts = {}) {
  std::string path = TempPath("encode.mtrace");
  WriteTrace(t, path, opts);
  std::string bytes = ReadFileBytes(path);
  std::remove(path.c_str());
  return bytes;
}

// Decodes a whole file held in memory.
inline Trace Decode(const std::string& bytes, NativeReadOptions opts = {}) {
  return ReadAll(*OpenNativeBuffer(bytes, "mem.mtrace", opts));
}

}  // namespace moetrace::testing_native
