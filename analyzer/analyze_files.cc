#include "analyzer/analyze_files.h"

#include <algorithm>
#include <future>
#include <thread>

#include "analyzer/cluster_output.h"
#include "analyzer/hta/hta.h"
#include "analyzer/hta/imported_rows.h"
#include "formats/ascend/ascend_importer.h"
#include "formats/ascend/cluster_output.h"
#include "formats/errors.h"
#include "formats/kineto/kineto_importer.h"
#include "formats/open_trace.h"

namespace moetrace {

OpenedInputs OpenInputs(const std::vector<std::string>& inputs, const AnalyzeOptions& options) {
  OpenedInputs out;
  for (const std::string& in : inputs) {
    if (DetectFormat(in) == TraceFormat::kKineto) out.kineto.push_back(in);
  }
  // The importer reads each Kineto file whole, in one pass that also gives
  // HTA's rows. Shared with the sources, which outlive the analysis
  // (`report` reads ranks again for its timeline), and with HTA's thread.
  out.imported = std::make_shared<hta::ImportedRows>();
  KinetoOpenOptions kineto_options;
  kineto_options.whole_files = true;
  kineto_options.threads = options.threads > 0 ? options.threads
                                               : int(std::max(1u, std::thread::hardware_concurrency()));
  kineto_options.observer = [imported = out.imported](const std::string& path, bool inflated) {
    return imported->ObserverFor(path, inflated);
  };
  // One Ascend input: its reads bring the Overlap Analysis figures, which
  // FinishAnalysis puts in place (one parse of each trace_view.json, not
  // two). Of several inputs only the first's metadata is used: they open
  // as before.
  AscendOpenOptions ascend_options;
  if (inputs.size() == 1) ascend_options.figures_with_ranks = std::make_shared<RankReference>();
  std::vector<std::unique_ptr<TraceSource>> sources;
  for (const std::string& in : inputs) {
    const bool is_kineto = std::find(out.kineto.begin(), out.kineto.end(), in) != out.kineto.end();
    if (is_kineto) {
      sources.push_back(OpenKineto(in, kineto_options));
    } else if (ascend_options.figures_with_ranks && DetectFormat(in) == TraceFormat::kAscend) {
      sources.push_back(OpenAscend(in, ascend_options));
      out.rank_reference = ascend_options.figures_with_ranks;
    } else {
      sources.push_back(OpenTrace(in));
    }
  }
  out.source = SelectFrom(std::make_unique<ConcatSource>(std::move(sources)), options.selection);
  return out;
}

void KeepSelectedRanks(const TraceSelection& selection, hta::HtaResult* figures) {
  const std::vector<int32_t>& keep = selection.ranks;
  if (keep.empty()) return;
  std::erase_if(figures->ranks, [&](const hta::HtaRank& r) {
    return !std::binary_search(keep.begin(), keep.end(), r.rank);
  });
}

void AddClusterOutputs(const std::vector<std::string>& inputs, analysis::Analysis* analysis) {
  // msprof-analyze's cluster_analysis_output (the input itself, or inside a
  // profiling root next to the rank folders): one per analysis.
  std::string cluster_dir;
  for (const std::string& in : inputs) {
    std::string dir;
    if (!FindClusterOutputDir(in, &dir)) continue;
    if (!cluster_dir.empty()) {
      analysis->add_warnings("cluster output " + dir + " ignored: only " + cluster_dir + " is used");
      continue;
    }
    cluster_dir = dir;
    AddClusterOutput(ReadClusterOutput(dir), analysis);
  }
}

AnalyzedFiles AnalyzeFiles(const std::vector<std::string>& inputs, const AnalyzeOptions& options) {
  OpenedInputs opened = OpenInputs(inputs, options);
  const std::vector<std::string>& kineto = opened.kineto;
  hta::ImportedRows* imported = opened.imported.get();
  // HTA's figures on a thread of their own: they wait for each file's rows
  // and are computed while the ranks are analyzed.
  std::future<hta::HtaResult> hta_figures;
  if (!kineto.empty()) {
    hta_figures = std::async(std::launch::async,
                             [kineto, rows = opened.imported] { return hta::ComputeHta(kineto, rows.get()); });
  }
  // If the analysis fails, HTA's thread must neither wait for rows nor read
  // the files itself: it is abandoned before its future is waited for.
  struct AbandonAtExit {
    hta::ImportedRows* rows;
    ~AbandonAtExit() { rows->Close(/*abandon=*/true); }
  } abandon_at_exit{imported};
  AnalyzedFiles out;
  out.trace = std::move(opened.source);
  AnalyzeOptions with_figures = options;
  with_figures.rank_reference = opened.rank_reference;
  out.analysis = Analyze(*out.trace, with_figures);
  imported->Close();
  if (hta_figures.valid()) {
    try {
      hta::HtaResult figures = hta_figures.get();
      KeepSelectedRanks(options.selection, &figures);
      AddHtaResult(figures, &out.analysis);
    } catch (const InputError& e) {
      // Where HTA itself fails to load the set it gives no figures either.
      out.analysis.add_hta_errors(e.what());
    }
  }
  AddClusterOutputs(inputs, &out.analysis);
  return out;
}

}  // namespace moetrace
