// Reads one Kineto event object (a simdjson on-demand object) into a
// KinetoEvent for a KinetoEventSink, checking every value it uses; the
// facts an observer wants are taken in the same pass. Internal to
// formats/kineto: the single-pass, split and streaming readers share it.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>

#include "formats/errors.h"
#include "formats/kineto/kineto_builder.h"
#include "formats/kineto/kineto_event_observer.h"
#include "formats/kineto/padded_input.h"

namespace moetrace {
namespace kineto_reader {

namespace od = simdjson::ondemand;

inline std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

class EventReader {
 public:
  EventReader(const PaddedBuffer& buf, const std::string& file, KinetoEventSink* builder)
      : buf_(buf), file_(file), builder_(builder) {}

  // Passes the facts of every event ParseObject reads on to `observer`.
  void Observe(KinetoEventObserver* observer) { observer_ = observer; }
  // A "traceEvents" array starts.
  void RestartObserver() {
    if (!observer_) return;
    observer_->Restart();
    facts_.index = 0;
  }
  // False when an event held something the facts cannot carry as written
  // (an escaped string in args.stream / args.correlation).
  bool observed_all() const { return !facts_unusual_; }
  void set_observed_all(bool all) { facts_unusual_ = !all; }
  // Elements of the current "traceEvents" array passed to the observer.
  int64_t observed_count() const { return facts_.index; }

  [[noreturn]] void Fail(const char* at, const std::string& what) const {
    // A position inside a repaired copy of an event names the event.
    if (at < buf_.data() || at > buf_.data() + buf_.size()) at = event_begin_;
    ThrowInputError(file_, "byte " + std::to_string(at - buf_.data()), what);
  }
  [[noreturn]] void FailJson(const char* at, simdjson::error_code err,
                             const char* context) const {
    Fail(at, std::string("malformed JSON ") + context + ": " + simdjson::error_message(err));
  }

  void ParseEvent(const char* begin, const char* end);

  // One event object; `begin` is where it starts (for error positions).
  void ParseObject(od::object& obj, const char* begin);

 private:
  const char* Where(od::value& v, const char* fallback);

  static KinetoRawValue StringFact(bool present, std::string_view s) {
    KinetoRawValue r;
    r.type = present ? KinetoRawValue::kString : KinetoRawValue::kNull;
    r.text = s;
    return r;
  }

  // A value that is not a string, for the observer: null, or some other type.
  static KinetoRawValue OtherFact(od::json_type t) {
    KinetoRawValue r;
    r.type = t == od::json_type::null ? KinetoRawValue::kNull : KinetoRawValue::kOther;
    return r;
  }

  // args["stream"] / args["correlation"] as written, for the observer.
  void ObserveArg(std::string_view key, od::value& x);

  // The value's type; a value simdjson cannot type is malformed JSON.
  od::json_type Type(od::value& v, std::string_view key, const char* at);

  // A value of the wrong type is never an error (the document is readable):
  // it is counted as `fix` on `key` and the caller goes on without it.
  bool String(od::value& v, std::string_view key, const char* at, FieldFix fix,
              std::string_view* out);

  enum class Value { kOk, kAbsent, kBad };
  // A microsecond time as exact nanoseconds: kAbsent when null, kBad (a bad
  // dur counted here, a bad ts by the caller) when not a number in range.
  Value Time(od::value& v, std::string_view key, const char* at, int64_t* out, bool is_ts);
  Value Bad(std::string_view key, bool is_ts);

  // An integer (a fractional number is truncated; a numeric string is read
  // as its number, counted as coerced.arg.<key> for args). False when null,
  // or when unusable (counted as `fix`).
  bool Int(od::value& v, std::string_view key, const char* at, int64_t* out, FieldFix fix);

  // pid / tid: numbers, numeric strings ("25738"), "stream 7", or labels.
  // Sets `rejected` (counted) when no track can be named from it.
  int64_t Id(od::value& v, std::string_view key, const char* at, bool* synthetic,
             bool* rejected);

  template <typename T>
  void List(od::value& v, std::string_view key, const char* at, std::vector<T>* out);

  void Args(od::value& v, const char* at, KinetoEvent* ev);

  void ArgsField(std::string_view key, od::value& x, const char* at, KinetoEvent* ev);

  KinetoCommArgs& Args(KinetoEvent* ev);

  const PaddedBuffer& buf_;
  const std::string& file_;
  KinetoEventSink* builder_;
  od::parser parser_;
  KinetoEventObserver* observer_ = nullptr;
  const char* event_begin_ = nullptr;     // of the event ParseEvent reads
  simdjson::padded_string repaired_;      // that event, when its UTF-8 was repaired
  KinetoEventFacts facts_;
  bool facts_unusual_ = false;
};

}  // namespace kineto_reader
}  // namespace moetrace
