// Reads the second half of a Kineto file's "traceEvents" array on a thread
// of its own while the single-pass reader reads the first half, so one
// large file is imported on two cores.
//
// The split point is a guess: the first "},\n <spaces>{" past the middle of
// the text. The tail from there is copied behind a '[' and parsed as an
// array of its own, its events recorded. The main reader, which parses the
// whole document as usual, confirms the guess only when an element of the
// array it is reading starts exactly at the split point: it then stops
// there and replays the recorded events into its builder, in file order, so
// the Rank is the one a single pass would build. Any other outcome (the
// point fell inside an event or a string, the tail failed to parse) throws
// the tail away and the caller reads the file in one pass. Internal to
// formats/kineto.
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
  bool Start(const PaddedBuffer& buf, const std::string& file, KinetoEventObserver* observer);
  // Where the tail's first element starts in `buf`; null when not started.
  const char* start() const { return start_; }
  // The guess is wrong, or the tail was taken: stop the thread, start()
  // becomes null.
  void Cancel();
  // Waits for the tail. False when it could not be read: the caller then
  // reads the file in one pass.
  bool Finish();
  // After Finish(): adds the tail's events to `builder` and passes their
  // facts, numbered from `first_index`, to `observer` (may be null). False
  // when the tail held an event the facts cannot carry (see EventReader).
  bool Replay(KinetoEventSink* builder, KinetoEventObserver* observer, int64_t first_index);
  // After Finish(), before Cancel(): where the text goes on past the
  // array's closing ']'.
  const char* array_end() const;

 private:
  struct Tail;
  const char* start_ = nullptr;
  std::unique_ptr<Tail> tail_;
  std::atomic<bool> cancel_{false};
  std::thread thread_;
};

}  // namespace moetrace
