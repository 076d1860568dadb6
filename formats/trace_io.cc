#include "formats/trace_io.h"

#include <stdexcept>
#include <unordered_map>

#include <fmt/core.h>

#include "formats/errors.h"

namespace moetrace {

void TraceSink::AddEncoded(std::unique_ptr<EncodedRank>) {
  throw std::logic_error("TraceSink::AddEncoded on a sink that has no encoder");
}

ConcatSource::ConcatSource(std::vector<std::unique_ptr<TraceSource>> parts)
    : parts_(std::move(parts)) {
  if (!parts_.empty()) metadata_ = parts_[0]->metadata();
  // A rank id known at open in two inputs (the same trace given twice, or
  // two traces of one job that overlap) would be analysed as two ranks.
  std::unordered_map<int32_t, size_t> first;  // rank id -> index_ entry
  for (size_t p = 0; p < parts_.size(); ++p) {
    for (size_t i = 0; i < parts_[p]->rank_count(); ++i) {
      const int32_t id = parts_[p]->RankId(i);
      if (id != kNone && parts_.size() > 1) {
        auto [it, fresh] = first.emplace(id, index_.size());
        if (!fresh && index_[it->second].first != p) {
          const auto [q, j] = index_[it->second];
          ThrowInputError(parts_[p]->RankPath(i), "",
                          fmt::format("rank {} is also in {}; give each rank once", id, parts_[q]->RankPath(j)));
        }
      }
      index_.emplace_back(p, i);
    }
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
