// HTA's rows taken from the importer's pass over each Kineto file, so that
// `analyze` parses a file once for its own metrics and HTA's figures. HTA's
// figures can be computed on a thread of their own while the importer
// reads: Take() waits for a file's rows. A file the importer could not pass
// on whole (see ReadKinetoRank) is read again by HTA's own reader, so the
// figures never depend on which path was taken.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/hta/kineto_rows.h"
#include "formats/kineto/kineto_event_observer.h"

namespace moetrace::hta {

class ImportedRows {
 public:
  // Thrown by Take() after Close(/*abandon=*/true).
  struct Abandoned {};

  ImportedRows();
  ~ImportedRows();
  // An observer for one read of `path` by the importer (thread safe; a path
  // read twice gets two, the later read's rows count); null when HTA would
  // not read the file as the importer does (gzip data in a file whose name
  // does not end in "gz": HTA decides by name and fails), or after Close().
  KinetoEventObserver* ObserverFor(const std::string& path, bool inflated);
  // The rows of `path` once the importer has passed every event of it on;
  // nullopt once its read ended otherwise, or (after Close) if it never
  // came. Waits until one of these. Throws Abandoned after Close(true).
  std::optional<RankRows> Take(const std::string& path);
  // The key (normalized path) of a file whose read ended since the last call,
  // in the order reads end, so that a caller can take files as the importer
  // finishes them rather than wait for them in its own order (rows of the
  // others would pile up meanwhile). Waits; nullopt once closed and none is
  // left. Throws Abandoned after Close(true).
  std::optional<std::string> NextEnded();
  static std::string Key(const std::string& path);
  // The importer is done: no more observers, and Take no longer waits.
  // `abandon`: the analysis failed, HTA's figures are not wanted.
  void Close(bool abandon = false);

 private:
  class Observer;
  struct Entry {
    const Observer* latest = nullptr;  // the read whose outcome counts
    bool ended = false;                // that read ended
    std::optional<RankRows> rows;      // ... and passed on every event
  };
  void Ended(const std::string& key, const Observer* observer, std::optional<RankRows> rows);

  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, Entry> files_;
  std::deque<std::string> ended_;  // keys, for NextEnded
  // Every observer lives as long as this object: a read of a path may still
  // be feeding one when another read of the same path starts.
  std::vector<std::unique_ptr<Observer>> observers_;
  bool closed_ = false, abandoned_ = false;
};

}  // namespace moetrace::hta
