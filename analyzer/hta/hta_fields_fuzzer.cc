// libFuzzer target: HTA's figures of a readable Kineto document with a value
// of any type in every field (formats/kineto/kineto_fuzz_doc.h), from the
// importer's pass (as analyze gets them) and from HTA's own reader: no
// crash, no undefined behaviour (a ts of 1e30 cast to int64), and the two
// readers give the same rows.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/hta/hta.h"
#include "analyzer/hta/imported_rows.h"
#include "analyzer/hta/kineto_rows.h"
#include "formats/errors.h"
#include "formats/kineto/kineto_fuzz_doc.h"
#include "formats/kineto/kineto_rank_reader.h"
#include "formats/kineto/padded_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace moetrace;
  const std::string doc = kineto_fuzz::TypeSwappedDocument(data, size);
  try {
    hta::ImportedRows imported;
    PaddedBuffer buf = PaddedBuffer::FromString(doc);
    ReadKinetoRank(buf, "fuzz.json", 0, "default", nullptr, {},
                   imported.ObserverFor("fuzz.json", false), 1);
    imported.Close();
    std::optional<hta::RankRows> rows = imported.Take("fuzz.json");
    hta::RankRows own = hta::ParseKinetoRows("fuzz.json", doc);
    if (rows && rows->ts != own.ts) std::abort();  // one set of semantics
    std::vector<hta::RankRows> set;
    set.push_back(std::move(own));
    hta::ComputeHtaOnRows(std::move(set));
  } catch (const InputError&) {
  }
  return 0;
}
