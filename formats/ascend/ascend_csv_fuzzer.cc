// libFuzzer target: the CSV reader and every per-rank CSV importer on it,
// and the communication / cluster-output JSON readers on the same bytes.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "formats/ascend/ascend_csv.h"
#include "formats/ascend/cluster_output.h"
#include "formats/ascend/communication_json.h"
#include "formats/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    moetrace::CsvTable csv = moetrace::CsvTable::Parse(text, "fuzz.csv");
    moetrace::Rank rank;
    try { moetrace::ImportKernelDetails(csv, true, &rank); } catch (const moetrace::InputError&) {}
    try { moetrace::StepTraceReference(csv, 0); } catch (const moetrace::InputError&) {}
    std::vector<int32_t> ranks;
    try { moetrace::ClusterStepTraceReference(csv, &ranks); } catch (const moetrace::InputError&) {}
    std::map<std::string, int64_t> stats;
    try { moetrace::ReadClusterStepTrace(csv, &stats); } catch (const moetrace::InputError&) {}
    bool pta = false;
    try { pta = moetrace::ImportMemoryRecord(csv, &rank); } catch (const moetrace::InputError&) {}
    try { moetrace::ImportOperatorMemory(csv, !pta, &rank); } catch (const moetrace::InputError&) {}
  } catch (const moetrace::InputError&) {
  }
  try {
    moetrace::ReadCommunicationJson(text, "fuzz.json", -1);
    moetrace::ReadCommunicationJson(text, "fuzz.json", 0);
  } catch (const moetrace::InputError&) {
  }
  // The cluster folder's JSON files, lenient: only bad syntax may throw.
  const std::string json(text);
  moetrace::LenientStats odd;
  try { moetrace::ReadCommunicationJson(text, "fuzz.json", -1, &odd); } catch (const moetrace::InputError&) {}
  try { moetrace::ReadCommunicationMatrix(json, "fuzz.json", &odd); } catch (const moetrace::InputError&) {}
  try { moetrace::ReadCommunicationGroups(json, "fuzz.json", &odd); } catch (const moetrace::InputError&) {}
  return 0;
}
