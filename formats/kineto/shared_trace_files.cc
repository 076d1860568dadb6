#include "formats/kineto/shared_trace_files.h"

#include <filesystem>

namespace moetrace {

std::shared_ptr<const WholeTraceFile> SharedTraceFiles::Get(const std::string& path) {
  // "dir/a.json.gz" and "dir//a.json.gz" are one file.
  const std::string key = std::filesystem::path(path).lexically_normal().string();
  std::promise<File> promise;
  std::shared_future<File> file;
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, inserted] = entries_.try_emplace(key);
    if (inserted && waiting_ < max_waiting_) {
      it->second.file = promise.get_future().share();
      first = true;
      ++waiting_;
    }
    file = it->second.file;
    if (++it->second.taken >= readers_) {
      if (file.valid()) --waiting_;
      entries_.erase(it);
    }
  }
  if (!file.valid()) {  // too many buffers waiting: read it for this reader alone
    auto whole = std::make_shared<WholeTraceFile>(ReadWholeTraceFile(path));
    return whole;
  }
  if (first) {
    try {
      auto whole = std::make_shared<WholeTraceFile>(ReadWholeTraceFile(path));
      whole->text.KeepResident();  // other parsers read it at the same time
      promise.set_value(std::move(whole));
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  }
  return file.get();
}

}  // namespace moetrace
