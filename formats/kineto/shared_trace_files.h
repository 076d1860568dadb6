// Reads each trace file once for the several parsers that need it in one
// command (`analyze` runs the importer and HTA's row reader on the same
// .json.gz at the same time). The first Get of a path reads and inflates it;
// a Get of the same path while that runs waits for it; the entry is dropped
// once `readers_per_file` Gets have taken it, so the buffer lives only as
// long as its readers hold it. The readers go through the files at their
// own pace: at most `max_waiting` buffers are kept for readers still to
// come; past that a file is read by each of its readers on its own, so
// memory stays bounded however far one reader runs ahead of the other.
#pragma once

#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "formats/kineto/whole_trace_file.h"

namespace moetrace {

class SharedTraceFiles {
 public:
  explicit SharedTraceFiles(int readers_per_file = 2, int max_waiting = 4)
      : readers_(readers_per_file), max_waiting_(max_waiting) {}

  // The whole (inflated) file, kept resident while held. Throws InputError,
  // to every reader of the path, when it cannot be read.
  std::shared_ptr<const WholeTraceFile> Get(const std::string& path);

 private:
  using File = std::shared_ptr<const WholeTraceFile>;
  struct Entry {
    std::shared_future<File> file;  // invalid: each reader reads on its own
    int taken = 0;
  };
  const int readers_;
  const int max_waiting_;
  int waiting_ = 0;  // entries holding a buffer for readers still to come
  std::mutex mu_;
  std::map<std::string, Entry> entries_;
};

}  // namespace moetrace
