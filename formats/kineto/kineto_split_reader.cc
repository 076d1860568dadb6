#include "formats/kineto/kineto_split_reader.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "formats/kineto/kineto_event_reader.h"

namespace moetrace {
namespace {

namespace od = simdjson::ondemand;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// The first '{' past `from` that follows "}" "," and a line break, with only
// whitespace between them: where Kineto starts an event on a new line.
const char* FindSplitPoint(const char* begin, const char* from, const char* end) {
  const char* const limit = std::min(end, from + (size_t(8) << 20));
  for (const char* nl = from; nl < limit;) {
    nl = static_cast<const char*>(memchr(nl, '\n', size_t(limit - nl)));
    if (!nl) return nullptr;
    const char* b = nl;
    while (b > begin && IsSpace(b[-1])) --b;
    const char* open = nl + 1;
    while (open < end && IsSpace(*open)) ++open;
    if (b - begin >= 2 && b[-1] == ',' && open < end && *open == '{') {
      const char* c = b - 1;
      while (c > begin && IsSpace(c[-1])) --c;
      if (c > begin && c[-1] == '}') return open;
    }
    nl = nl + 1;
  }
  return nullptr;
}

}  // namespace

// Records what the reader gives a builder, to be replayed into the real one.
struct SplitTail::Tail final : KinetoEventSink, KinetoEventObserver {
  struct Synthetic {
    size_t event;
    bool tid;
    std::string_view text;
  };
  PaddedBuffer text;  // '[' + the tail
  od::parser parser;  // holds the unescaped strings the events point to
  std::unique_ptr<KinetoEventObserver> fork;  // sees the events, when the observer forks
  size_t array_end = 0;  // offset in `text` just past the array
  std::vector<KinetoEvent> events;
  std::vector<KinetoCommArgs> comm_args;
  std::vector<Synthetic> synthetic;
  std::vector<KinetoEventFacts> facts;
  int64_t ts_non_integer = 0, ts_strings = 0;
  bool observed_all = true;
  bool ok = false;

  void Add(const KinetoEvent& e) override { events.push_back(e); }
  KinetoCommArgs& NewCommArgs(int32_t* index) override {
    *index = int32_t(comm_args.size());
    return comm_args.emplace_back();
  }
  KinetoCommArgs& CommArgsAt(int32_t index) override { return comm_args[size_t(index)]; }
  int64_t SyntheticId(std::string_view key, std::string_view s) override {
    synthetic.push_back({events.size(), key == "tid", s});
    return 0;  // replaced in Replay
  }
  void CountTimestamp(bool integral, bool from_string) override {
    ts_non_integer += !integral;
    ts_strings += from_string;
  }
  void Restart() override {}
  void OnEvent(const KinetoEventFacts& f) override { facts.push_back(f); }
  void Complete(std::string_view) override {}

  void Read(const char* from, const char* to, const std::string& file, bool observe,
            const std::atomic<bool>& cancel) {
    const size_t n = size_t(to - from);
    char* dst = text.Grow(n + 1);
    dst[0] = '[';
    memcpy(dst + 1, from, n);
    text.Commit(n + 1);
    text.Finish();
    events.reserve(n / 128);  // Kineto events take 150-400 bytes: rarely regrown
    kineto_reader::EventReader reader(text, file, this);
    if (observe) {
      if (fork) {
        reader.Observe(fork.get());
      } else {
        facts.reserve(n / 128);
        reader.Observe(this);
      }
    }
    od::document doc;
    od::array array;
    if (parser.iterate(text.data(), text.size(), text.padded_size()).get(doc) ||
        doc.get_array().get(array)) {
      return;
    }
    for (auto er : array) {
      if (cancel.load(std::memory_order_relaxed)) return;
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
    ok = true;
  }
};

SplitTail::SplitTail() = default;
SplitTail::~SplitTail() { Cancel(); }

bool SplitTail::Start(const PaddedBuffer& buf, const std::string& file,
                      KinetoEventObserver* observer) {
  const char* begin = buf.data();
  const char* end = begin + buf.size();
  // The thread copies its part, the caller indexes the whole document:
  // the middle balances them.
  const char* p = FindSplitPoint(begin, begin + buf.size() / 2, end);
  if (!p) return false;
  // The tail runs to the last ']' of the text: at or past the one that
  // closes the array, whatever follows it.
  const char* close = end;
  while (close > p && close[-1] != ']') --close;
  if (close == p) return false;
  tail_ = std::make_unique<Tail>();
  if (observer) tail_->fork = observer->Fork();
  start_ = p;
  Tail* tail = tail_.get();
  thread_ = std::thread([tail, p, close, file, observe = observer != nullptr, this] {
    try {
      tail->Read(p, close, file, observe, cancel_);
    } catch (...) {
      tail->ok = false;  // the caller reads the file in one pass
    }
  });
  return true;
}

void SplitTail::Cancel() {
  cancel_ = true;
  if (thread_.joinable()) thread_.join();
  start_ = nullptr;
}

bool SplitTail::Finish() {
  if (thread_.joinable()) thread_.join();
  return tail_ && tail_->ok && !cancel_;
}

bool SplitTail::Replay(KinetoEventSink* builder, KinetoEventObserver* observer,
                       int64_t first_index) {
  Tail& t = *tail_;
  size_t s = 0;
  for (size_t i = 0; i < t.events.size(); ++i) {
    KinetoEvent& ev = t.events[i];
    // Synthetic ids in the order a single pass asks for them.
    for (; s < t.synthetic.size() && t.synthetic[s].event == i; ++s) {
      const auto& syn = t.synthetic[s];
      (syn.tid ? ev.tid : ev.pid) = builder->SyntheticId(syn.tid ? "tid" : "pid", syn.text);
    }
    if (ev.comm_args >= 0) {
      KinetoCommArgs& args = t.comm_args[size_t(ev.comm_args)];
      builder->NewCommArgs(&ev.comm_args) = std::move(args);
    }
    builder->Add(ev);
  }
  for (int64_t i = 0; i < t.ts_non_integer; ++i) builder->CountTimestamp(false, false);
  for (int64_t i = 0; i < t.ts_strings; ++i) builder->CountTimestamp(true, true);
  if (observer && t.fork) {
    observer->Join(*t.fork, first_index);
  } else if (observer) {
    for (KinetoEventFacts& f : t.facts) {
      f.index += first_index;
      observer->OnEvent(f);
    }
  }
  return t.observed_all;
}

const char* SplitTail::array_end() const {
  // text[i] is the byte at start_ + i - 1 of the document.
  return start_ + tail_->array_end - 1;
}

}  // namespace moetrace
