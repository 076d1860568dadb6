#include "reports/inputs.h"

#include <filesystem>
#include <fstream>

#include "analyzer/analyze_files.h"
#include "analyzer/distributed.h"
#include "analyzer/gate.h"
#include "formats/errors.h"

namespace moetrace {

bool IsAnalysisJson(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  char buf[256] = {};
  in.read(buf, sizeof buf);
  const std::string_view head(buf, static_cast<size_t>(in.gcount()));
  size_t i = head.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos || head[i] != '{') return false;
  i = head.find_first_not_of(" \t\r\n", i + 1);
  if (i == std::string_view::npos) return false;
  const std::string_view rest = head.substr(i);
  for (std::string_view key : {"\"cluster\"", "\"hta_errors\"", "\"label_checks\"", "\"ranks\""}) {
    if (rest.substr(0, key.size()) == key) return true;
  }
  return false;
}

LoadedInputs LoadInputs(const std::vector<std::string>& inputs, int threads,
                        std::function<void(size_t, size_t)> progress, Communicator& comm) {
  LoadedInputs out;
  bool saved = false;
  OnEveryProcess(comm, [&] {
    saved = inputs.size() == 1 && IsAnalysisJson(inputs[0]);
    for (const std::string& in : inputs) {
      if (!saved && IsAnalysisJson(in)) {
        ThrowInputError(in, "", "a saved analysis must be the only input");
      }
    }
  });
  if (saved) {
    OnFirstProcess(comm, [&] { out.analysis = LoadAnalysisJson(inputs[0], threads); });
    return out;
  }
  AnalyzeOptions options;
  options.threads = threads;
  options.progress = std::move(progress);
  AnalyzedFiles files = AnalyzeDistributed(inputs, options, comm);
  out.analysis = std::move(files.analysis);
  out.trace = std::move(files.trace);
  return out;
}

}  // namespace moetrace
