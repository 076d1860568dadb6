// HTA's rows taken from the importer's pass over each Kineto file, so that
// `analyze` parses a file once for its own metrics and HTA's figures. A file
// the importer could not pass on whole (see ReadKinetoRank) is read again by
// HTA's own reader, so the figures never depend on which path was taken.
#pragma once

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
  // whose name does not end in "gz": HTA decides by name and fails).
  KinetoEventObserver* ObserverFor(const std::string& path, bool inflated);
  // The rows of `path` if the importer passed every event of it on.
  std::optional<RankRows> Take(const std::string& path);
  // Drops what was not taken; later reads get no observer.
  void Close();

 private:
  class Observer;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Observer>> files_;
  bool closed_ = false;
};

}  // namespace moetrace::hta
