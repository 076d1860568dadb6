#include "reports/report.h"

namespace moetrace {

ReportData CollectReportData(analysis::Analysis analysis, const TraceSource* trace) {
  ReportData rd;
  rd.analysis = std::move(analysis);
  const analysis::Analysis& a = rd.analysis;
  // The heat map: the analysis carries every layer's tokens per expert
  // (no pass over the trace, and a saved analysis has it too).
  rd.experts = ExpertLoadsOf(a.cluster().expert_imbalance());
  if (!trace) return rd;
  int32_t rank = 0, step = -1;
  TimeNs start = 0, end = 0;
  Rank r;
  if (PickWorstStep(a, &rank, &step, &start, &end) && ReadRankById(*trace, a, rank, &r)) {
    rd.timeline = ExtractTimeline(r, start, end);
    rd.timeline->step = step;
  }
  if (a.cluster().memory().peak_bytes() > 0) {
    const int32_t peak_rank = a.cluster().memory().rank();
    if (rd.timeline && r.rank == peak_rank) {
      rd.memory = ExtractMemory(r);
    } else if (ReadRankById(*trace, a, peak_rank, &r)) {
      rd.memory = ExtractMemory(r);
    }
  }
  return rd;
}

}  // namespace moetrace
