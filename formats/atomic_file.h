// Writes an output file through a temporary sibling that is renamed into
// place on Commit(), so a failure never leaves half a file behind.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace moetrace {

class AtomicFile {
 public:
  // Opens "<path>.tmp-<pid>" for writing; throws InputError when it cannot.
  explicit AtomicFile(std::string path);
  ~AtomicFile();  // removes the temporary unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void Write(const void* data, size_t size);
  void Write(std::string_view s) { Write(s.data(), s.size()); }
  uint64_t offset() const { return offset_; }
  FILE* file() { return file_; }
  // Flushes, closes and renames onto the final path.
  void Commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string tmp_path_;
  FILE* file_ = nullptr;
  uint64_t offset_ = 0;
  bool committed_ = false;
};

// Writes a whole string to `path` atomically.
void WriteFileAtomically(const std::string& path, std::string_view content);

}  // namespace moetrace
