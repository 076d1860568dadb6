#include "reports/input_pair.h"

#include <algorithm>
#include <future>
#include <thread>
#include <utility>

#include "analyzer/analyze_files.h"
#include "analyzer/distributed.h"
#include "analyzer/gate.h"
#include "reports/inputs.h"

namespace moetrace {
namespace {

analysis::Analysis AnalyzeTrace(const std::string& path, int threads,
                                std::function<void(size_t, size_t)> progress, Communicator& comm) {
  AnalyzeOptions options;
  options.threads = threads;
  options.progress = std::move(progress);
  // Only the analysis is compared: the opened trace is dropped here, before
  // the other side is read.
  return std::move(AnalyzeDistributed({path}, options, comm).analysis);
}

}  // namespace

InputPair LoadInputPair(const std::string& a, const std::string& b, int threads,
                        const InputPairProgress& progress, Communicator& comm) {
  bool saved_a = false, saved_b = false;
  OnEveryProcess(comm, [&] {
    saved_a = IsAnalysisJson(a);
    saved_b = IsAnalysisJson(b);
  });
  const bool concurrent = threads != 1;
  // Two documents at once: each gets half the threads (ParseAnalysisJsonSplit).
  const int cores = threads > 0 ? threads : int(std::max(1u, std::thread::hardware_concurrency()));
  const int half = std::max(1, cores / 2);
  auto parsed = [&](size_t done, size_t total) {
    if (progress.parse) progress.parse(done, total);
  };
  InputPair out;
  if (saved_a && saved_b) {
    OnFirstProcess(comm, [&] {
      parsed(0, 2);
      if (!concurrent) {
        out.a = LoadAnalysisJson(a);
        parsed(1, 2);
        out.b = LoadAnalysisJson(b);
        parsed(2, 2);
        return;
      }
      // B on a thread of its own, A on this one: a bad A throws first (the
      // future's destructor waits for B's parse), a bad B from get().
      std::future<analysis::Analysis> fb =
          std::async(std::launch::async, [&b, half] { return LoadAnalysisJson(b, half); });
      out.a = LoadAnalysisJson(a, half);
      parsed(1, 2);
      out.b = fb.get();
      parsed(2, 2);
    });
    return out;
  }
  if (saved_a) {
    OnFirstProcess(comm, [&] {
      parsed(0, 1);
      out.a = LoadAnalysisJson(a, threads);  // alone: on every core
      parsed(1, 1);
    });
    out.b = AnalyzeTrace(b, threads, progress.analyze_b, comm);
    return out;
  }
  // A is a trace. A saved B is parsed while A is analysed: its error, if
  // any, waits in the future until A's analysis has succeeded (A's first).
  std::future<analysis::Analysis> fb;
  if (saved_b && concurrent && comm.rank() == 0) {
    fb = std::async(std::launch::async, [&b] { return LoadAnalysisJson(b); });
  }
  out.a = AnalyzeTrace(a, threads, progress.analyze_a, comm);
  if (saved_b) {
    OnFirstProcess(comm, [&] { out.b = fb.valid() ? fb.get() : LoadAnalysisJson(b); });
  } else {
    out.b = AnalyzeTrace(b, threads, progress.analyze_b, comm);
  }
  return out;
}

}  // namespace moetrace
