// libFuzzer target: any byte string must import or throw InputError, never
// crash, hang or allocate without bound.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "formats/errors.h"
#include "formats/kineto/kineto_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    moetrace::ImportKinetoJson(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
  } catch (const moetrace::InputError&) {
  }
  return 0;
}
