// For fuzzers: a readable Kineto document whose every field the readers
// use holds a value of a type the input chooses (numbers in and out of
// range, numeric and other strings, booleans, null, lists, objects, invalid
// UTF-8). Shared by the importer's and HTA's fuzzers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace moetrace {
namespace kineto_fuzz {

const char* const kKeys[] = {"ph", "ts", "dur", "id", "cat", "pid", "tid", "name", "args"};
const char* const kArgs[] = {
    "correlation", "External id", "external id", "stream", "streamId", "stream id", "device",
    "bytes", "Bytes", "name", "dtype", "Device Type", "Device Id", "Total Allocated",
    "Total Reserved", "Collective name", "Process Group Name", "Process Group ID",
    "Process Group Description", "In msg nelems", "Out msg nelems", "Group size",
    "Global rank start", "Global rank stride", "Src Rank", "Dst Rank", "In split size",
    "Out split size", "Process Group Ranks"};
const char* const kValues[] = {
    "7", "-3", "2.5", "1e30", "-1e30", "99999999999999999999", "1.7976931348623157e308",
    "\"12\"", "\" 13248 \"", "\"abc\"", "\"\"", "\"stream 7\"", "\"1.5\"", "true", "false",
    "null", "[1, 2]", "[1, \"2\", 3.5]", "[true]", "\"[0, 1, 2]\"", "{}", "{\"a\": [1]}",
    "\"X\"", "\"i\"", "\"s\"", "\"f\"", "\"M\"", "\"kernel\"", "\"cuda_runtime\"",
    "\"gpu_memcpy\"", "\"[memory]\"", "\"ProfilerStep#3\"", "\"ncclKernel_AllReduce\"",
    "\"cudaLaunchKernel\"", "\"\xC3\x28\xFF\"", "\"ac2g\"", "0", "\"0x1f\""};
constexpr size_t kNumValues = sizeof(kValues) / sizeof(kValues[0]);


inline std::string TypeSwappedDocument(const uint8_t* data, size_t size) {
  std::string doc = "{\"traceEvents\": [";
  size_t i = 0;
  auto next = [&]() -> uint8_t { return i < size ? data[i++] : 0; };
  for (int e = 0; e < 8 && i < size; ++e) {
    if (e) doc += ", ";
    doc += "{";
    bool first = true;
    for (const char* key : kKeys) {
      const uint8_t pick = next();
      if (pick == 255) continue;  // the key is absent
      if (!first) doc += ", ";
      first = false;
      doc += "\"" + std::string(key) + "\": ";
      if (std::string(key) == "args" && pick % 2 == 0) {
        doc += "{";
        const uint8_t n = next() % 6;
        for (uint8_t a = 0; a < n; ++a) {
          if (a) doc += ", ";
          doc += "\"" + std::string(kArgs[next() % (sizeof(kArgs) / sizeof(kArgs[0]))]) + "\": ";
          doc += kValues[next() % kNumValues];
        }
        doc += "}";
      } else {
        doc += kValues[pick % kNumValues];
      }
    }
    doc += "}";
  }
  doc += "]}";
  return doc;
}

}  // namespace kineto_fuzz
}  // namespace moetrace
