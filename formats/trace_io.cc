#include "formats/trace_io.h"

namespace moetrace {

Trace ReadAll(const TraceSource& source) {
  Trace t;
  t.metadata = source.metadata();
  t.ranks.reserve(source.rank_count());
  for (size_t i = 0; i < source.rank_count(); ++i) t.ranks.push_back(source.ReadRank(i));
  return t;
}

void Copy(const TraceSource& source, TraceSink& sink) {
  for (size_t i = 0; i < source.rank_count(); ++i) sink.AddRank(source.ReadRank(i));
  sink.Finish(source.metadata());
}

}  // namespace moetrace
