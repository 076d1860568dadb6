// What a second consumer of a Kineto file's events sees of each
// traceEvents element while the importer reads it, so that a file is
// parsed once for both (analyze computes HTA's figures, analyzer/hta, from
// the same pass). Values are given as written: the observer applies its
// own rules to them, which are not the importer's.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

namespace moetrace {

// One JSON value of an event, unconverted. Views live until the next event.
struct KinetoRawValue {
  enum Type : uint8_t { kAbsent, kNull, kNumber, kString, kOther };
  Type type = kAbsent;
  // kNumber: the number token as written, possibly followed by whitespace.
  // kString: the string between the quotes, unescaped unless `escaped`
  // (then as written: the reader decides whether to unescape it).
  std::string_view text;
  bool escaped = false;
};

struct KinetoEventFacts {
  int64_t index = 0;  // position in traceEvents
  // The last occurrence of each key in the event object.
  KinetoRawValue ts, dur, cat, name;
  KinetoRawValue stream, correlation;  // args["stream"], args["correlation"]
};

class KinetoEventObserver {
 public:
  virtual ~KinetoEventObserver() = default;
  // A "traceEvents" array starts: what was seen before is dropped (the last
  // array of a file wins, as in Python's json).
  virtual void Restart() = 0;
  // Every element of the array, in file order.
  virtual void OnEvent(const KinetoEventFacts& facts) = 0;
  // The importer read the file and passed on every event; `text` is the
  // whole document.
  virtual void Complete(std::string_view text) = 0;
  // The importer read (or failed to read) the file without passing on
  // every event: what this observer saw is not the file.
  virtual void Incomplete() = 0;

  // For a file read on two threads: an observer for the events of the
  // second part, fed on the other thread, that Join() appends after the
  // events this one has seen, numbered from `first_index`. An observer that
  // returns null keeps the file to one thread.
  virtual std::unique_ptr<KinetoEventObserver> Fork() { return nullptr; }
  virtual void Join(KinetoEventObserver& part, int64_t first_index) {}
};

}  // namespace moetrace
