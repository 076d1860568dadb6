// A read-only mapping of part of a file, and a guard that turns the SIGBUS of
// a mapped page beyond the file's end into an error instead of a crash.
//
// Why map at all: NativeSource read every record with pread, which copies
// the page-cache bytes into a buffer (`_copy_to_iter` + `filemap_get_read_batch`
// ~3.8% of `analyze` on the 718B trace). Mapped, CRC and zstd read the page
// cache directly.
//
// Why a guard: a file that shrinks while it is mapped (another process
// truncates or rewrites it) makes every access to the lost pages raise
// SIGBUS, which kills the process. The reader must instead report "unexpected
// end of file" with the byte, exit 2, as pread does. How it is made safe:
//
// - RunGuarded arms a thread-local jump buffer and the address range of the
//   mapping, calls `fn`, and disarms. A process-wide SIGBUS handler, installed
//   once, jumps back (siglongjmp) only when the fault is on this thread, the
//   guard is armed and the faulting address lies in the armed range. SIGBUS
//   is synchronous: it is delivered to the thread that touched the page, so
//   the thread-local guard is the right one; with 2 (or N) reader threads each
//   thread has its own guard and range, and a fault on one never jumps into
//   another's stack.
// - Any other SIGBUS (not armed, or another address) goes to the handler
//   installed before ours (ASan's, or the default action: the process dies
//   with SIGBUS as it would have without this file).
// - The handler is installed with SA_NODEFER and the jump buffer saved
//   without the signal mask (sigsetjmp(.., 0): no system call per guard).
//   SA_NODEFER keeps SIGBUS unblocked while the handler runs, so jumping out
//   of it leaves the thread's mask as it was: a later fault is delivered
//   again, not escalated to a kill because SIGBUS was still blocked.
// - `fn` must be C-like: the jump skips the frames between the fault and
//   RunGuarded without running destructors, releasing locks or freeing
//   memory. The reader passes only the CRC (a pure loop) and
//   ZSTD_decompressDCtx (one-shot decompression into a caller's buffer: it
//   neither allocates nor locks; its context is reset at the start of each
//   call, and the reader recreates it after a fault anyway).
// - The handler is async-signal-safe: it reads two thread-local words
//   (initial-exec TLS, no allocation) and calls siglongjmp or the previous
//   handler.
// - A handler installed after ours (by a library) would take SIGBUS from us:
//   then a shrinking file crashes as it would have without mapping. moetrace
//   installs none.
//
// The reader also checks the file's size with fstat before mapping a rank
// and reads with pread when the file is already shorter: the usual truncated
// file gives the same message as before; the guard covers the race of a
// file shrinking while a rank is being decoded.
#pragma once

#include <cstddef>
#include <cstdint>

namespace moetrace::native {

class MappedRange {
 public:
  MappedRange() = default;
  ~MappedRange() { Unmap(); }
  MappedRange(const MappedRange&) = delete;
  MappedRange& operator=(const MappedRange&) = delete;

  // Maps bytes [offset, offset + n) of `fd` read-only (whole pages around
  // them), replacing any earlier mapping. False, nothing mapped, when mmap
  // fails (a file system that cannot map): the caller reads with pread.
  bool Map(int fd, uint64_t offset, uint64_t n);
  void Unmap();
  bool mapped() const { return base_ != nullptr; }
  // True when [offset, offset + n) of the file lies in the mapping.
  bool Covers(uint64_t offset, uint64_t n) const {
    return base_ != nullptr && offset >= begin_ && offset <= end_ && n <= end_ - offset;
  }
  // The byte at file offset `offset` (Covers must hold).
  const uint8_t* At(uint64_t offset) const {
    return static_cast<const uint8_t*>(base_) + (offset - page_begin_);
  }
  // The file offset of a mapped address (for messages).
  uint64_t OffsetOf(uintptr_t address) const {
    return page_begin_ + (address - reinterpret_cast<uintptr_t>(base_));
  }
  const void* lo() const { return base_; }
  const void* hi() const { return static_cast<const uint8_t*>(base_) + length_; }

 private:
  void* base_ = nullptr;
  size_t length_ = 0;
  uint64_t page_begin_ = 0;  // file offset of base_
  uint64_t begin_ = 0, end_ = 0;  // the range asked for
};

// Calls fn(arg) with SIGBUS on [lo, hi) caught (see above). True when fn
// returned; false when a page of [lo, hi) could not be read: *fault is then
// the faulting address. `fn` must not own objects with destructors.
using GuardedFn = void (*)(void* arg);
bool RunGuarded(const void* lo, const void* hi, GuardedFn fn, void* arg, uintptr_t* fault);

}  // namespace moetrace::native
