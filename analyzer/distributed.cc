#include "analyzer/distributed.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <thread>

#include "analyzer/analyze_files.h"
#include "analyzer/hta/hta.h"
#include "analyzer/hta/imported_rows.h"
#include "analyzer/partial_io.h"
#include "analyzer/proto/partial.pb.h"
#include "formats/errors.h"
#include "formats/kineto/kineto_importer.h"
#include "formats/open_trace.h"

namespace moetrace {
namespace {

std::string Normal(const std::string& path) {
  return std::filesystem::path(path).lexically_normal().string();
}

// Runs `f`, returning its failure as a message (collectives must still be
// reached by this process: nothing may escape between two of them).
template <typename F>
std::string Catch(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::bad_alloc&) {
    return "out of memory";
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Process 0's HtaResult from the three HTA rounds (facts, plan, figures).
// `rows`: the rows of this process's Kineto files, by index in `files`.
std::optional<hta::HtaResult> DistributedHta(Communicator& comm, size_t file_count,
                                             std::map<size_t, hta::RankRows> rows,
                                             const std::map<size_t, std::string>& read_errors,
                                             std::string* plan_error) {
  partial::HtaFactsPart mine;
  for (const auto& [i, error] : read_errors) {
    auto* f = mine.add_files();
    f->set_file_index(i);
    f->set_error(error);
  }
  for (const auto& [i, r] : rows) {
    const hta::FileFacts facts = hta::FactsOf(r);
    auto* f = mine.add_files();
    f->set_file_index(i);
    f->set_rank(facts.rank);
    f->set_rows(facts.rows);
    f->set_bad_step_name(facts.bad_step_name);
    for (const std::string& s : facts.steps) f->add_steps(s);
    f->set_min_ts(facts.min_ts);
  }
  std::vector<std::string> parts = comm.Gather(mine.SerializeAsString());
  partial::HtaPlan plan;
  if (comm.rank() == 0) {
    std::vector<hta::FileFacts> facts(file_count);
    std::vector<std::string> errors(file_count);
    for (const std::string& bytes : parts) {
      partial::HtaFactsPart part;
      part.ParseFromString(bytes);
      for (const auto& f : part.files()) {
        hta::FileFacts& o = facts.at(f.file_index());
        errors[f.file_index()] = f.error();
        o.rank = f.rank();
        o.rows = f.rows();
        o.bad_step_name = f.bad_step_name();
        o.steps.insert(f.steps().begin(), f.steps().end());
        o.min_ts = f.min_ts();
      }
    }
    // HTA reads the files in order: the first that fails to read fails the set.
    for (const std::string& e : errors) {
      if (!e.empty() && plan.error().empty()) plan.set_error(e);
    }
    if (plan.error().empty()) {
      plan.set_error(Catch([&] {
        hta::SetPlan p = hta::PlanSet(facts);
        for (size_t k : p.kept) plan.add_kept(k);
        plan.set_step_filter(p.step_filter);
        plan.set_t0(p.t0);
        for (const std::string& w : p.warnings) plan.add_warnings(w);
      }));
    }
  }
  std::string plan_bytes = plan.SerializeAsString();
  comm.Broadcast(&plan_bytes);
  plan.ParseFromString(plan_bytes);
  if (!plan.error().empty()) {
    *plan_error = plan.error();
    return std::nullopt;
  }
  hta::SetPlan set;
  set.step_filter = plan.step_filter();
  set.t0 = plan.t0();
  partial::HtaRanksPart figures;
  for (uint64_t k : plan.kept()) {
    auto it = rows.find(k);
    if (it == rows.end()) continue;
    EncodeHtaRank(hta::ComputeRank(std::move(it->second), set), figures.add_ranks());
  }
  rows.clear();
  parts = comm.Gather(figures.SerializeAsString());
  if (comm.rank() != 0) return std::nullopt;
  hta::HtaResult result;
  result.warnings.assign(plan.warnings().begin(), plan.warnings().end());
  for (const std::string& bytes : parts) {
    partial::HtaRanksPart part;
    part.ParseFromString(bytes);
    for (const auto& r : part.ranks()) result.ranks.push_back(DecodeHtaRank(r));
  }
  std::sort(result.ranks.begin(), result.ranks.end(),
            [](const hta::HtaRank& a, const hta::HtaRank& b) { return a.rank < b.rank; });
  hta::FinishSet(&result);
  return result;
}

}  // namespace

std::vector<int> AssignRanks(const std::vector<uint64_t>& bytes, int processes) {
  std::vector<size_t> order(bytes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return bytes[a] > bytes[b]; });
  std::vector<uint64_t> load(static_cast<size_t>(std::max(processes, 1)), 0);
  std::vector<size_t> count(load.size(), 0);
  std::vector<int> owner(bytes.size(), 0);
  for (size_t i : order) {
    size_t best = 0;  // least bytes, then fewest ranks (unknown sizes are 0)
    for (size_t p = 1; p < load.size(); ++p) {
      if (load[p] < load[best] || (load[p] == load[best] && count[p] < count[best])) best = p;
    }
    owner[i] = static_cast<int>(best);
    load[best] += bytes[i];
    ++count[best];
  }
  return owner;
}

void AgreeOnError(Communicator& comm, const std::string& error) {
  if (comm.AllReduceMax(error.empty() ? 0 : 1) == 0) return;
  std::vector<std::string> errors = comm.Gather(error);
  if (comm.rank() != 0) throw PeerFailed{};
  for (const std::string& e : errors) {
    if (!e.empty()) throw AgreedInputError(e);
  }
  throw AgreedInputError("a process failed");
}

void OnEveryProcess(Communicator& comm, const std::function<void()>& f) {
  if (comm.size() == 1) return f();
  AgreeOnError(comm, Catch(f));
}

void OnFirstProcess(Communicator& comm, const std::function<void()>& f) {
  if (comm.size() == 1) return f();
  AgreeOnError(comm, comm.rank() == 0 ? Catch(f) : std::string());
}

analysis::Analysis AnalyzeShares(const TraceSource& source, const AnalyzeOptions& options,
                                 Communicator& comm, std::vector<int>* owner_out,
                                 const std::function<void(bool)>& ranks_done) {
  const size_t n = source.rank_count();
  std::vector<uint64_t> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = source.RankBytes(i);
  const std::vector<int> owner = AssignRanks(bytes, comm.size());
  if (owner_out) *owner_out = owner;
  if (comm.size() == 1) {  // Analyze itself: no part to serialize and merge
    analysis::Analysis a;
    try {
      a = Analyze(source, options);
    } catch (...) {
      if (ranks_done) ranks_done(true);
      throw;
    }
    if (ranks_done) ranks_done(false);
    return a;
  }
  std::vector<size_t> mine;
  for (size_t i = 0; i < n; ++i) {
    if (owner[i] == comm.rank()) mine.push_back(i);
  }
  PartialAnalysis part;
  std::string error = Catch([&] { part = AnalyzeRanks(source, mine, options); });
  if (ranks_done) ranks_done(!error.empty());
  AgreeOnError(comm, error);
  // For the mpi_analyze_fault test: this process fails alone between two
  // agreements, while the others go on to the gather of the parts.
  if (const char* f = std::getenv("MOETRACE_MPI_FAULT"); f && std::atoi(f) == comm.rank()) {
    throw InputError("MOETRACE_MPI_FAULT: process " + std::to_string(comm.rank()) +
                     " failed on its own");
  }
  // Process 0 keeps its own part as it is (Merge folds the others' in as if
  // their ranks had been added here, which is what one process does) and
  // merges each other part as it arrives, dropping its bytes before the
  // next: it holds the merged analysis and one part's bytes, not every part
  // at once (with all of them, copied out of MPI's buffer, plus its own
  // serialized, its peak was 3x one process's on the 718B trace).
  PartialAnalysis all;
  std::string part_bytes;
  if (comm.rank() == 0) {
    all = std::move(part);
  } else {
    part_bytes = SerializePartial(&part);
  }
  part = PartialAnalysis();
  std::string merge_error;
  comm.GatherEach(std::move(part_bytes), [&](int process, std::string bytes) {
    if (process == 0 || !merge_error.empty()) return;  // every part is still received
    merge_error = Catch([&] { MergePartial(bytes, &all); });
  });
  if (!merge_error.empty()) throw std::runtime_error(merge_error);
  analysis::Analysis out;
  if (comm.rank() == 0) out = FinishAnalysis(source.metadata(), std::move(all));
  return out;
}

AnalyzedFiles AnalyzeDistributed(const std::vector<std::string>& inputs,
                                 const AnalyzeOptions& options, Communicator& comm) {
  if (comm.size() == 1) return AnalyzeFiles(inputs, options);
  // Open every input as AnalyzeFiles does (Kineto files read whole, HTA's
  // rows taken from that pass): opening reads metadata and indexes only.
  OpenedInputs opened;
  std::string error = Catch([&] { opened = OpenInputs(inputs, options); });
  const std::vector<std::string>& kineto = opened.kineto;
  std::shared_ptr<hta::ImportedRows> imported = opened.imported;
  std::unique_ptr<TraceSource> source = std::move(opened.source);
  AgreeOnError(comm, error);

  const size_t n = source->rank_count();
  std::vector<int> owner;
  AnalyzedFiles result;
  analysis::Analysis& out = result.analysis;
  AnalyzeOptions with_figures = options;
  with_figures.rank_reference = opened.rank_reference;
  out = AnalyzeShares(*source, with_figures, comm, &owner,
                      [&](bool failed) { imported->Close(/*abandon=*/failed); });
  if (comm.rank() == 0) {
    error = Catch([&] { AddClusterOutputs(inputs, &out); });
  }
  AgreeOnError(comm, error);
  if (comm.rank() == 0) result.trace = std::move(source);
  if (kineto.empty()) return result;

  // HTA's figures: the Kineto files of this process's ranks (a listed file
  // no rank reads, e.g. a non-trace JSON HTA still opens: process 0).
  std::vector<std::string> files;
  for (const std::string& in : kineto) {
    for (std::string& f : hta::ListTraceFiles(in)) files.push_back(std::move(f));
  }
  std::map<std::string, int> file_owner;
  const TraceSource& ranks = comm.rank() == 0 ? *result.trace : *source;
  for (size_t i = 0; i < n; ++i) {
    std::string path = ranks.RankPath(i);
    if (!path.empty()) file_owner.emplace(Normal(path), owner[i]);
  }
  std::map<size_t, hta::RankRows> rows;
  std::map<size_t, std::string> read_errors;
  for (size_t k = 0; k < files.size(); ++k) {
    auto it = file_owner.find(Normal(files[k]));
    if ((it == file_owner.end() ? 0 : it->second) != comm.rank()) continue;
    std::string e = Catch([&] {
      std::optional<hta::RankRows> r = imported->Take(files[k]);
      rows.emplace(k, r ? std::move(*r) : hta::ParseKinetoRows(files[k], hta::ReadMaybeGzip(files[k])));
    });
    if (!e.empty()) read_errors.emplace(k, e);
  }
  std::string plan_error;
  std::optional<hta::HtaResult> figures =
      DistributedHta(comm, files.size(), std::move(rows), read_errors, &plan_error);
  if (comm.rank() == 0) {
    if (!plan_error.empty()) {
      out.add_hta_errors(plan_error);  // as AnalyzeFiles: HTA gives no figures then
    } else {
      KeepSelectedRanks(options.selection, &*figures);
      AddHtaResult(*figures, &out);
    }
  }
  return result;
}

}  // namespace moetrace
