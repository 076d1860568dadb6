// libFuzzer target: any bytes as an Ascend / msprof SQLite export. The input
// is written to a temporary file (the importer opens files read-only and
// immutable by path) and read; an InputError is the only allowed failure.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "formats/ascend_db/ascend_db_importer.h"
#include "formats/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = [] {
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp && *tmp ? tmp : "/tmp") + "/ascend_db_fuzz_" +
           std::to_string(::getpid()) + "_msprof_0.db";
  }();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    auto src = moetrace::OpenAscendDb(path);
    for (size_t i = 0; i < src->rank_count(); ++i) src->ReadRank(i);
  } catch (const moetrace::InputError&) {
  }
  std::remove(path.c_str());
  return 0;
}
