#include "formats/kineto/whole_trace_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#ifdef MOETRACE_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "formats/errors.h"

namespace moetrace {
namespace {

struct Fd {
  int fd = -1;
  ~Fd() { if (fd >= 0) close(fd); }
};

bool ReadAll(int fd, char* dst, size_t n) {
  while (n > 0) {
    ssize_t got = read(fd, dst, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    dst += got;
    n -= size_t(got);
  }
  return true;
}

#ifdef MOETRACE_HAVE_LIBDEFLATE
struct DecompressorFree {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

// Inflates every member of `in` into `out`, which already has room for the
// size the trailer announces. False when that room is not enough or the data
// is not clean gzip: the caller then streams the file with zlib instead.
bool InflateMembers(const unsigned char* in, size_t in_size, size_t room, PaddedBuffer* out) {
  // One decompressor per thread: its allocation is the only set-up cost.
  thread_local std::unique_ptr<libdeflate_decompressor, DecompressorFree> d(
      libdeflate_alloc_decompressor());
  if (!d) return false;
  char* dst = out->Grow(room);
  size_t pos = 0, produced = 0;
  while (pos < in_size) {
    size_t used_in = 0, used_out = 0;
    libdeflate_result r = libdeflate_gzip_decompress_ex(d.get(), in + pos, in_size - pos,
                                                        dst + produced, room - produced,
                                                        &used_in, &used_out);
    if (r != LIBDEFLATE_SUCCESS) return false;
    pos += used_in;
    produced += used_out;
  }
  out->Commit(produced);
  return true;
}
#endif

}  // namespace

WholeTraceFile ReadWholeTraceFile(const std::string& path) {
  WholeTraceFile out;
  Fd f;
  f.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) ThrowInputError(path, "", std::string("cannot open: ") + strerror(errno));
  struct stat st;
  if (fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    out.text = ReadTraceFile(path);  // pipes and the like: stream
    return out;
  }
  const size_t size = size_t(st.st_size);
  unsigned char magic[2] = {0, 0};
  const bool gzip = size >= 2 && pread(f.fd, magic, 2, 0) == 2 && magic[0] == 0x1f &&
                    magic[1] == 0x8b;
  out.gzip = gzip;
#ifdef MOETRACE_HAVE_LIBDEFLATE
  if (gzip && size >= 18) {
    std::vector<unsigned char> in(size);
    if (ReadAll(f.fd, reinterpret_cast<char*>(in.data()), size)) {
      const unsigned char* t = in.data() + size - 4;
      const uint64_t isize = uint64_t(t[0]) | uint64_t(t[1]) << 8 | uint64_t(t[2]) << 16 |
                             uint64_t(t[3]) << 24;
      // A hostile trailer cannot make us reserve more than deflate's
      // maximum ratio allows.
      if (isize <= uint64_t(size) * 1032 &&
          InflateMembers(in.data(), size, size_t(isize), &out.text)) {
        out.text.Finish();
        return out;
      }
    }
    out.text = PaddedBuffer();
  }
#endif
  out.text = ReadTraceFile(path);
  return out;
}

}  // namespace moetrace
