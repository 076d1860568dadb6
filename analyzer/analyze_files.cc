#include "analyzer/analyze_files.h"

#include <algorithm>
#include <future>

#include "analyzer/hta/hta.h"
#include "formats/errors.h"
#include "formats/kineto/kineto_importer.h"
#include "formats/kineto/shared_trace_files.h"
#include "formats/open_trace.h"

namespace moetrace {

AnalyzedFiles AnalyzeFiles(const std::vector<std::string>& inputs, const AnalyzeOptions& options) {
  std::vector<std::string> kineto;
  for (const std::string& in : inputs) {
    if (DetectFormat(in) == TraceFormat::kKineto) kineto.push_back(in);
  }
  // Two readers per Kineto file: the importer and HTA's rows.
  auto shared = std::make_shared<SharedTraceFiles>(/*readers_per_file=*/2);
  std::vector<std::unique_ptr<TraceSource>> sources;
  for (const std::string& in : inputs) {
    const bool is_kineto = std::find(kineto.begin(), kineto.end(), in) != kineto.end();
    sources.push_back(is_kineto ? OpenKineto(in, shared) : OpenTrace(in));
  }
  // Started once the sources are open: opening (a few small reads) is
  // slowed several times over by page faults of an inflate running beside it.
  std::future<hta::HtaResult> hta_figures;
  if (!kineto.empty()) {
    hta_figures = std::async(std::launch::async,
                             [&kineto, shared] { return hta::ComputeHta(kineto, shared.get()); });
  }
  AnalyzedFiles out;
  out.trace = std::make_unique<ConcatSource>(std::move(sources));
  out.analysis = Analyze(*out.trace, options);
  if (hta_figures.valid()) {
    try {
      AddHtaResult(hta_figures.get(), &out.analysis);
    } catch (const InputError& e) {
      // Where HTA itself fails to load the set it gives no figures either.
      out.analysis.add_hta_errors(e.what());
    }
  }
  return out;
}

}  // namespace moetrace
