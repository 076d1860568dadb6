// HTA's rows taken from the importer's pass over each Kineto file, so that
// `analyze` parses a file once for its own metrics and HTA's figures. HTA's
// figures can be computed on a thread of their own while the importer
// reads: Take() waits for a file's rows. A file the importer could not pass
// on whole (see ReadKinetoRank) is read again by HTA's own reader, so the
// figures never depend on which path was taken.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "analyzer/hta/kineto_rows.h"
#include "formats/kineto/kineto_event_observer.h"

namespace moetrace::hta {

class ImportedRows {
 public:
  ImportedRows();
  ~ImportedRows();
  // An observer for the importer's read of `path` (thread safe); null when
  // HTA would not read the file as the importer does (gzip data in a file
  // whose name does not end in "gz": HTA decides by name and fails), or
  // after Close().
  KinetoEventObserver* ObserverFor(const std::string& path, bool inflated);
  // The rows of `path` once the importer has passed every event of it on;
  // waits for them until Close(), then nullopt if they never came.
  std::optional<RankRows> Take(const std::string& path);
  // The importer is done: no more observers, and Take no longer waits.
  void Close();

 private:
  class Observer;
  struct Entry {
    std::unique_ptr<Observer> observer;
    std::optional<RankRows> rows;  // set when the importer completed the file
  };
  void Completed(const std::string& key, const Observer* observer, RankRows rows);

  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, Entry> files_;
  bool closed_ = false;
};

}  // namespace moetrace::hta
