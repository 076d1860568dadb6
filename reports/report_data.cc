#include "reports/report.h"

namespace moetrace {

ReportData CollectReportData(analysis::Analysis analysis, const TraceSource* trace) {
  ReportData rd;
  rd.analysis = std::move(analysis);
  if (!trace) return rd;
  const analysis::Analysis& a = rd.analysis;
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
  // The heat map needs every rank's routing records: one more pass, only
  // when the analysis found some.
  if (a.cluster().expert_imbalance().source() == "routing") rd.experts = ExtractExpertLoads(*trace);
  return rd;
}

}  // namespace moetrace
