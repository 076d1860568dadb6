// libFuzzer target: trace_view.json import and the Overlap Analysis scan.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "formats/ascend/trace_view.h"
#include "formats/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    moetrace::Rank rank;
    moetrace::ImportTraceView(text, "fuzz.json", &rank);
  } catch (const moetrace::InputError&) {
  }
  try {
    moetrace::ScanOverlapAnalysis(text, "fuzz.json", 0);
  } catch (const moetrace::InputError&) {
  }
  return 0;
}
