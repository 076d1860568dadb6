// Reads the second half of a Kineto file's "traceEvents" array on a thread
// of its own while the single-pass reader reads the first half, so one
// large file is imported on two cores.
//
// The split point is a guess: the first "},\n <spaces>{" past the middle of
// the text. The tail from there is copied behind a '[' and parsed as an
// array of its own, its events recorded. The main reader parses only the
// head, the text up to the '}' before the split point (simdjson's padding
// after it is blanked for the time of the read, then restored), and takes
// the guess only when its last event of a "traceEvents" array ends exactly
// there; it then adds the recorded events to its builder, in file order, so
// the Rank is the one a single pass would build. Any other outcome (the
// point fell inside an event, the tail failed to parse) makes the caller
// read the file again in one pass. A read-only (mapped) text cannot be
// blanked: the main reader then parses all of it and takes the guess when
// an element starts exactly at the split point. Internal to formats/kineto.
#pragma once

#include <atomic>
#include <exception>
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
  // Largest: the tail's copy and index would cost more memory than a file
  // this size is worth.
  static constexpr size_t kMaxBytes = size_t(1) << 30;

  SplitTail();
  ~SplitTail();  // cancels and waits
  SplitTail(const SplitTail&) = delete;
  SplitTail& operator=(const SplitTail&) = delete;

  // Starts reading the tail of `buf` on a new thread; false when there is no
  // split point. `observer` (may be null) is to see the tail's events too.
  // Unless `buf` is mapped, the bytes after head_end() are blanked until
  // Take(), Cancel() or the destructor: no one else may read `buf` meanwhile.
  bool Start(const PaddedBuffer& buf, const std::string& file, KinetoEventObserver* observer);
  // The end of the head the caller is to parse, or null: parse it all.
  const char* head_end() const { return head_end_; }
  // Where the tail's first element starts in `buf`; null when not started.
  const char* start() const { return start_; }
  // The guess is wrong, or the tail was taken: stop the thread, start()
  // becomes null.
  void Cancel();
  // Adds the tail's events to `builder` as the thread records them, then
  // passes their facts, numbered from `first_index`, to `observer` (may be
  // null). False when the tail could not be read: `builder` then holds part
  // of it, and the caller reads the file again in one pass.
  bool Take(KinetoEventSink* builder, KinetoEventObserver* observer, int64_t first_index);
  // After Take(): false when the tail held an event the facts cannot carry
  // as written (see EventReader::observed_all).
  bool observed_all() const;
  // After Take(), before Cancel(): where the text goes on past the array's
  // closing ']'.
  const char* array_end() const;

 private:
  struct Tail;
  void RestoreHead();
  const char* start_ = nullptr;
  char* head_end_ = nullptr;
  char saved_[64];  // the bytes blanked after head_end_
  std::unique_ptr<Tail> tail_;
  std::atomic<bool> cancel_{false};
  std::thread thread_;
};

}  // namespace moetrace
