// Streaming interfaces: every reader is a TraceSource, every writer a
// TraceSink, so a trace of thousands of ranks is never held whole.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "formats/trace.h"

namespace moetrace {

class TraceSource {
 public:
  virtual ~TraceSource() = default;
  // Trace-wide metadata. Available right after opening.
  virtual const Metadata& metadata() const = 0;
  virtual size_t rank_count() const = 0;
  // Reads the rank at `index` (0 <= index < rank_count(); not the rank id).
  // Safe to call concurrently for different indices. Throws InputError.
  virtual Rank ReadRank(size_t index) const = 0;
  // Same as `*out = ReadRank(index)`, but a source may decode into `out`
  // in place, reusing the capacity of its vectors: a caller that reads many
  // ranks into one Rank allocates nothing once it has grown (the native
  // reader does so). Same thread safety as ReadRank, for distinct `out`.
  // When it throws, `*out` is valid but unspecified.
  virtual void ReadRankInto(size_t index, Rank* out) const { *out = ReadRank(index); }
  // The id of the rank at `index` when the source knows it without reading
  // the rank (native index, Kineto headers), else kNone.
  virtual int32_t RankId(size_t index) const { return kNone; }
  // Roughly the bytes a read of rank `index` touches (file size, or the
  // rank's records in an .mtrace): spreads ranks over processes (mpirun)
  // by work, without reading them. 0 = unknown.
  virtual uint64_t RankBytes(size_t index) const { return 0; }
  // The file or folder rank `index` is read from, for messages ("" when the
  // source is one file or in memory).
  virtual std::string RankPath(size_t index) const { return ""; }
};

// A rank already turned into a sink's output by one of its RankEncoders.
class EncodedRank {
 public:
  virtual ~EncodedRank() = default;
};

// Does a sink's per-rank work (encoding, compression) away from the sink, so
// that a producer can encode ranks on several threads while one thread
// appends them in order. One encoder per thread.
class RankEncoder {
 public:
  virtual ~RankEncoder() = default;
  // `index`: the rank's place among the ranks appended after the encoder was
  // made (0: the next rank the sink takes). A sink whose output depends on it
  // (Perfetto's sequence ids) checks it when the rank is appended.
  virtual std::unique_ptr<EncodedRank> Encode(const Rank& rank, size_t index) = 0;
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  // Ranks arrive one at a time, in any order of rank id. A sink copies or
  // writes what it needs before returning: callers reuse `rank` (tracegen
  // emits every rank into one Rank).
  virtual void AddRank(const Rank& rank) = 0;
  // An encoder whose output AddEncoded takes, for sinks that can encode off
  // their thread (native, Perfetto); nullptr for the others (use AddRank).
  // The sink must outlive its encoders.
  virtual std::unique_ptr<RankEncoder> CreateEncoder() { return nullptr; }
  // How many encoded ranks a producer may keep in flight per thread, so that
  // they stay a few MB: 16 native 718B ranks (~0.25 MB each), 4 Perfetto
  // ones (~3.3 MB).
  virtual size_t EncodedRanksPerThread() const { return 4; }
  // Appends a rank encoded by one of this sink's encoders: the same output
  // as AddRank of that rank.
  virtual void AddEncoded(std::unique_ptr<EncodedRank> rank);
  // Writes the metadata (known only at the end for a generator) and commits
  // the output. Without Finish() nothing is left on disk.
  virtual void Finish(const Metadata& metadata) = 0;
};

// An in-memory source/sink, for tests and small traces.
class MemorySource : public TraceSource {
 public:
  explicit MemorySource(Trace trace) : trace_(std::move(trace)) {}
  const Metadata& metadata() const override { return trace_.metadata; }
  size_t rank_count() const override { return trace_.ranks.size(); }
  Rank ReadRank(size_t index) const override { return trace_.ranks[index]; }
  void ReadRankInto(size_t index, Rank* out) const override { *out = trace_.ranks[index]; }

 private:
  Trace trace_;
};

class MemorySink : public TraceSink {
 public:
  void AddRank(const Rank& rank) override { trace_.ranks.push_back(rank); }
  void Finish(const Metadata& metadata) override { trace_.metadata = metadata; }
  Trace& trace() { return trace_; }

 private:
  Trace trace_;
};

// Several sources read as one trace: their ranks in input order, the
// metadata of the first (unless given). For commands that take INPUT... (analyze, report).
class ConcatSource : public TraceSource {
 public:
  explicit ConcatSource(std::vector<std::unique_ptr<TraceSource>> parts);
  // With the given metadata instead (shards of one trace: native_shards.h).
  ConcatSource(std::vector<std::unique_ptr<TraceSource>> parts, Metadata metadata);
  const Metadata& metadata() const override { return metadata_; }
  size_t rank_count() const override { return index_.size(); }
  Rank ReadRank(size_t i) const override {
    return parts_[index_[i].first]->ReadRank(index_[i].second);
  }
  void ReadRankInto(size_t i, Rank* out) const override {
    parts_[index_[i].first]->ReadRankInto(index_[i].second, out);
  }
  int32_t RankId(size_t i) const override {
    return parts_[index_[i].first]->RankId(index_[i].second);
  }
  uint64_t RankBytes(size_t i) const override {
    return parts_[index_[i].first]->RankBytes(index_[i].second);
  }
  std::string RankPath(size_t i) const override {
    return parts_[index_[i].first]->RankPath(index_[i].second);
  }

 private:
  std::vector<std::unique_ptr<TraceSource>> parts_;
  std::vector<std::pair<size_t, size_t>> index_;  // (part, rank index in part)
  Metadata metadata_;
};

// Reads every rank of `source` into memory.
Trace ReadAll(const TraceSource& source);
// Streams every rank of `source` into `sink` and finishes it.
void Copy(const TraceSource& source, TraceSink& sink);

}  // namespace moetrace
