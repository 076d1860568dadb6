// Reads a trace file (plain or gzip) into one buffer followed by
// SIMDJSON_PADDING zero bytes, as simdjson on-demand requires. gzip is
// inflated as a stream into a buffer grown with realloc (which moves large
// blocks with mremap), so the file never has to fit in memory twice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace moetrace {

class PaddedBuffer {
 public:
  PaddedBuffer() = default;
  ~PaddedBuffer();
  PaddedBuffer(PaddedBuffer&& o) noexcept;
  PaddedBuffer& operator=(PaddedBuffer&& o) noexcept;
  PaddedBuffer(const PaddedBuffer&) = delete;
  PaddedBuffer& operator=(const PaddedBuffer&) = delete;

  // Copies `data` (for tests and the fuzzer).
  static PaddedBuffer FromString(std::string_view data);

  const char* data() const { return data_; }
  size_t size() const { return size_; }
  std::string_view view() const { return {data_, size_}; }
  char* mutable_data() { return data_; }
  // Bytes readable from data() on, padding included.
  size_t padded_size() const;

  // Makes room for at least `n` more bytes past size(); returns the write pointer.
  char* Grow(size_t n);
  void Commit(size_t n) { size_ += n; }
  // Zeroes the padding after the data.
  void Finish();

  // Tells the kernel the bytes before `p` will not be read again, so their
  // pages leave the resident set: a large trace is never resident whole.
  // Later reads of that range would see zeros (or re-read the file).
  void ReleaseBefore(size_t offset) const;

  // Maps `size` bytes of the open file `fd` (private: writes never reach the
  // file) when the zero tail of its last page can serve as the padding; an
  // empty buffer otherwise.
  static PaddedBuffer MapFile(int fd, size_t size);

 private:
  bool mapped_ = false;  // data_ comes from mmap, not malloc
  size_t map_size_ = 0;
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;  // excluding padding
  mutable size_t released_ = 0;  // offset up to which pages were given back
};

bool IsGzipPath(const std::string& path);

class GzipInflater;

// A trace file being read: plain files whole (mmapped when possible), gzip
// inflated a few MB at a time by Refill(), so the parser can release what it
// has read and a large .json.gz is never resident whole.
class TraceInput {
 public:
  explicit TraceInput(const std::string& path);  // throws InputError
  ~TraceInput();
  TraceInput(const TraceInput&) = delete;
  TraceInput& operator=(const TraceInput&) = delete;

  PaddedBuffer& buffer() { return buf_; }
  // Appends more decompressed bytes (padding kept); false at the end of the
  // input. Throws InputError on a truncated or corrupt gzip stream.
  bool Refill();

 private:
  std::string path_;
  PaddedBuffer buf_;
  FILE* file_ = nullptr;
  std::unique_ptr<GzipInflater> gz_;
};

// Reads all of `path`, inflating it when it starts with the gzip magic.
// Throws InputError naming the file (truncated or corrupt gzip, I/O error).
PaddedBuffer ReadTraceFile(const std::string& path);

// Reads at most `limit` bytes of the (decompressed) content of `path`, for
// sniffing. Never throws for corrupt data: returns what could be read.
std::string ReadTracePrefix(const std::string& path, size_t limit);

}  // namespace moetrace
