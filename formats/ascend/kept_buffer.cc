#include "formats/ascend/kept_buffer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

#include "formats/errors.h"

namespace moetrace {
namespace {

struct SlotState {
  std::unique_ptr<char[]> buf;
  size_t capacity = 0;
  bool lent = false;
};

SlotState& State(KeptBuffer::Slot slot) {
  thread_local SlotState slots[KeptBuffer::kSlotCount];
  return slots[slot];
}

}  // namespace

KeptBuffer::KeptBuffer(Slot slot, size_t size, size_t padding)
    : slot_(slot), size_(size), padding_(padding) {
  SlotState& s = State(slot);
  const size_t need = size + padding;
  if (!s.lent && size <= kKeptBufferBytes) {
    if (s.capacity < need) {
      // Grown by half again at least, so a rank a little larger than the
      // last one does not allocate (and fault in) a whole new buffer.
      size_t cap = std::max(need, s.capacity + s.capacity / 2);
      cap = std::min(cap, kKeptBufferBytes + padding);
      s.buf.reset();
      s.buf.reset(new char[cap]);
      s.capacity = cap;
    }
    s.lent = true;
    kept_ = true;
    data_ = s.buf.get();
  } else {
    own_.reset(new char[need]);
    data_ = own_.get();
  }
  if (padding > 0) std::memset(data_ + size, 0, padding);  // data_ may be null when both are 0
}

KeptBuffer::KeptBuffer(KeptBuffer&& other) noexcept
    : slot_(other.slot_),
      data_(other.data_),
      size_(other.size_),
      padding_(other.padding_),
      kept_(other.kept_),
      own_(std::move(other.own_)),
      mapped_(other.mapped_) {
  other.kept_ = false;
  other.mapped_ = 0;
  other.data_ = nullptr;
  other.size_ = other.padding_ = 0;
}

KeptBuffer& KeptBuffer::operator=(KeptBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    slot_ = other.slot_;
    data_ = other.data_;
    size_ = other.size_;
    padding_ = other.padding_;
    kept_ = other.kept_;
    own_ = std::move(other.own_);
    mapped_ = other.mapped_;
    other.mapped_ = 0;
    other.kept_ = false;
    other.data_ = nullptr;
    other.size_ = other.padding_ = 0;
  }
  return *this;
}

void KeptBuffer::Release() {
  if (kept_) State(slot_).lent = false;
  if (mapped_ > 0) ::munmap(data_, mapped_);
  mapped_ = 0;
  kept_ = false;
  own_.reset();
  data_ = nullptr;
}

KeptBuffer::~KeptBuffer() { Release(); }

KeptBuffer KeptBuffer::Copy(Slot slot, std::string_view text, size_t padding) {
  KeptBuffer b(slot, text.size(), padding);
  if (!text.empty()) std::memcpy(b.data(), text.data(), text.size());
  return b;
}

KeptBuffer KeptBuffer::Map(const std::string& path, size_t padding) {
  KeptBuffer b;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return b;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    ::close(fd);
    return b;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t file_pages = (size + page - 1) / page * page;
  const size_t total = (size + padding + page - 1) / page * page;
  // Zero pages for the whole length, the file mapped over their start: the
  // bytes of its last page past the end read as zero, as do the pages after.
  void* base = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    ::close(fd);
    return b;
  }
  void* file = ::mmap(base, file_pages, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE,
                      fd, 0);
  ::close(fd);
  if (file == MAP_FAILED) {
    ::munmap(base, total);
    return b;
  }
  b.data_ = static_cast<char*>(base);
  b.size_ = size;
  b.padding_ = padding;
  b.mapped_ = total;
  return b;
}

KeptBuffer KeptBuffer::Load(Slot slot, const std::string& path, size_t padding) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) ThrowInputError(path, "", "cannot open file");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    ThrowInputError(path, "", "cannot read file");
  }
  if (static_cast<size_t>(st.st_size) > kKeptBufferBytes) {
    KeptBuffer mapped = Map(path, padding);
    if (mapped.data() != nullptr && mapped.size() == static_cast<size_t>(st.st_size)) {
      ::close(fd);
      return mapped;
    }
  }
  KeptBuffer b(slot, static_cast<size_t>(st.st_size), padding);
  size_t done = 0;
  while (done < b.size()) {
    const ssize_t n = ::read(fd, b.data() + done, b.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      ThrowInputError(path, "", "cannot read file");
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return b;
}

}  // namespace moetrace
