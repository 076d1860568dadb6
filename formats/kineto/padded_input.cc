#include "formats/kineto/padded_input.h"

#include <simdjson.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "formats/errors.h"

namespace moetrace {
namespace {

constexpr size_t kPadding = simdjson::SIMDJSON_PADDING;
constexpr size_t kChunk = 1 << 20;

struct FileCloser {
  void operator()(FILE* f) const { if (f) fclose(f); }
};
using FilePtr = std::unique_ptr<FILE, FileCloser>;

FilePtr OpenOrThrow(const std::string& path) {
  FilePtr f(fopen(path.c_str(), "rb"));
  if (!f) ThrowInputError(path, "", std::string("cannot open: ") + strerror(errno));
  return f;
}

bool HasGzipMagic(FILE* f) {
  unsigned char m[2] = {0, 0};
  size_t n = fread(m, 1, 2, f);
  rewind(f);
  return n == 2 && m[0] == 0x1f && m[1] == 0x8b;
}

int64_t FileSize(FILE* f) {
  if (fseeko(f, 0, SEEK_END) != 0) return -1;
  int64_t n = ftello(f);
  rewind(f);
  return n;
}

// The gzip trailer holds the uncompressed size mod 2^32: a hint for the
// first allocation, capped by deflate's maximum ratio so a hostile trailer
// cannot make us allocate much more than the data can inflate to.
size_t GzipSizeHint(FILE* f, int64_t compressed) {
  if (compressed < 18) return kChunk;
  unsigned char t[4];
  if (fseeko(f, compressed - 4, SEEK_SET) != 0) { rewind(f); return kChunk; }
  size_t n = fread(t, 1, 4, f);
  rewind(f);
  if (n != 4) return kChunk;
  uint64_t isize = uint64_t(t[0]) | uint64_t(t[1]) << 8 | uint64_t(t[2]) << 16 |
                   uint64_t(t[3]) << 24;
  uint64_t cap = uint64_t(compressed) * 1032 + kChunk;
  return size_t(std::min<uint64_t>(std::max<uint64_t>(isize, kChunk), cap));
}

}  // namespace

// Inflates a gzip file chunk by chunk (concatenated members are one stream,
// as gunzip reads them).
class GzipInflater {
 public:
  explicit GzipInflater(FILE* f) : f_(f), in_(new unsigned char[kChunk]) {
    ok_ = inflateInit2(&zs_, 15 + 32) == Z_OK;
    if (!ok_) what_ = "cannot initialise zlib";
  }
  ~GzipInflater() { inflateEnd(&zs_); }

  // Appends up to `max_out` bytes to `out`. Returns false at the end of the
  // stream or on an error (then error() is set).
  bool Step(PaddedBuffer& out, size_t max_out) {
    if (!ok_ || done_) return false;
    size_t produced = 0;
    while (produced < max_out) {
      if (zs_.avail_in == 0) {
        size_t n = fread(in_.get(), 1, kChunk, f_);
        if (n == 0) {
          if (!ended_) {
            what_ = ferror(f_) ? "read error in gzip stream"
                               : "truncated gzip stream (unexpected end of file)";
            ok_ = false;
          }
          done_ = true;
          break;
        }
        zs_.next_in = in_.get();
        zs_.avail_in = unsigned(n);
      }
      if (ended_) {
        inflateReset(&zs_);
        ended_ = false;
      }
      size_t want = std::min(kChunk, max_out - produced);
      char* dst = out.Grow(want);
      zs_.next_out = reinterpret_cast<unsigned char*>(dst);
      zs_.avail_out = unsigned(want);
      unsigned before_in = zs_.avail_in;
      int rc = inflate(&zs_, Z_NO_FLUSH);
      consumed_ += before_in - zs_.avail_in;
      out.Commit(want - zs_.avail_out);
      produced += want - zs_.avail_out;
      if (rc == Z_STREAM_END) {
        ended_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        what_ = std::string("corrupt gzip stream: ") + (zs_.msg ? zs_.msg : "inflate failed");
        ok_ = false;
        done_ = true;
        break;
      }
    }
    return ok_ && (!done_ || produced > 0);
  }
  bool failed() const { return !ok_; }
  const std::string& error() const { return what_; }
  uint64_t consumed() const { return consumed_; }

 private:
  FILE* f_;
  std::unique_ptr<unsigned char[]> in_;
  z_stream zs_{};
  bool ok_ = true, done_ = false, ended_ = false;
  uint64_t consumed_ = 0;
  std::string what_;
};

namespace {
// A large buffer is written once from start to end: transparent huge pages
// turn its ~250 page faults per MB into one per 2 MB (inflating a 50 MB
// trace into a fresh buffer goes from ~50 ms to ~30 ms).
void AdviseHugePages(char* data, size_t size) {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  if (size < 2 * kHuge) return;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}
}  // namespace

namespace {
void Release(bool mapped, char* data, size_t map_size) {
  if (mapped) {
    munmap(data, map_size);
  } else {
    free(data);
  }
}
}  // namespace

PaddedBuffer::~PaddedBuffer() { Release(mapped_, data_, map_size_); }

PaddedBuffer::PaddedBuffer(PaddedBuffer&& o) noexcept
    : mapped_(o.mapped_), map_size_(o.map_size_), data_(o.data_), size_(o.size_),
      capacity_(o.capacity_), released_(o.released_) {
  o.released_ = 0;
  o.data_ = nullptr;
  o.mapped_ = false;
  o.size_ = o.capacity_ = o.map_size_ = 0;
}

PaddedBuffer& PaddedBuffer::operator=(PaddedBuffer&& o) noexcept {
  if (this != &o) {
    Release(mapped_, data_, map_size_);
    mapped_ = o.mapped_;
    map_size_ = o.map_size_;
    data_ = o.data_;
    size_ = o.size_;
    capacity_ = o.capacity_;
    released_ = o.released_;
    o.released_ = 0;
    o.data_ = nullptr;
    o.mapped_ = false;
    o.size_ = o.capacity_ = o.map_size_ = 0;
  }
  return *this;
}

PaddedBuffer PaddedBuffer::MapFile(int fd, size_t size) {
  PaddedBuffer b;
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  const size_t tail = size % page;
  // Bytes past the end of file up to the page end read as zeros; past the
  // last page they would fault, so the padding must fit in that tail.
  if (size == 0 || tail == 0 || page - tail < kPadding) return b;
  // Writable but private: a reader may blank a few bytes for a while
  // (kineto_split_reader.h); the file is never written.
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return b;
  madvise(p, size, MADV_SEQUENTIAL);  // read ahead; pages are dropped as they are parsed
  b.mapped_ = true;
  b.map_size_ = size;
  b.data_ = static_cast<char*>(p);
  b.size_ = size;
  b.capacity_ = size;
  return b;
}

PaddedBuffer PaddedBuffer::FromString(std::string_view s) {
  PaddedBuffer b;
  if (!s.empty()) memcpy(b.Grow(s.size()), s.data(), s.size());
  b.Commit(s.size());
  b.Finish();
  return b;
}

size_t PaddedBuffer::padded_size() const { return size_ + kPadding; }

char* PaddedBuffer::Grow(size_t n) {
  if (mapped_) {  // a mapping is read-only: copy it into malloc'd memory first
    PaddedBuffer copy;
    memcpy(copy.Grow(size_ + n), data_, size_);
    copy.Commit(size_);
    *this = std::move(copy);
  }
  if (!data_ || size_ + n > capacity_) {
    size_t cap = std::max(size_ + n, capacity_ + capacity_ / 2);
    cap = std::max<size_t>(cap, 4096);
    char* p = static_cast<char*>(realloc(data_, cap + kPadding));
    if (!p) throw std::bad_alloc();
    data_ = p;
    capacity_ = cap;
    AdviseHugePages(data_, cap);
  }
  return data_ + size_;
}

void PaddedBuffer::Finish() {
  if (mapped_) return;  // the page tail is already zero
  Grow(0);
  memset(data_ + size_, 0, kPadding);
}

void PaddedBuffer::ReleaseBefore(size_t offset) const {
  constexpr size_t kStep = size_t(8) << 20;  // madvise in large steps only
  if (!data_ || offset > size_ || offset < released_ + kStep) return;
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data_ + released_) + page - 1) & ~(page - 1);
  uintptr_t end = reinterpret_cast<uintptr_t>(data_ + offset) & ~(page - 1);
  if (end <= begin) return;
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  released_ = offset;
}

bool IsGzipPath(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

TraceInput::TraceInput(const std::string& path) : path_(path) {
  FilePtr f = OpenOrThrow(path);
  int64_t size = FileSize(f.get());
  if (HasGzipMagic(f.get())) {
    // Reserve the announced size: untouched pages cost nothing, and the
    // buffer then never moves while it is parsed and released.
    buf_.Grow(GzipSizeHint(f.get(), size));
    file_ = f.release();
    gz_ = std::make_unique<GzipInflater>(file_);
    if (!Refill()) buf_.Finish();
    return;
  }
  if (size > 0) {
    buf_ = PaddedBuffer::MapFile(fileno(f.get()), size_t(size));
    if (buf_.data()) return;
    buf_.Grow(size_t(size));
  }
  for (;;) {
    char* dst = buf_.Grow(kChunk);
    size_t n = fread(dst, 1, kChunk, f.get());
    buf_.Commit(n);
    if (n < kChunk) break;
  }
  if (ferror(f.get())) ThrowInputError(path, "", "read error");
  buf_.Finish();
}

TraceInput::~TraceInput() {
  gz_.reset();
  if (file_) fclose(file_);
}

bool TraceInput::Refill() {
  if (!gz_) return false;
  constexpr size_t kStep = size_t(4) << 20;
  bool more = gz_->Step(buf_, kStep);
  if (gz_->failed()) {
    ThrowInputError(path_, "compressed byte " + std::to_string(gz_->consumed()), gz_->error());
  }
  buf_.Finish();
  return more;
}

PaddedBuffer ReadTraceFile(const std::string& path) {
  TraceInput in(path);
  while (in.Refill()) {
  }
  return std::move(in.buffer());
}

std::string ReadTracePrefix(const std::string& path, size_t limit) {
  FilePtr f(fopen(path.c_str(), "rb"));
  if (!f) return {};
  PaddedBuffer out;
  if (HasGzipMagic(f.get())) {
    GzipInflater gz(f.get());
    while (out.size() < limit && gz.Step(out, limit - out.size())) {
    }
  } else {
    char* dst = out.Grow(limit);
    out.Commit(fread(dst, 1, limit, f.get()));
  }
  return std::string(out.data() ? out.data() : "", out.size());
}

}  // namespace moetrace
