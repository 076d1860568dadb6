// Reads the second part of a Kineto file's "traceEvents" array on a thread
// of its own while the single-pass reader reads the first, so one large
// file is imported on two cores.
//
// The split point is a guess: the first "},\n <spaces>{" past where about
// 55% of the events lie. The tail from there is copied behind a '[' and
// parsed as an array of its own, its events recorded. The main reader
// parses only the head, the text up to the '}' before the split point
// (simdjson's padding after it is blanked for the time of the read, then
// restored), and takes the guess only when an event of a "traceEvents"
// array ends the head exactly; it then adds the recorded events to its
// builder, in file order, while the tail is still being read, so the Rank
// is the one a single pass builds. Any other outcome (the point fell inside
// an event, the tail failed to parse) makes the caller read the file again
// in one pass. Internal to formats/kineto.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "formats/kineto/kineto_builder.h"
#include "formats/kineto/kineto_event_observer.h"
#include "formats/kineto/padded_input.h"

namespace moetrace {

// The smallest text ReadKinetoRank reads on two threads: SplitTail::kMinBytes
// unless lowered (tests and the fuzzer split small files).
size_t SplitMinBytes();
void SetSplitMinBytes(size_t bytes);

class SplitTail {
 public:
  // Smallest text worth splitting: below it a thread costs more than it saves.
  static constexpr size_t kMinBytes = size_t(4) << 20;
  // Largest: past it the tail's copy costs more memory than it is worth.
  static constexpr size_t kMaxBytes = size_t(1) << 30;

  SplitTail();
  ~SplitTail();  // cancels, waits, restores the head
  SplitTail(const SplitTail&) = delete;
  SplitTail& operator=(const SplitTail&) = delete;

  // Starts reading the tail of `buf` on a new thread; false when there is
  // no split point, or `observer` (may be null) cannot fork. The bytes after
  // head_end() are blanked until Take(), Cancel() or the destructor: no one
  // else may read `buf` meanwhile.
  bool Start(PaddedBuffer& buf, const std::string& file, KinetoEventObserver* observer);
  // The end of the head the caller is to parse; null when not started.
  const char* head_end() const { return head_end_; }
  // Stops the thread and restores the head.
  void Cancel();
  // Adds the tail's events to `builder` as the thread records them, then
  // joins the observer's fork, numbered from `first_index`. False when the
  // tail could not be read: `builder` then holds part of it, and the caller
  // reads the file again in one pass.
  bool Take(KinetoEventSink* builder, KinetoEventObserver* observer, int64_t first_index);
  // After Take(): false when the tail held an event the facts cannot carry
  // as written (see EventReader::observed_all).
  bool observed_all() const;
  // After Take(): where the text goes on past the array's closing ']'.
  const char* array_end() const;

 private:
  struct Tail;
  const char* start_ = nullptr;
  char* head_end_ = nullptr;
  char saved_[64];  // the bytes blanked after head_end_
  std::unique_ptr<Tail> tail_;
  std::atomic<bool> cancel_{false};
  std::thread thread_;
};

}  // namespace moetrace
