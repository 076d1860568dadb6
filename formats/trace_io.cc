#include "formats/trace_io.h"

#include <stdexcept>

namespace moetrace {

void TraceSink::AddEncoded(std::unique_ptr<EncodedRank>) {
  throw std::logic_error("TraceSink::AddEncoded on a sink that has no encoder");
}

ConcatSource::ConcatSource(std::vector<std::unique_ptr<TraceSource>> parts)
    : parts_(std::move(parts)) {
  if (!parts_.empty()) metadata_ = parts_[0]->metadata();
  for (size_t p = 0; p < parts_.size(); ++p) {
    for (size_t i = 0; i < parts_[p]->rank_count(); ++i) index_.emplace_back(p, i);
  }
}

ConcatSource::ConcatSource(std::vector<std::unique_ptr<TraceSource>> parts, Metadata metadata)
    : ConcatSource(std::move(parts)) {
  metadata_ = std::move(metadata);
}

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
