#include "formats/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "formats/errors.h"

namespace moetrace {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  tmp_path_ = path_ + ".tmp-" + std::to_string(getpid());
  file_ = std::fopen(tmp_path_.c_str(), "wb");
  if (file_ == nullptr) {
    ThrowInputError(path_, "", std::string("cannot create output: ") + std::strerror(errno));
  }
}

AtomicFile::~AtomicFile() {
  if (file_ != nullptr) std::fclose(file_);
  if (!committed_) std::remove(tmp_path_.c_str());
}

void AtomicFile::Write(const void* data, size_t size) {
  if (size == 0) return;
  if (std::fwrite(data, 1, size, file_) != size) {
    ThrowInputError(path_, "", std::string("write failed: ") + std::strerror(errno));
  }
  offset_ += size;
}

void AtomicFile::Commit() {
  bool ok = std::fflush(file_) == 0;
  ok = (std::fclose(file_) == 0) && ok;
  file_ = nullptr;
  if (!ok || std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    ThrowInputError(path_, "", std::string("cannot write output: ") + std::strerror(errno));
  }
  committed_ = true;
}

void WriteFileAtomically(const std::string& path, std::string_view content) {
  AtomicFile f(path);
  f.Write(content);
  f.Commit();
}

}  // namespace moetrace
