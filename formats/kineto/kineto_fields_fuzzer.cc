// libFuzzer target: the input chooses, for each field the Kineto reader
// uses, a value of any JSON type (kineto_fuzz_doc.h). The document it builds
// is readable, so the import must never fail: a readable document with odd
// values is read and the odd values counted.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "formats/errors.h"
#include "formats/kineto/kineto_fuzz_doc.h"
#include "formats/kineto/kineto_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string doc = moetrace::kineto_fuzz::TypeSwappedDocument(data, size);
  try {
    moetrace::ImportKinetoJson(doc, "fuzz.json");
  } catch (const moetrace::InputError& e) {
    std::fprintf(stderr, "a readable document was rejected: %s\n%s\n", e.what(), doc.c_str());
    std::abort();
  }
  return 0;
}
