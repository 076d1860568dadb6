#include "analyzer/analyze.h"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "analyzer/cluster.h"
#include "analyzer/hta/hta.h"
#include "analyzer/label_check.h"
#include "analyzer/metrics_proto.h"
#include "analyzer/ops/ops_proto.h"
#include "analyzer/rl/rl_section.h"
#include "formats/errors.h"
#include "formats/native/native_reader.h"
#include "formats/rank_reference.h"

namespace moetrace {

analysis::Analysis Analyze(const TraceSource& source, const AnalyzeOptions& options) {
  std::vector<size_t> all(source.rank_count());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return FinishAnalysis(source.metadata(), AnalyzeRanks(source, all, options));
}

PartialAnalysis AnalyzeRanks(const TraceSource& source, const std::vector<size_t>& indices,
                             const AnalyzeOptions& options) {
  const size_t n = indices.size();
  size_t threads = options.threads > 0 ? static_cast<size_t>(options.threads)
                                       : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, std::max<size_t>(n, 1));

  PartialAnalysis out;
  std::vector<analysis::RankAnalysis> ranks(n);
  std::vector<char> analysed(n, 0);
  std::vector<int32_t> read_ids(n, kNone);  // of the ranks read, for their figures
  std::mutex mu;
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};  // a worker failed: the others end their run early
  size_t done = 0;
  std::exception_ptr error;
  const uint64_t capacity = source.metadata().device_memory_bytes;

  // Each worker holds one rank at a time: memory is bounded by the thread
  // count, whatever the number of ranks. The worker's Rank is reused
  // (ReadRankInto): once grown, reading a rank allocates nothing.
  // Workers claim runs of consecutive ranks, not single ranks: members of a
  // TP or EP group are usually consecutive rank ids, so the collectives a
  // run's ranks share stay in this core's cache between members (one rank
  // at a time from a shared counter, consecutive ranks alternate between
  // cores and every collective moves between the two caches). Short runs
  // when ranks are few, so that every worker still gets work.
  const size_t run = std::clamp<size_t>(n / (threads * 16), 1, 32);
  auto worker = [&] {
    // The rank is read only for AnalyzeRank and the accumulator, which use
    // none of these columns: not decoding them saves ~4% of `analyze` on
    // the 718B trace (native_reader.h).
    SkipColumnsAnalyzeIgnores skip_columns;
    RankScratch scratch;
    ops::OpsScratch ops_scratch;
    Rank rank;
    size_t claimed = 0, claimed_end = 0;
    for (;;) {
      if (stop.load(std::memory_order_relaxed)) return;
      if (claimed == claimed_end) {
        claimed = next.fetch_add(run);
        claimed_end = std::min(claimed + run, n);
      }
      if (claimed >= n) return;
      const size_t i = claimed++;
      bool read = false;
      try {
        source.ReadRankInto(indices[i], &rank);
        read = true;
        read_ids[i] = rank.rank;
        RankMetrics m = AnalyzeRank(rank, &scratch);
        FillRank(m, capacity, &ranks[i]);
        const ops::RankOps rank_ops = ops::SummarizeOps(rank, m, scratch, &ops_scratch);
        ops::FillOperators(rank_ops, rank.strings, ranks[i].mutable_operators());
        // Outside the lock: Add locks only the shards it touches.
        out.cluster.Add(m, rank);
        out.cluster.AddOps(rank_ops, rank);
        rl::CardPhases phases = rl::CollectPhases(rank);
        {
          std::lock_guard<std::mutex> lock(mu);
          if (!phases.ranges.empty()) out.rl.push_back(std::move(phases));
          analysed[i] = 1;
          ++done;
          if (options.progress) options.progress(done, n);
        }
        Recycle(std::move(m), &scratch);
      } catch (const InputError& e) {
        std::lock_guard<std::mutex> lock(mu);
        if (options.skip_bad_ranks) {
          analysis::SkippedRank skipped;
          if (read) skipped.set_rank(rank.rank);
          std::string file = source.RankPath(indices[i]);
          skipped.set_file(file.empty() ? source.metadata().origin : file);
          skipped.set_error(e.what());
          out.skipped.emplace_back(indices[i], std::move(skipped));
          ++done;
          if (options.progress) options.progress(done, n);
          continue;
        }
        if (!error) error = std::current_exception();
        next.store(n);
        stop.store(true);
        return;
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        next.store(n);
        stop.store(true);
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);

  for (size_t i = 0; i < n; ++i) {
    if (analysed[i]) out.ranks.emplace_back(indices[i], std::move(ranks[i]));
  }
  if (options.rank_reference) {
    // A rank read, even if its analysis then failed (--skip-bad-ranks): a
    // source that scans when opening would have its figures too.
    std::erase(read_ids, kNone);
    out.reference = options.rank_reference->Take(read_ids);
  }
  return out;
}

analysis::Analysis FinishAnalysis(const Metadata& metadata, PartialAnalysis part) {
  // Source order, then rank id: the same order whichever process analysed
  // which rank (a stable sort by rank id of the source order).
  auto by_index = [](const auto& a, const auto& b) { return a.first < b.first; };
  std::sort(part.ranks.begin(), part.ranks.end(), by_index);
  std::sort(part.skipped.begin(), part.skipped.end(), by_index);
  std::stable_sort(part.ranks.begin(), part.ranks.end(),
                   [](const auto& a, const auto& b) { return a.second.rank() < b.second.rank(); });
  analysis::Analysis out;
  out.set_source(metadata.source);
  for (auto& [index, r] : part.ranks) {
    // The Ascend profiler's own figures only make sense on its traces.
    if (metadata.source != "ascend") r.clear_ascend();
    *out.add_ranks() = std::move(r);
  }
  for (auto& [index, s] : part.skipped) *out.add_skipped_ranks() = std::move(s);
  part.cluster.Finish(metadata, &out);
  rl::FillRl(std::move(part.rl), metadata, &out);
  if (HasRankReference(metadata.reference)) {
    Metadata resolved = metadata;
    resolved.reference = ResolveRankReference(metadata.reference, part.reference);
    CheckLabels(resolved, &out);
  } else {
    CheckLabels(metadata, &out);
  }
  return out;
}

void AddHtaSection(const std::vector<std::string>& paths, analysis::Analysis* analysis) {
  AddHtaResult(hta::ComputeHta(paths), analysis);
}

void AddHtaResult(const hta::HtaResult& res, analysis::Analysis* analysis) {
  for (const std::string& e : res.errors) analysis->add_hta_errors(e);
  for (const std::string& w : res.warnings) analysis->add_warnings(w);
  for (const hta::HtaRank& r : res.ranks) {
    analysis::RankAnalysis* target = nullptr;
    for (auto& ra : *analysis->mutable_ranks()) {
      if (ra.rank() == r.rank) target = &ra;
    }
    if (!target) {
      target = analysis->add_ranks();
      target->set_rank(static_cast<int32_t>(r.rank));
    }
    analysis::Hta* h = target->mutable_hta();
    if (r.temporal) {
      analysis::HtaTemporal* t = h->mutable_temporal();
      t->set_kernel_span_us(r.temporal->kernel_span_us);
      t->set_idle_us(r.temporal->idle_us);
      t->set_compute_us(r.temporal->compute_us);
      t->set_non_compute_us(r.temporal->non_compute_us);
      t->set_idle_pct(r.temporal->idle_pct);
      t->set_compute_pct(r.temporal->compute_pct);
      t->set_non_compute_pct(r.temporal->non_compute_pct);
    }
    h->set_comm_comp_overlap_pct(r.comm_comp_overlap_pct);  // NaN is written as null
    if (r.idle_by_stream) {
      for (const auto& [stream, s] : *r.idle_by_stream) {
        analysis::HtaIdle& o = (*h->mutable_idle_by_stream())[std::to_string(stream)];
        if (s.host_wait_us) o.set_host_wait_us(*s.host_wait_us);
        if (s.kernel_wait_us) o.set_kernel_wait_us(*s.kernel_wait_us);
        if (s.other_us) o.set_other_us(*s.other_us);
      }
    }
    analysis::HtaLaunch* l = h->mutable_launch();
    l->set_count(r.launch.count);
    l->set_launch_delay_mean_us(r.launch.launch_delay_mean_us.value_or(NAN));
    l->set_launch_delay_p50_us(r.launch.launch_delay_p50_us.value_or(NAN));
  }
  std::stable_sort(analysis->mutable_ranks()->begin(), analysis->mutable_ranks()->end(),
                   [](const auto& a, const auto& b) { return a.rank() < b.rank(); });
}

}  // namespace moetrace
