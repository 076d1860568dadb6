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

// Inflates `f` into `out`, stopping after `limit` bytes. Returns false on a
// truncated or corrupt stream, with `what` and the compressed offset set.
bool Inflate(FILE* f, PaddedBuffer& out, size_t limit, std::string* what,
             uint64_t* offset) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) {
    *what = "cannot initialise zlib";
    *offset = 0;
    return false;
  }
  std::unique_ptr<unsigned char[]> in(new unsigned char[kChunk]);
  uint64_t consumed = 0;
  bool ended = false;  // last inflate() returned Z_STREAM_END
  bool ok = true;
  while (out.size() < limit) {
    if (zs.avail_in == 0) {
      size_t n = fread(in.get(), 1, kChunk, f);
      if (n == 0) {
        if (!ended) {
          *what = ferror(f) ? "read error in gzip stream"
                            : "truncated gzip stream (unexpected end of file)";
          ok = false;
        }
        break;
      }
      zs.next_in = in.get();
      zs.avail_in = unsigned(n);
    }
    if (ended) {
      // Concatenated gzip members are one stream (as gunzip reads them).
      inflateReset(&zs);
      ended = false;
    }
    size_t want = std::min(kChunk, limit - out.size());
    char* dst = out.Grow(want);
    zs.next_out = reinterpret_cast<unsigned char*>(dst);
    zs.avail_out = unsigned(want);
    unsigned before_in = zs.avail_in;
    int rc = inflate(&zs, Z_NO_FLUSH);
    consumed += before_in - zs.avail_in;
    out.Commit(want - zs.avail_out);
    if (rc == Z_STREAM_END) {
      ended = true;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      *what = std::string("corrupt gzip stream: ") + (zs.msg ? zs.msg : "inflate failed");
      ok = false;
      break;
    }
  }
  *offset = consumed;
  inflateEnd(&zs);
  return ok;
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
      capacity_(o.capacity_) {
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
  void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) return b;
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
  }
  return data_ + size_;
}

void PaddedBuffer::Finish() {
  if (mapped_) return;  // the page tail is already zero
  Grow(0);
  memset(data_ + size_, 0, kPadding);
}

bool IsGzipPath(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

PaddedBuffer ReadTraceFile(const std::string& path) {
  FilePtr f = OpenOrThrow(path);
  PaddedBuffer out;
  int64_t size = FileSize(f.get());
  if (HasGzipMagic(f.get())) {
    out.Grow(GzipSizeHint(f.get(), size));
    std::string what;
    uint64_t offset = 0;
    if (!Inflate(f.get(), out, SIZE_MAX, &what, &offset)) {
      ThrowInputError(path, "compressed byte " + std::to_string(offset), what);
    }
  } else {
    if (size > 0) {
      PaddedBuffer mapped = PaddedBuffer::MapFile(fileno(f.get()), size_t(size));
      if (mapped.data()) return mapped;
      out.Grow(size_t(size));
    }
    for (;;) {
      char* dst = out.Grow(kChunk);
      size_t n = fread(dst, 1, kChunk, f.get());
      out.Commit(n);
      if (n < kChunk) break;
    }
    if (ferror(f.get())) ThrowInputError(path, "", "read error");
  }
  out.Finish();
  return out;
}

std::string ReadTracePrefix(const std::string& path, size_t limit) {
  FilePtr f(fopen(path.c_str(), "rb"));
  if (!f) return {};
  PaddedBuffer out;
  if (HasGzipMagic(f.get())) {
    std::string what;
    uint64_t offset = 0;
    Inflate(f.get(), out, limit, &what, &offset);
  } else {
    char* dst = out.Grow(limit);
    out.Commit(fread(dst, 1, limit, f.get()));
  }
  return std::string(out.data() ? out.data() : "", out.size());
}

}  // namespace moetrace
