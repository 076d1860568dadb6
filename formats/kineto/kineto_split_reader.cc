#include "formats/kineto/kineto_split_reader.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "formats/kineto/kineto_event_reader.h"

namespace moetrace {
namespace {

namespace od = simdjson::ondemand;

std::atomic<size_t> split_min_bytes{SplitTail::kMinBytes};

// The first '{' past `from` (within 8 MB) that follows '}', ',' and a line
// break with only whitespace between them: where Kineto starts an event on
// a new line. One pass: each byte is looked at once.
const char* FindSplitPoint(const char* from, const char* end) {
  const char* const limit = std::min(end, from + (size_t(8) << 20));
  enum { kNone, kBrace, kComma, kLine } state = kNone;
  for (const char* c = from; c < limit; ++c) {
    switch (*c) {
      case ' ': case '\t': case '\r': break;
      case '\n': if (state == kComma) state = kLine; break;
      case '}': state = kBrace; break;
      case ',': state = state == kBrace ? kComma : kNone; break;
      case '{':
        if (state == kLine) return c;
        state = kNone;
        break;
      default: state = kNone;
    }
  }
  return nullptr;
}

// One thread appends, another reads what was published and frees what it
// has read, without locks: elements never move (fixed-size chunks), and the
// table of chunks is sized for the most elements there can be.
template <typename T>
class ChunkedLog {
 public:
  static constexpr size_t kChunk = 4096;
  explicit ChunkedLog(size_t max_items)
      : max_chunks_(max_items / kChunk + 1), chunks_(new std::unique_ptr<T[]>[max_chunks_]) {}
  // The writer's.
  T& Append() {
    if (size_ % kChunk == 0) {
      if (size_ / kChunk >= max_chunks_) throw std::length_error("ChunkedLog full");
      chunks_[size_ / kChunk].reset(new T[kChunk]);
    }
    T& slot = (*this)[size_];
    ++size_;
    return slot;
  }
  size_t size() const { return size_; }  // the writer's
  T& operator[](size_t i) { return chunks_[i / kChunk][i % kChunk]; }
  // The reader's: frees the chunks wholly before element `i`.
  void FreeBefore(size_t i) {
    for (; freed_ < i / kChunk; ++freed_) chunks_[freed_].reset();
  }

 private:
  size_t max_chunks_;
  std::unique_ptr<std::unique_ptr<T[]>[]> chunks_;
  size_t size_ = 0;
  size_t freed_ = 0;
};

// Where the caller's share of the events ends, estimated from the density
// of "ph" keys (one per event) in 64 samples of the text: events are far
// from even over the bytes (legacy-resnet50 has three quarters of them in
// the second half), and each costs more than its bytes. The caller gets a
// little more than half, because the tail thread also copies its part.
const char* EstimatedSplit(const char* begin, const char* end) {
  constexpr int kSamples = 64;
  constexpr size_t kSpan = 8192;
  constexpr double kCallerShare = 0.55;
  const size_t n = size_t(end - begin);
  if (n < size_t(kSamples) * kSpan * 2) return begin + n / 2;
  double count[kSamples], total = 0;
  for (int k = 0; k < kSamples; ++k) {
    const char* p = begin + n / kSamples * k;
    const char* stop = p + kSpan;
    count[k] = 0;
    while ((p = static_cast<const char*>(memmem(p, size_t(stop - p), "\"ph\"", 4)))) {
      ++count[k];
      p += 4;
    }
    total += count[k];
  }
  if (total == 0) return begin + n / 2;
  double want = total * kCallerShare;
  for (int k = 0; k < kSamples; ++k) {
    if (want <= count[k]) {
      return begin + size_t((double(k) + want / count[k]) * double(n / kSamples));
    }
    want -= count[k];
  }
  return begin + n / 2;
}

}  // namespace

size_t SplitMinBytes() { return split_min_bytes.load(std::memory_order_relaxed); }
void SetSplitMinBytes(size_t bytes) { split_min_bytes.store(bytes, std::memory_order_relaxed); }

// Records what the reader gives a builder, for the caller's thread to add
// to the real one while it is being read.
struct SplitTail::Tail final : KinetoEventSink {
  struct Synthetic {
    size_t event;
    bool tid;
    bool final;  // the id the event keeps (a later key of the event may replace it)
    std::string_view text;
  };
  // An event takes at least 3 bytes ("{},"): the logs never fill up. The
  // thread waits while it is more than `max_ahead` events ahead of the
  // caller (a tail of tiny events would otherwise be recorded whole:
  // KinetoEvent is ~70 times "{},").
  Tail(size_t bytes, const std::atomic<bool>* cancel_flag)
      : events(bytes / 3 + 1), comm_args(bytes / 3 + 1), synthetic(bytes + 1),
        max_ahead((2 * bytes + (size_t(64) << 20)) / sizeof(KinetoEvent)), cancel(cancel_flag) {}

  PaddedBuffer text;  // '[' + the tail
  od::parser parser;  // holds the unescaped strings the events point to
  std::unique_ptr<KinetoEventObserver> fork;  // sees the events
  size_t array_end = 0;  // offset in `text` just past the array
  ChunkedLog<KinetoEvent> events;
  ChunkedLog<KinetoCommArgs> comm_args;
  ChunkedLog<Synthetic> synthetic;
  const size_t max_ahead;
  const std::atomic<bool>* cancel;
  // Published to the caller: events first, synthetic ids up to them.
  std::atomic<size_t> events_published{0}, synthetic_published{0};
  std::atomic<size_t> events_taken{0};  // the caller's progress
  enum State { kReading, kDone, kFailed };
  std::atomic<int> state{kReading};
  // Read only once the state is final.
  int64_t ts_non_integer = 0, ts_strings = 0;
  KinetoFieldStats field_stats;
  bool observed_all = true;
  size_t event_synthetic_begin = 0;  // the event being read's first synthetic entry

  void Add(const KinetoEvent& e) override {
    // The event's last pid and tid ids are the ones it keeps, if it keeps
    // one. (Only its own entries are looked at: older ones may be freed.)
    bool pid_seen = false, tid_seen = false;
    for (size_t s = synthetic.size(); s > event_synthetic_begin; --s) {
      Synthetic& syn = synthetic[s - 1];
      bool& seen = syn.tid ? tid_seen : pid_seen;
      syn.final = !seen && (syn.tid ? e.tid_synthetic : e.pid_synthetic);
      seen = true;
    }
    event_synthetic_begin = synthetic.size();
    events.Append() = e;
    synthetic_published.store(synthetic.size(), std::memory_order_relaxed);
    events_published.store(events.size(), std::memory_order_release);
    while (events.size() - events_taken.load(std::memory_order_acquire) > max_ahead &&
           !cancel->load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  KinetoCommArgs& NewCommArgs(int32_t* index) override {
    *index = int32_t(comm_args.size());
    return comm_args.Append();
  }
  KinetoCommArgs& CommArgsAt(int32_t index) override { return comm_args[size_t(index)]; }
  int64_t SyntheticId(std::string_view key, std::string_view s) override {
    synthetic.Append() = {events.size(), key == "tid", false, s};
    return 0;  // replaced in Take
  }
  void CountTimestamp(bool integral, bool from_string) override {
    ts_non_integer += !integral;
    ts_strings += from_string;
  }
  void CountField(FieldFix fix, std::string_view key, int64_t n) override {
    field_stats.Count(fix, key, n);
  }

  // Copies the first `head` bytes of the tail now: the caller blanks what
  // follows its head, which these bytes overlap.
  void CopyHead(const char* from, const char* to, size_t head) {
    const size_t n = size_t(to - from);
    char* dst = text.Grow(n + 1);
    dst[0] = '[';
    memcpy(dst + 1, from, std::min(head, n));
  }

  void Read(const char* from, const char* to, size_t head, const std::string& file) {
    const size_t n = size_t(to - from);
    if (n > head) memcpy(text.Grow(0) + 1 + head, from + head, n - head);
    text.Commit(n + 1);
    text.Finish();
    kineto_reader::EventReader reader(text, file, this);
    reader.Observe(fork.get());
    od::document doc;
    od::array array;
    if (parser.iterate(text.data(), text.size(), text.padded_size()).get(doc) ||
        doc.get_array().get(array)) {
      return;
    }
    for (auto er : array) {
      if (cancel->load(std::memory_order_relaxed)) return;
      od::value ev;
      od::object obj;
      if (er.get(ev)) return;
      const char* at = ev.raw_json_token().data();
      if (ev.get_object().get(obj)) return;
      reader.ParseObject(obj, at);
    }
    observed_all = reader.observed_all();
    const char* after = nullptr;
    // Out of bounds when the array's ']' ends the text.
    array_end = doc.current_location().get(after) ? text.size() : size_t(after - text.data());
    state.store(kDone, std::memory_order_release);
  }
};

SplitTail::SplitTail() = default;
SplitTail::~SplitTail() { Cancel(); }

bool SplitTail::Start(PaddedBuffer& buf, const std::string& file, KinetoEventObserver* observer) {
  static_assert(sizeof(saved_) >= simdjson::SIMDJSON_PADDING);
  std::unique_ptr<KinetoEventObserver> fork;
  if (observer && !(fork = observer->Fork())) return false;  // it could not follow the tail
  char* begin = buf.mutable_data();
  char* end = begin + buf.size();
  const char* p = FindSplitPoint(EstimatedSplit(begin, end), end);
  if (!p) return false;
  // The tail runs to the last ']' of the text: at or past the one that
  // closes the array, whatever follows it.
  const char* close = end;
  while (close > p && close[-1] != ']') --close;
  if (close == p) return false;
  // The head ends after the '}' before the split point.
  char* head_end = begin + (p - begin) - 1;
  while (*head_end != '}') --head_end;
  ++head_end;
  if (head_end + sizeof(saved_) > end) return false;
  tail_ = std::make_unique<Tail>(size_t(close - p), &cancel_);
  tail_->fork = std::move(fork);
  constexpr size_t kHead = 2 * sizeof(saved_);  // reaches past the blanked bytes
  tail_->CopyHead(p, close, kHead);
  Tail* tail = tail_.get();
  thread_ = std::thread([tail, p, close, kHead, file] {
    try {
      tail->Read(p, close, kHead, file);
    } catch (...) {
    }
    // Anything but a whole tail: the caller reads the file in one pass.
    int reading = Tail::kReading;
    tail->state.compare_exchange_strong(reading, Tail::kFailed, std::memory_order_release);
  });
  start_ = p;
  head_end_ = head_end;
  memcpy(saved_, head_end_, sizeof(saved_));
  memset(head_end_, ' ', sizeof(saved_));
  return true;
}

void SplitTail::Cancel() {
  cancel_ = true;
  if (thread_.joinable()) thread_.join();
  if (head_end_) memcpy(head_end_, saved_, sizeof(saved_));
  head_end_ = nullptr;
}

bool SplitTail::Take(KinetoEventSink* builder, KinetoEventObserver* observer,
                     int64_t first_index) {
  Tail& t = *tail_;
  size_t i = 0, s = 0;
  for (;;) {
    // The state first: once it is final, so are the counts read after it.
    const int state = t.state.load(std::memory_order_acquire);
    if (state == Tail::kFailed) return false;
    const size_t n = t.events_published.load(std::memory_order_acquire);
    const size_t ns = t.synthetic_published.load(std::memory_order_relaxed);
    if (i == n) {
      if (state == Tail::kDone) break;
      std::this_thread::sleep_for(std::chrono::microseconds(20));
      continue;
    }
    for (; i < n; ++i) {
      KinetoEvent& ev = t.events[i];
      // Synthetic ids asked for in the order of a single pass.
      for (; s < ns && t.synthetic[s].event == i; ++s) {
        const auto& syn = t.synthetic[s];
        const int64_t id = builder->SyntheticId(syn.tid ? "tid" : "pid", syn.text);
        if (syn.final) (syn.tid ? ev.tid : ev.pid) = id;
      }
      if (ev.comm_args >= 0) {
        const size_t args = size_t(ev.comm_args);
        builder->NewCommArgs(&ev.comm_args) = std::move(t.comm_args[args]);
        t.comm_args.FreeBefore(args);
      }
      builder->Add(ev);
    }
    t.events.FreeBefore(i);
    t.synthetic.FreeBefore(s);
    t.events_taken.store(i, std::memory_order_release);
  }
  if (thread_.joinable()) thread_.join();
  if (head_end_) memcpy(head_end_, saved_, sizeof(saved_));
  head_end_ = nullptr;
  for (int64_t k = 0; k < t.ts_non_integer; ++k) builder->CountTimestamp(false, false);
  for (int64_t k = 0; k < t.ts_strings; ++k) builder->CountTimestamp(true, true);
  for (const auto& f : t.field_stats.entries()) builder->CountField(f.fix, f.key, f.n);
  if (observer) observer->Join(*t.fork, first_index);
  return true;
}

bool SplitTail::observed_all() const { return tail_->observed_all; }

const char* SplitTail::array_end() const {
  // text[i] is the byte at start_ + i - 1 of the document.
  return start_ + tail_->array_end - 1;
}

}  // namespace moetrace
