#include "formats/native/mapped_range.h"

#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mutex>

namespace moetrace::native {
namespace {

// The armed guard of a thread (RunGuarded's frame).
struct Guard {
  sigjmp_buf jump;
  uintptr_t lo = 0, hi = 0;
  volatile uintptr_t fault = 0;  // written by the handler
};

// Initial-exec TLS: the handler reads it without any allocation or lock.
thread_local Guard* t_guard __attribute__((tls_model("initial-exec"))) = nullptr;

struct sigaction g_previous;
std::once_flag g_installed;

void OnSigbus(int sig, siginfo_t* info, void* context) {
  Guard* g = t_guard;
  const uintptr_t address = reinterpret_cast<uintptr_t>(info->si_addr);
  if (g != nullptr && address >= g->lo && address < g->hi) {
    t_guard = nullptr;
    g->fault = address;
    siglongjmp(g->jump, 1);
  }
  // Not a guarded read: what would have happened without us.
  if (g_previous.sa_flags & SA_SIGINFO) {
    g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
  } else {
    // Default action: restore it and return; the faulting access runs again
    // and the process dies with SIGBUS (an ignored SIGBUS of a fault would
    // loop forever, so SIG_IGN gets the default too).
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGBUS, &dfl, nullptr);
  }
}

void Install() {
  struct sigaction sa = {};
  sa.sa_sigaction = OnSigbus;
  sigemptyset(&sa.sa_mask);
  // SA_NODEFER: SIGBUS stays unblocked in the handler, so siglongjmp with a
  // buffer saved without the mask leaves the thread's mask as it was.
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigaction(SIGBUS, &sa, &g_previous);
}

}  // namespace

bool MappedRange::Map(int fd, uint64_t offset, uint64_t n) {
  Unmap();
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t first = offset / page * page;
  const uint64_t length = offset + n - first;
  if (n == 0 || length > SIZE_MAX) return false;
  void* p = mmap(nullptr, static_cast<size_t>(length), PROT_READ, MAP_PRIVATE, fd,
                 static_cast<off_t>(first));
  if (p == MAP_FAILED) return false;
  base_ = p;
  length_ = static_cast<size_t>(length);
  page_begin_ = first;
  begin_ = offset;
  end_ = offset + n;
  return true;
}

void MappedRange::Unmap() {
  if (base_ != nullptr) munmap(base_, length_);
  base_ = nullptr;
  length_ = 0;
  page_begin_ = begin_ = end_ = 0;
}

bool RunGuarded(const void* lo, const void* hi, GuardedFn fn, void* arg, uintptr_t* fault) {
  std::call_once(g_installed, Install);
  Guard g;
  g.lo = reinterpret_cast<uintptr_t>(lo);
  g.hi = reinterpret_cast<uintptr_t>(hi);
  Guard* const outer = t_guard;  // RunGuarded does not nest in the reader; kept anyway
  if (sigsetjmp(g.jump, 0) != 0) {
    t_guard = outer;
    *fault = g.fault;
    return false;
  }
  t_guard = &g;
  fn(arg);
  t_guard = outer;
  return true;
}

}  // namespace moetrace::native
