#include "formats/ascend/trace_view.h"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "formats/decimal.h"
#include "formats/ascend/kept_buffer.h"
#include "formats/ascend/ns_carry.h"
#include "formats/ascend/shape_text.h"
#include "formats/errors.h"
#include "formats/json_error.h"
#include "formats/kineto/kineto_shapes.h"  // Input Dims in the Kineto spelling
#include "formats/kineto/raw_value.h"  // a string value's text without a copy
#include "formats/contains_no_case.h"
#include "formats/starts_with.h"

namespace moetrace {
namespace {

using simdjson::ondemand::json_type;

// Comparisons with a literal, run per event and per field: with the length
// known at compile time the compare is inlined, where string_view's
// operator== calls memcmp (14% of the import's time when it did).
template <size_t N>
bool StartsWith(std::string_view s, const char (&p)[N]) {
  return s.size() >= N - 1 && std::memcmp(s.data(), p, N - 1) == 0;
}
template <size_t N>
bool Is(std::string_view s, const char (&p)[N]) {
  return s.size() == N - 1 && std::memcmp(s.data(), p, N - 1) == 0;
}
bool Contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

enum class Proc : uint8_t { kUnknown, kPython, kCann, kHardware, kComm, kOverlap, kOther };

Proc ProcFromName(std::string_view n) {
  if (Is(n, "Python") || StartsWith(n, "Python ")) return Proc::kPython;
  if (Is(n, "CANN")) return Proc::kCann;
  if (Is(n, "Ascend Hardware")) return Proc::kHardware;
  if (Is(n, "Communication") || Is(n, "HCCL")) return Proc::kComm;
  if (Is(n, "Overlap Analysis")) return Proc::kOverlap;
  return Proc::kOther;
}

enum FlowCat : uint8_t { kH2D = 0, kAsyncNpu = 1, kTaskQueue = 2, kFwdBwd = 3, kOtherFlow = 4 };
constexpr const char* kFlowNames[] = {"HostToDevice", "async_npu", "async_task_queue", "fwdbwd",
                                      "other"};

FlowCat FlowCatOf(std::string_view cat) {
  if (Is(cat, "HostToDevice")) return kH2D;
  if (Is(cat, "async_npu")) return kAsyncNpu;
  if (Is(cat, "async_task_queue")) return kTaskQueue;
  if (Is(cat, "fwdbwd")) return kFwdBwd;
  return kOtherFlow;
}

enum class Cat : uint8_t { kOther, kCpuOp, kEnqueue, kDequeue, kPython };

Cat CatOf(std::string_view c) {
  if (Is(c, "cpu_op")) return Cat::kCpuOp;
  if (Is(c, "enqueue")) return Cat::kEnqueue;
  if (Is(c, "dequeue")) return Cat::kDequeue;
  if (Is(c, "python_function") || Is(c, "user_annotation")) return Cat::kPython;
  return Cat::kOther;
}

// Texts of the file seen so far (names, categories, task types), each kept
// as the view of its first occurrence. Rows then point at the same few
// bytes, which stay in the cache; views of each event's own text would
// each miss the cache when read again after the parse (the file is
// hundreds of MB), and did: 10% of the import at 1 M events.
class TextTable {
 public:
  uint32_t Id(std::string_view s) {
    auto [it, inserted] = ids_.try_emplace(s, static_cast<uint32_t>(views_.size()));
    if (inserted) views_.push_back(s);
    return it->second;
  }
  std::string_view View(uint32_t id) const { return views_[id]; }
  size_t size() const { return views_.size(); }

 private:
  std::unordered_map<std::string_view, uint32_t> ids_;
  std::vector<std::string_view> views_;
};

struct XRow {
  Cat cat_code = Cat::kOther;
  uint32_t name_id = 0;  // in the TextTable, as are cat_id and type_id
  uint32_t cat_id = 0;
  uint32_t type_id = 0;
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t ts = 0;
  int64_t dur = 0;     // ns, set once the row's track is known
  int64_t dur_ps = 0;  // as parsed
  // Name and task type are read through TextTable::View: views kept here
  // made the row 96 bytes, and the rows' pages were a fifth of the import.
};

struct FlowRow {
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t ts = 0;
  uint64_t id = 0;
  FlowCat cat = kOtherFlow;
  bool start = true;
  bool bind_enclosing = false;
};

struct FlowKey {
  uint64_t id;
  uint8_t cat;
  bool operator==(const FlowKey&) const = default;
};
struct FlowKeyHash {
  size_t operator()(const FlowKey& k) const { return std::hash<uint64_t>()(k.id * 8 + k.cat); }
};

// Counts by key, kept in first-seen order, flushed into Rank::import_stats.
// Keys are built in a reused buffer: no allocation per counted event.
class Stats {
 public:
  void Add(std::string_view prefix, std::string_view suffix = {}, int64_t n = 1) {
    key_.assign(prefix);
    key_.append(suffix);
    auto it = index_.find(key_);
    if (it == index_.end()) {
      it = index_.emplace(key_, values_.size()).first;
      values_.emplace_back(key_, 0);
    }
    values_[it->second].second += n;
  }
  void Add(std::string_view key, int64_t n) { Add(key, {}, n); }
  // A key counted per event: its slot is looked up once, at its first
  // count, so the keys keep the first-seen order Add would give them
  // without a map lookup per event.
  class Counter {
   public:
    explicit Counter(std::string key) : key_(std::move(key)) {}
    void Add(Stats& s, int64_t n = 1) {
      if (slot_ < 0) {
        s.Add(key_, 0);
        slot_ = static_cast<int64_t>(s.index_.find(key_)->second);
      }
      s.values_[slot_].second += n;
    }

   private:
    std::string key_;
    int64_t slot_ = -1;
  };
  void FlushInto(Rank* rank) {
    for (auto& [k, v] : values_) rank->AddStat(k, v);
  }

 private:
  std::string key_;
  std::map<std::string, size_t, std::less<>> index_;
  std::vector<std::pair<std::string, int64_t>> values_;
};

// The key of a field as written in the file, without unescaping (and its
// copy) when it holds no backslash — every key this importer looks at.
std::string_view FieldKey(simdjson::ondemand::field& field) {
  const char* raw = field.key().raw();
  const char* p = raw;
  while (*p != '"' && *p != '\\') ++p;  // the padded input always has the closing quote
  if (*p == '"') return std::string_view(raw, static_cast<size_t>(p - raw));
  return field.unescaped_key();
}

enum class Key : uint8_t { kOther, kPh, kName, kCat, kPid, kTid, kTs, kDur, kId, kBp, kArgs };

Key KeyOf(std::string_view k) {
  switch (k.size()) {
    case 2:
      if (Is(k, "ph")) return Key::kPh;
      if (Is(k, "ts")) return Key::kTs;
      if (Is(k, "id")) return Key::kId;
      if (Is(k, "bp")) return Key::kBp;
      return Key::kOther;
    case 3:
      if (Is(k, "pid")) return Key::kPid;
      if (Is(k, "tid")) return Key::kTid;
      if (Is(k, "cat")) return Key::kCat;
      if (Is(k, "dur")) return Key::kDur;
      return Key::kOther;
    case 4:
      if (Is(k, "name")) return Key::kName;
      if (Is(k, "args")) return Key::kArgs;
      return Key::kOther;
    default:
      return Key::kOther;
  }
}

// Parses the text of a JSON string or number holding an integer id; ids that
// are not numbers (string tids such as "stream 7") map to stable negatives.
class IdMapper {
 public:
  int64_t Map(std::string_view text) {
    int64_t v = 0;
    if (ParseScaledDecimal(text, 0, &v)) return v;
    auto [it, inserted] = names_.try_emplace(std::string(text), -2 - static_cast<int64_t>(names_.size()));
    return it->second;
  }

 private:
  std::unordered_map<std::string, int64_t> names_;
};

uint64_t FlowIdOf(std::string_view text) {
  int64_t v = 0;
  if (ParseScaledDecimal(text, 0, &v)) return static_cast<uint64_t>(v);
  return std::hash<std::string_view>()(text);
}

// A string value's text: a view of the document when it holds no escape
// (nearly always), else unescaped. The view spares simdjson's string
// buffer, which would otherwise be written -- and its pages faulted in --
// for every event. False when the value is not a string.
bool StringText(simdjson::ondemand::value& v, std::string_view* out) {
  const KinetoRawValue r = PeekRawValue(v);
  if (r.type != KinetoRawValue::kString) return false;
  if (!r.escaped) {
    *out = r.text;
    return true;
  }
  return !v.get_string().get(*out);
}

// The JSON value's text: a string's text, the raw token for numbers.
std::string_view ValueText(simdjson::ondemand::value v) {
  std::string_view s;
  if (StringText(v, &s)) return s;
  return TrimField(v.raw_json_token());
}

// One pass over the trace events, calling `on_event` for each event object.
// Handles both `[...]` and `{"traceEvents": [...]}` documents.
template <typename F>
void ForEachEvent(simdjson::ondemand::document& doc, F&& on_event) {
  if (doc.type() == json_type::array) {
    for (auto ev : doc.get_array()) on_event(ev.get_object().value());
    return;
  }
  for (auto field : doc.get_object()) {
    std::string_view key = field.unescaped_key();
    if (key != "traceEvents") continue;
    for (auto ev : field.value().get_array()) on_event(ev.get_object().value());
  }
}

std::string Position(simdjson::ondemand::document& doc, const simdjson::padded_string_view& text,
                     int64_t event_index, simdjson::error_code error) {
  const char* loc = nullptr;
  if (!IsIndexError(error) && doc.current_location().get(loc) == simdjson::SUCCESS && loc >= text.data() &&
      loc <= text.data() + text.size()) {
    return "byte " + std::to_string(loc - text.data());
  }
  // An error found while indexing, or no place to ask for: what the text shows.
  const std::string at = IndexErrorPosition(std::string_view(text.data(), text.size()), error);
  return at != "byte 0" ? at : "event " + std::to_string(event_index);
}

// Byte offset of the event object being read (its '{'), or -1.
int64_t EventStart(simdjson::ondemand::document& doc, const simdjson::padded_string_view& text) {
  const char* loc = nullptr;
  if (doc.current_location().get(loc) != simdjson::SUCCESS || loc < text.data() ||
      loc > text.data() + text.size()) {
    return -1;
  }
  for (int k = 0; k < 8 && loc > text.data() && *loc != '{'; ++k) --loc;
  return *loc == '{' ? loc - text.data() : -1;
}

// Runs `body` and turns simdjson errors into InputError naming the byte.
// The parser's buffers (4 bytes of structural index per input byte) are
// kept by the thread for the next file up to this input size: a fresh
// parser faults its pages in again for every rank read, a cost of the
// order of the parse itself. Larger files get a parser of their own, so
// what a thread keeps between reads stays bounded.
constexpr size_t kKeptParserBytes = kKeptBufferBytes;

template <typename F>
void ParseGuarded(const simdjson::padded_string_view& text, const std::string& file, F&& body) {
  thread_local simdjson::ondemand::parser kept_parser;
  simdjson::ondemand::parser own_parser;
  simdjson::ondemand::parser& parser = text.size() <= kKeptParserBytes ? kept_parser : own_parser;
  simdjson::ondemand::document doc;
  int64_t event_index = -1;
  bool started = false;
  try {
    doc = parser.iterate(text);
    started = true;
    body(doc, text, event_index);
  } catch (const simdjson::simdjson_error& e) {
    std::string pos = started ? Position(doc, text, event_index, e.error())
                              : IndexErrorPosition(std::string_view(text.data(), text.size()), e.error());
    if (event_index >= 0) pos += " (event " + std::to_string(event_index) + ")";
    ThrowInputError(file, pos, std::string("malformed JSON: ") + simdjson::error_message(e.error()));
  }
}

// A host thread or device stream while importing: rows sorted by (ts, longer
// first), with the end and enclosing parent of each, to bind flow ends.
struct TrackBuild {
  bool device = false;
  int64_t pid = 0;
  int64_t tid = 0;
  std::vector<uint32_t> rows;     // X rows, sorted
  std::vector<int64_t> ts, end;   // by position
  std::vector<int32_t> parent;    // by position
};

// Sorts rows that arrive as a few sorted runs (a file lists each process's
// events in time order, and a host track joins Python and CANN) by merging
// the runs, linear in the rows for a bounded number of runs; else a sort.
// `less` must be a total order, so the result is the one sorted order.
template <typename T, typename Less>
void SortRuns(std::vector<T>& v, Less less) {
  std::vector<size_t> starts{0};
  for (size_t i = 1; i < v.size(); ++i) {
    if (less(v[i], v[i - 1])) starts.push_back(i);
  }
  if (starts.size() > 64) {  // no run structure to speak of (Python ops end-ordered)
    std::sort(v.begin(), v.end(), less);
    return;
  }
  starts.push_back(v.size());
  while (starts.size() > 2) {  // merge neighbouring runs pairwise
    std::vector<size_t> next{0};
    for (size_t k = 0; k + 2 < starts.size(); k += 2) {
      std::inplace_merge(v.begin() + starts[k], v.begin() + starts[k + 1], v.begin() + starts[k + 2],
                         less);
      next.push_back(starts[k + 2]);
    }
    if (next.back() != v.size()) next.push_back(v.size());
    starts.swap(next);
  }
}

void SortAndNest(TrackBuild& t, std::vector<XRow>& x) {
  // Order: ts, then longer first, then file order (the rows are in file
  // order, so this is the stable sort by ts and length). Sorted as compact
  // keys rather than through the rows, which are far apart in memory.
  struct SortKey {
    int64_t ts;
    int64_t dur_ps;
    uint32_t row;
  };
  const size_t n = t.rows.size();
  std::vector<SortKey> keys(n);
  for (size_t i = 0; i < n; ++i) {
    const XRow& r = x[t.rows[i]];
    keys[i] = SortKey{r.ts, r.dur_ps, t.rows[i]};
  }
  SortRuns(keys, [](const SortKey& a, const SortKey& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.dur_ps != b.dur_ps) return a.dur_ps > b.dur_ps;
    return a.row < b.row;
  });
  NsCarry carry;
  t.ts.resize(n);
  t.end.resize(n);
  t.parent.assign(n, -1);
  std::vector<int32_t> stack;
  for (size_t i = 0; i < n; ++i) {
    const SortKey& k = keys[i];
    t.rows[i] = k.row;
    int64_t dur = (k.dur_ps + 500) / 1000;  // XRow::dur as parsed
    if (t.device) {
      dur = carry.Round(k.dur_ps);
      x[k.row].dur = dur;
    }
    t.ts[i] = k.ts;
    t.end[i] = k.ts + dur;
    while (!stack.empty() && t.end[stack.back()] < t.end[i]) stack.pop_back();
    t.parent[i] = stack.empty() ? -1 : stack.back();
    stack.push_back(static_cast<int32_t>(i));
  }
}

// Walks up the nesting at most this far: real nesting is a few dozen deep,
// and a hostile file must not make flow binding quadratic.
constexpr int kMaxNestingWalk = 1024;

// Deepest position enclosing `t`, or -1.
int32_t Enclosing(const TrackBuild& tr, int64_t t) {
  auto it = std::upper_bound(tr.ts.begin(), tr.ts.end(), t);
  int32_t i = static_cast<int32_t>(it - tr.ts.begin()) - 1;
  for (int k = 0; i >= 0 && tr.end[i] < t; ++k) {
    if (k == kMaxNestingWalk) return -1;
    i = tr.parent[i];
  }
  return i;
}

// First position starting at or after `t`, or -1.
int32_t NextStarting(const TrackBuild& tr, int64_t t) {
  auto it = std::lower_bound(tr.ts.begin(), tr.ts.end(), t);
  return it == tr.ts.end() ? -1 : static_cast<int32_t>(it - tr.ts.begin());
}

struct UnionFind {
  std::vector<uint32_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0u); }
  uint32_t Find(uint32_t a) {
    while (parent[a] != a) {
      parent[a] = parent[parent[a]];
      a = parent[a];
    }
    return a;
  }
  void Union(uint32_t a, uint32_t b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

int32_t ParseStepNumber(std::string_view name) {
  // "ProfilerStep#12"
  size_t p = name.find('#');
  if (p == std::string_view::npos) return kNone;
  int64_t v = 0;
  if (!ParseScaledDecimal(name.substr(p + 1), 0, &v) || v < 0 || v > INT32_MAX) return kNone;
  return static_cast<int32_t>(v);
}

}  // namespace

Category ClassifyAscendTask(std::string_view name, std::string_view type,
                            std::string_view core) {
  if (Is(core, "HCCL") || StartsWith(name, "hcom_") || StartsWith(type, "hcom_") ||
      ContainsNoCase(type, "hccl")) {
    CollectiveKind k = HcclKind(StartsWith(type, "hcom_") ? type : name);
    return k == CollectiveKind::kSend || k == CollectiveKind::kRecv ? Category::kP2P
                                                                     : Category::kCollective;
  }
  if (ContainsNoCase(name, "memcpy") || ContainsNoCase(type, "memcpy") ||
      ContainsNoCase(type, "memcopy") || ContainsNoCase(name, "memcopy") || Is(type, "DMA") ||
      Is(core, "DMA") || ContainsNoCase(core, "memcpy")) {
    return Category::kCopy;
  }
  if (Is(type, "EVENT_WAIT") || Is(type, "NOTIFY_WAIT") || Is(type, "STREAM_WAIT")) return Category::kSync;
  return Category::kCompute;
}

CollectiveKind HcclKind(std::string_view name) {
  std::string_view s = name;
  if (StartsWith(s, "hcom_")) s.remove_prefix(5);
  // Longest names first: "alltoallv" before "alltoall", "reduceScatter" before "reduce".
  struct Entry {
    const char* prefix;
    CollectiveKind kind;
  };
  static const Entry kEntries[] = {
      {"alltoallvc", CollectiveKind::kAllToAllV}, {"alltoallv", CollectiveKind::kAllToAllV},
      {"alltoall", CollectiveKind::kAllToAll},    {"allreduce", CollectiveKind::kAllReduce},
      {"allgather", CollectiveKind::kAllGather},  {"reducescatter", CollectiveKind::kReduceScatter},
      {"broadcast", CollectiveKind::kBroadcast},  {"reduce", CollectiveKind::kReduce},
      {"barrier", CollectiveKind::kBarrier},      {"send", CollectiveKind::kSend},
      {"receive", CollectiveKind::kRecv},         {"recv", CollectiveKind::kRecv},
  };
  std::string lower;
  for (char c : s.substr(0, 32)) {
    if (c == '_') break;
    lower.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  for (const Entry& e : kEntries) {
    if (lower == e.prefix) return e.kind;
  }
  for (const Entry& e : kEntries) {
    if (StartsWith(lower, e.prefix)) return e.kind;
  }
  return CollectiveKind::kOther;
}

namespace {

// The "Overlap Analysis" figures, summed from its segments as the events
// are read (ScanOverlapAnalysis's pass, or the import's own).
class OverlapSums {
 public:
  // The segment's index in kNames, or -1.
  static int Which(std::string_view name) {
    for (int k = 0; k < 4; ++k) {
      if (name == kNames[k]) return k;
    }
    return -1;
  }
  // False when ts / dur are not decimal µs (the caller names the event).
  bool Add(int64_t pid, int which, std::string_view ts_text, std::string_view dur_text) {
    int64_t ts = 0, dur = 0;  // ts in ns, dur in ps: the figures are sums of many segments
    if (!ParseMicrosToNs(ts_text, &ts) || !ParseScaledDecimal(dur_text, 6, &dur) || dur < 0) {
      return false;
    }
    Sum& s = sums_[{pid, which}];
    s.ns += dur;
    ++s.count;
    s.first = std::min(s.first, ts);
    s.last = std::max(s.last, ts + (dur + 500) / 1000);
    return true;
  }
  std::vector<LabeledValue> Figures(const std::unordered_map<int64_t, std::string>& process_names,
                                    int32_t rank) const {
    static constexpr std::string_view kKeys[] = {"computing", "communication",
                                                 "communication_not_overlapped", "free"};
    std::vector<LabeledValue> out;
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (auto& [key, s] : sums_) {
      auto it = process_names.find(key.first);
      if (it == process_names.end() || it->second != "Overlap Analysis") continue;
      std::string base = "overlap_analysis." + std::string(kKeys[key.second]);
      out.push_back({rank, kNone, base + "_us", static_cast<double>(s.ns) / 1e6});
      out.push_back({rank, kNone, base + "_segments", static_cast<double>(s.count)});
      first = std::min(first, s.first);
      last = std::max(last, s.last);
    }
    if (!out.empty()) {
      out.push_back({rank, kNone, "overlap_analysis.span_us", static_cast<double>(last - first) / 1e3});
    }
    return out;
  }

 private:
  static constexpr std::string_view kNames[] = {"Computing", "Communication",
                                                "Communication(Not Overlapped)", "Free"};
  struct Sum {
    int64_t ns = 0, count = 0, first = INT64_MAX, last = INT64_MIN;
  };
  std::map<std::pair<int64_t, int>, Sum> sums_;  // (pid, name index)
};

constexpr const char* kBadOverlapTime =
    "'ts'/'dur' of an Overlap Analysis segment: expected decimal µs";

// `overlap`, when given, receives the Overlap Analysis figures of `rank_id`
// (what ScanOverlapAnalysis gives), taken in the same pass.
void ImportTraceViewPadded(const simdjson::padded_string_view& json, const std::string& file, Rank* rank,
                           std::vector<LabeledValue>* overlap = nullptr, int32_t rank_id = 0) {
  OverlapSums overlap_sums;
  // The row lists of the thread's last import, their pages already mapped
  // (kept_buffer.h: fresh ones were most of the gap between 100 k and 1 M
  // events); given back at the end when within kKeptBufferBytes.
  struct KeptRows {
    std::vector<XRow> x;
    std::vector<FlowRow> flows;
  };
  thread_local KeptRows kept;
  std::vector<XRow> x;
  std::vector<FlowRow> flows;
  x.swap(kept.x);
  flows.swap(kept.flows);
  x.clear();
  flows.clear();
  struct GiveBack {
    std::vector<XRow>& x;
    std::vector<FlowRow>& flows;
    ~GiveBack() {
      if (x.capacity() * sizeof(XRow) <= kKeptBufferBytes) kept.x.swap(x);
      if (flows.capacity() * sizeof(FlowRow) <= kKeptBufferBytes) kept.flows.swap(flows);
    }
  } give_back{x, flows};
  // Real files hold about one complete event per 150-250 bytes, and a flow
  // end per ~400. Reserved generously: pages never written cost nothing,
  // where growing the vectors copies them and faults fresh pages in.
  x.reserve(json.size() / 128);
  flows.reserve(json.size() / 256);
  std::unordered_map<int64_t, std::string> process_names;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names;
  Stats stats;
  Stats::Counter read_events("read.events");
  TextTable texts;
  IdMapper ids;
  // Per X row, 1 + the TextTable id of its shapes (0: none); empty while no
  // row has any. Normalized Input Dims lists are owned here (the table
  // holds views).
  std::vector<uint32_t> row_shape;
  std::unordered_set<std::string> owned_shapes;
  std::string shape_scratch;

  ParseGuarded(json, file, [&](simdjson::ondemand::document& doc,
                               const simdjson::padded_string_view& text, int64_t& event_index) {
    int64_t count = 0;
    ForEachEvent(doc, [&](simdjson::ondemand::object ev) {
      event_index = count++;
      int64_t event_start = EventStart(doc, text);
      std::string_view ph, name, cat, arg_name, task_type, ts_text, dur_text, id_text, shape;
      std::string_view pid_text, tid_text;
      bool bp_e = false, has_ts = false, has_dur = false, has_id = false;
      for (auto field_result : ev) {
        simdjson::ondemand::field field;
        if (auto err = std::move(field_result).get(field)) throw simdjson::simdjson_error(err);
        Key key = KeyOf(FieldKey(field));
        if (key == Key::kOther) continue;  // skipped unread by the iterator
        simdjson::ondemand::value v = field.value();
        switch (key) {
          // A value of another type is skipped and counted, not fatal.
          case Key::kPh:
            if (!StringText(v, &ph)) stats.Add("skipped.field.ph");
            break;
          case Key::kName:
            if (!StringText(v, &name)) stats.Add("skipped.field.name");
            break;
          case Key::kCat:
            if (!StringText(v, &cat)) stats.Add("skipped.field.cat");
            break;
          case Key::kPid: pid_text = ValueText(v); break;
          case Key::kTid: tid_text = ValueText(v); break;
          case Key::kTs: ts_text = ValueText(v); has_ts = true; break;
          case Key::kDur: dur_text = ValueText(v); has_dur = true; break;
          case Key::kId: id_text = ValueText(v); has_id = true; break;
          case Key::kBp: {
            std::string_view bp;
            bp_e = StringText(v, &bp) && Is(bp, "e");
            break;
          }
          case Key::kArgs:
            if (v.type() != json_type::object) break;
            for (auto a_result : v.get_object()) {
              simdjson::ondemand::field a;
              if (auto err = std::move(a_result).get(a)) throw simdjson::simdjson_error(err);
              std::string_view akey = FieldKey(a);
              if (Is(akey, "name") || Is(akey, "Task Type")) {
                simdjson::ondemand::value av = a.value();
                StringText(av, Is(akey, "name") ? &arg_name : &task_type);
              } else if (Is(akey, "Input Shapes") || Is(akey, "Input Dims")) {
                // A string as msprof writes shapes ("8192,512;512"), or a
                // list as the PyTorch profiler writes Input Dims.
                simdjson::ondemand::value av = a.value();
                simdjson::ondemand::array list;
                std::string_view raw;
                if (StringText(av, &shape)) {
                  shape = AscendShapeText(shape);
                } else if (av.type() == json_type::array && !av.get_array().get(list) &&
                           !list.raw_json().get(raw)) {
                  NormalizeInputDims(raw, &shape_scratch);
                  shape = *owned_shapes.insert(shape_scratch).first;
                } else {
                  stats.Add("skipped.arg.shape");
                }
              }
            }
            break;
          case Key::kOther: break;
        }
      }
      auto fail = [&](std::string_view what) {
        std::string pos = event_start >= 0 ? "byte " + std::to_string(event_start) + " (event " +
                                                 std::to_string(event_index) + ")"
                                           : "event " + std::to_string(event_index);
        ThrowInputError(file, pos, what);
      };
      // An odd time skips its event (counted), as the Kineto importer does:
      // the document is readable.
      auto time_of = [&](std::string_view t, int64_t* ns) { return ParseMicrosToNs(t, ns); };
      read_events.Add(stats);
      if (ph.size() != 1) {
        stats.Add("skipped.no_phase");
        return;
      }
      char p = ph[0];
      int64_t pid = ids.Map(pid_text);
      int64_t tid = ids.Map(tid_text);
      if (p == 'M') {
        stats.Add("read.metadata");
        if (Is(name, "process_name")) process_names[pid] = std::string(arg_name);
        if (Is(name, "thread_name")) thread_names[{pid, tid}] = std::string(arg_name);
        return;
      }
      if (p == 'X') {
        if (overlap) {
          // As ScanOverlapAnalysis: a segment's odd time is an error, whatever its process.
          const int which = OverlapSums::Which(name);
          if (which >= 0 && !overlap_sums.Add(pid, which, ts_text, dur_text)) {
            ThrowInputError(file, Position(doc, text, event_index, simdjson::SUCCESS), kBadOverlapTime);
          }
        }
        XRow r;
        r.pid = pid;
        r.tid = tid;
        if (!has_ts || !time_of(ts_text, &r.ts)) {
          stats.Add(has_ts ? "skipped.event.ts" : "skipped.event.no_ts");
          return;
        }
        if (!has_dur || !ParseScaledDecimal(dur_text, 6, &r.dur_ps) || r.dur_ps < 0) {
          stats.Add(!has_dur ? "skipped.event.no_dur" : "skipped.event.dur");
          return;
        }
        r.dur = (r.dur_ps + 500) / 1000;
        r.name_id = texts.Id(name);
        r.cat_id = texts.Id(cat);
        r.cat_code = CatOf(cat);
        r.type_id = texts.Id(task_type);
        if (x.size() >= UINT32_MAX) fail("too many events");
        x.push_back(r);
        // Lazily, as EventTable::shape: nothing for a file without shapes.
        if (!row_shape.empty() || !shape.empty()) {
          row_shape.resize(x.size() - 1, 0);  // zeros for the rows before the first shape
          row_shape.push_back(shape.empty() ? 0 : texts.Id(shape) + 1);
        }
        return;
      }
      if (p == 's' || p == 'f' || p == 't') {
        if (!has_ts || !has_id) {
          stats.Add("skipped.flow_without_id_or_ts");
          return;
        }
        FlowRow f;
        f.pid = pid;
        f.tid = tid;
        if (!time_of(ts_text, &f.ts)) {
          stats.Add("skipped.event.ts");
          return;
        }
        f.id = FlowIdOf(id_text);
        f.cat = FlowCatOf(cat);
        f.start = p == 's';
        f.bind_enclosing = p != 'f' || bp_e;
        if (p == 't') {
          stats.Add("skipped.flow_step");
          return;
        }
        flows.push_back(f);
        return;
      }
      stats.Add("skipped.ph_", std::string_view(&p, 1));
    });

    // ---- Classify processes and build tracks. ----
    std::unordered_map<int64_t, Proc> proc_by_pid;
    for (const auto& [pid, pname] : process_names) proc_by_pid[pid] = ProcFromName(pname);
    auto proc_of = [&](const XRow& r) {
      auto it = proc_by_pid.find(r.pid);
      if (it != proc_by_pid.end()) return it->second;
      if (r.cat_code != Cat::kOther) {
        return Proc::kPython;
      }
      return Proc::kUnknown;
    };
    // A device task's category depends on its name and task type only:
    // classified once per distinct pair.
    std::unordered_map<uint64_t, Category> category_of;
    auto classify = [&](const XRow& r) {
      uint64_t key = uint64_t{r.name_id} << 32 | r.type_id;
      auto [it, inserted] = category_of.try_emplace(key, Category::kCompute);
      if (inserted) it->second = ClassifyAscendTask(texts.View(r.name_id), texts.View(r.type_id), "");
      return it->second;
    };
    std::vector<Proc> proc(x.size());
    for (size_t i = 0; i < x.size(); ++i) proc[i] = proc_of(x[i]);
    // Device HCCL tasks make the Communication process's ops duplicates.
    bool hardware_has_comm = false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (proc[i] == Proc::kHardware) {
        Category c = classify(x[i]);
        if (c == Category::kCollective || c == Category::kP2P) hardware_has_comm = true;
      }
    }

    Stats::Counter read_cpu_op("read.python.cpu_op"), read_enqueue("read.python.enqueue"),
        read_dequeue("read.python.dequeue"), read_cann("read.cann.api"),
        read_hccl("read.hccl.op"), read_device("read.device.task"),
        skipped_subtask("skipped.hccl.subtask"),
        skipped_dup_op("skipped.hccl.op_also_a_device_task"),
        skipped_overlap("skipped.overlap_analysis"), skipped_unknown("skipped.process.unknown");
    std::vector<TrackBuild> tracks;
    std::map<int64_t, size_t> host_track;                          // tid -> track
    std::map<std::pair<int64_t, int64_t>, size_t> device_track;    // (pid, tid) -> track
    std::vector<int32_t> track_of(x.size(), -1);
    int64_t python_pid = -1;
    for (size_t i = 0; i < x.size(); ++i) {
      const XRow& r = x[i];
      size_t t = 0;
      switch (proc[i]) {
        case Proc::kPython:
        case Proc::kCann: {
          if (proc[i] == Proc::kPython) {
            switch (r.cat_code) {
              case Cat::kCpuOp: read_cpu_op.Add(stats); break;
              case Cat::kEnqueue: read_enqueue.Add(stats); break;
              case Cat::kDequeue: read_dequeue.Add(stats); break;
              default:
                std::string_view c = texts.View(r.cat_id);
                stats.Add("read.python.", c.empty() ? std::string_view("other") : c);
            }
            if (python_pid < 0) python_pid = r.pid;
          } else {
            read_cann.Add(stats);
          }
          auto [it, inserted] = host_track.try_emplace(r.tid, tracks.size());
          if (inserted) tracks.push_back(TrackBuild{false, r.pid, r.tid, {}, {}, {}, {}});
          t = it->second;
          if (proc[i] == Proc::kPython) tracks[t].pid = r.pid;
          break;
        }
        case Proc::kHardware:
        case Proc::kComm: {
          if (proc[i] == Proc::kComm) {
            if (!StartsWith(texts.View(r.name_id), "hcom_")) {
              skipped_subtask.Add(stats);
              continue;
            }
            if (hardware_has_comm) {
              skipped_dup_op.Add(stats);
              continue;
            }
            read_hccl.Add(stats);
          } else {
            read_device.Add(stats);
          }
          auto [it, inserted] = device_track.try_emplace({r.pid, r.tid}, tracks.size());
          if (inserted) tracks.push_back(TrackBuild{true, r.pid, r.tid, {}, {}, {}, {}});
          t = it->second;
          break;
        }
        case Proc::kOverlap:
          skipped_overlap.Add(stats);
          continue;
        case Proc::kOther: {
          auto it = process_names.find(r.pid);
          stats.Add("skipped.process.", it == process_names.end() ? std::string_view("unknown")
                                                                 : std::string_view(it->second));
          continue;
        }
        case Proc::kUnknown:
          skipped_unknown.Add(stats);
          continue;
      }
      track_of[i] = static_cast<int32_t>(t);
      tracks[t].rows.push_back(static_cast<uint32_t>(i));
    }
    for (TrackBuild& t : tracks) SortAndNest(t, x);

    // ---- Flows: pair starts and finishes, bind them to events. ----
    // Per flow category (FlowCat): the keys counted once per flow.
    std::vector<Stats::Counter> flow_duplicate, flow_unmatched, flow_read, flow_linked, flow_unbound;
    for (const char* n : kFlowNames) {
      std::string f(n);
      flow_duplicate.emplace_back("skipped.flow." + f + ".duplicate_end");
      flow_unmatched.emplace_back("skipped.flow." + f + ".unmatched_end");
      flow_read.emplace_back("read.flow." + f);
      flow_linked.emplace_back("linked.flow." + f);
      flow_unbound.emplace_back("skipped.flow." + f + ".unbound");
    }
    Stats::Counter npu_linked("linked.flow.async_npu"), npu_unbound("skipped.flow.async_npu.unbound"),
        fwdbwd_skipped("skipped.flow.fwdbwd.not_represented"),
        other_skipped("skipped.flow.other.not_represented");
    std::unordered_map<FlowKey, std::pair<int32_t, int32_t>, FlowKeyHash> pairs;
    for (size_t i = 0; i < flows.size(); ++i) {
      auto& pr = pairs.try_emplace(FlowKey{flows[i].id, flows[i].cat}, -1, -1).first->second;
      int32_t& slot = flows[i].start ? pr.first : pr.second;
      if (slot >= 0) {
        flow_duplicate[flows[i].cat].Add(stats);
        continue;
      }
      slot = static_cast<int32_t>(i);
    }
    auto bind = [&](const FlowRow& f, auto&& wanted) -> int64_t {
      const TrackBuild* tr = nullptr;
      auto hit = host_track.find(f.tid);
      auto dit = device_track.find({f.pid, f.tid});
      for (int pass = 0; pass < 2; ++pass) {
        tr = pass == 0 ? (dit != device_track.end() ? &tracks[dit->second] : nullptr)
                       : (hit != host_track.end() ? &tracks[hit->second] : nullptr);
        if (!tr) continue;
        int32_t pos = f.bind_enclosing ? Enclosing(*tr, f.ts) : NextStarting(*tr, f.ts);
        for (int k = 0; pos >= 0 && !wanted(tr->rows[pos]); ++k) {
          pos = k < kMaxNestingWalk ? tr->parent[pos] : -1;
        }
        if (pos >= 0) return tr->rows[pos];
      }
      return -1;
    };
    auto is_device = [&](uint32_t r) { return proc[r] == Proc::kHardware || proc[r] == Proc::kComm; };
    auto is_cann = [&](uint32_t r) { return proc[r] == Proc::kCann; };
    auto is_cat = [&](Cat c) {
      return [&, c](uint32_t r) { return proc[r] == Proc::kPython && x[r].cat_code == c; };
    };
    auto is_python = [&](uint32_t r) { return proc[r] == Proc::kPython; };
    // Each flow end is bound once, in file order: neighbouring flows search
    // neighbouring parts of a track, where binding them in the pairs' hash
    // order missed the cache at every step of every search.
    std::vector<int64_t> bound(flows.size(), -1);
    for (size_t i = 0; i < flows.size(); ++i) {
      const FlowRow& f = flows[i];
      switch (f.cat) {
        case kH2D: bound[i] = f.start ? bind(f, is_cann) : bind(f, is_device); break;
        case kTaskQueue:
          bound[i] = f.start ? bind(f, is_cat(Cat::kEnqueue)) : bind(f, is_cat(Cat::kDequeue));
          break;
        case kAsyncNpu: bound[i] = f.start ? bind(f, is_python) : bind(f, is_device); break;
        default: break;
      }
    }

    UnionFind uf(x.size());
    std::vector<uint8_t> issuing(x.size(), 0);     // CANN launch with a HostToDevice flow
    std::vector<uint8_t> joined(x.size(), 0);      // host row joined to a launch group
    std::vector<std::pair<int64_t, int64_t>> npu_links;  // async_npu (source op, task)
    for (auto& [key, pr] : pairs) {
      if (pr.first < 0 || pr.second < 0) {
        flow_unmatched[key.cat].Add(stats);
        continue;
      }
      flow_read[key.cat].Add(stats);
      int64_t a = -1, b = -1;
      switch (key.cat) {
        case kH2D:
          a = bound[pr.first];
          b = bound[pr.second];
          if (a >= 0 && b >= 0) issuing[a] = 1;
          break;
        case kTaskQueue:
          a = bound[pr.first];
          b = bound[pr.second];
          if (a >= 0 && b >= 0) joined[a] = joined[b] = 1;
          break;
        case kAsyncNpu:
          a = bound[pr.first];
          b = bound[pr.second];
          if (a >= 0 && b >= 0) {
            npu_links.emplace_back(a, b);
            a = b = -1;  // joined below, only where no launch is known
            npu_linked.Add(stats);
          } else {
            npu_unbound.Add(stats);
          }
          continue;
        case kFwdBwd:
          // Forward op -> backward op: the model has no field for it.
          fwdbwd_skipped.Add(stats);
          continue;
        default:
          other_skipped.Add(stats);
          continue;
      }
      if (a < 0 || b < 0) {
        flow_unbound[key.cat].Add(stats);
        continue;
      }
      flow_linked[key.cat].Add(stats);
      uf.Union(static_cast<uint32_t>(a), static_cast<uint32_t>(b));
    }
    // A launch made from the dispatch thread belongs to the Dequeue around it.
    for (size_t i = 0; i < x.size(); ++i) {
      if (!issuing[i]) continue;
      joined[i] = 1;
      const TrackBuild& tr = tracks[track_of[i]];
      int32_t pos = Enclosing(tr, x[i].ts);
      for (int k = 0;
           pos >= 0 && !(proc[tr.rows[pos]] == Proc::kPython && x[tr.rows[pos]].cat_code == Cat::kDequeue);
           ++k) {
        pos = k < kMaxNestingWalk ? tr.parent[pos] : -1;
      }
      if (pos >= 0) uf.Union(static_cast<uint32_t>(i), tr.rows[pos]);
    }
    std::vector<uint8_t> root_has_launch(x.size(), 0);
    for (size_t i = 0; i < x.size(); ++i) {
      if (issuing[i]) root_has_launch[uf.Find(static_cast<uint32_t>(i))] = 1;
    }
    // Tasks with no launch call seen: join the Enqueue inside their framework op.
    for (auto [op, task] : npu_links) {
      uint32_t root = uf.Find(static_cast<uint32_t>(task));
      if (root_has_launch[root]) continue;
      const TrackBuild& tr = tracks[track_of[op]];
      int64_t op_end = x[op].ts + x[op].dur;
      int32_t pos = NextStarting(tr, x[op].ts);
      for (int k = 0; pos >= 0 && static_cast<size_t>(pos) < tr.rows.size() && tr.ts[pos] <= op_end &&
                      k < 256;
           ++pos, ++k) {
        uint32_t r = tr.rows[pos];
        if (proc[r] == Proc::kPython && x[r].cat_code == Cat::kEnqueue) {
          uf.Union(r, static_cast<uint32_t>(task));
          joined[r] = 1;
          root_has_launch[uf.Find(r)] = 1;
          stats.Add("linked.device_task.via_async_npu_enqueue");
          break;
        }
      }
    }
    for (size_t i = 0; i < x.size(); ++i) {
      if (joined[i]) root_has_launch[uf.Find(static_cast<uint32_t>(i))] = 1;
    }

    // ---- Steps. ----
    struct Marker {
      int64_t ts, end;
      int32_t step;
    };
    std::vector<Marker> markers;
    for (size_t i = 0; i < x.size(); ++i) {
      if (proc[i] == Proc::kPython && StartsWith(texts.View(x[i].name_id), "ProfilerStep#")) {
        markers.push_back({x[i].ts, x[i].ts + x[i].dur, ParseStepNumber(texts.View(x[i].name_id))});
      }
    }
    std::sort(markers.begin(), markers.end(),
              [](const Marker& a, const Marker& b) { return a.ts < b.ts; });
    auto step_at = [&](int64_t t) -> int32_t {
      auto it = std::upper_bound(markers.begin(), markers.end(), t,
                                 [](int64_t v, const Marker& m) { return v < m.ts; });
      if (it == markers.begin()) return kNone;
      --it;
      return t <= it->end ? it->step : kNone;
    };

    // ---- Correlations: one per launch group that has a device task. ----
    std::vector<int64_t> corr(x.size(), -1);        // by root
    std::vector<int64_t> first_launch(x.size(), INT64_MAX);  // by root
    for (size_t i = 0; i < x.size(); ++i) {
      if (joined[i]) {
        uint32_t r = uf.Find(static_cast<uint32_t>(i));
        first_launch[r] = std::min(first_launch[r], x[i].ts);
      }
    }
    int64_t next_corr = 1;
    int64_t linked_tasks = 0, unlinked_tasks = 0;
    for (const TrackBuild& t : tracks) {
      if (!t.device) continue;
      for (uint32_t r : t.rows) {
        uint32_t root = uf.Find(r);
        if (root_has_launch[root]) {
          if (corr[root] < 0) corr[root] = next_corr++;
          ++linked_tasks;
        } else {
          ++unlinked_tasks;
        }
      }
    }
    stats.Add("linked.device_task", linked_tasks);
    stats.Add("unlinked.device_task", unlinked_tasks);

    // ---- Emit tracks. ----
    rank->pid = python_pid;
    int64_t cat_counts[kCategoryCount] = {};
    // The rank's string id of each text, interned at first use: the same
    // order of Intern calls, so the same ids, as interning every row.
    constexpr StringId kNoName = UINT32_MAX;
    std::vector<StringId> rank_names(texts.size(), kNoName);
    for (TrackBuild& tb : tracks) {
      bool has_dequeue = false;
      int comm = 0, copy = 0, compute = 0;
      for (uint32_t r : tb.rows) {
        if (proc[r] == Proc::kPython && x[r].cat_code == Cat::kDequeue) has_dequeue = true;
      }
      std::string tname;
      auto tn = thread_names.find({tb.pid, tb.tid});
      if (tn != thread_names.end()) tname = tn->second;
      TrackKind kind = tb.device ? TrackKind::kDeviceStream : TrackKind::kHostThread;
      if (tname.empty()) tname = (tb.device ? "Stream " : "Thread ") + std::to_string(tb.tid);
      Track& track = rank->AddTrack(kind, TrackRole::kUnspecified, tname, tb.tid);
      track.events.Reserve(tb.rows.size());
      for (uint32_t r : tb.rows) {
        const XRow& row = x[r];
        const std::string_view row_name = texts.View(row.name_id);
        Event e;
        e.ts = row.ts;
        e.dur = row.dur;
        StringId& name_id = rank_names[row.name_id];
        if (name_id == kNoName) name_id = rank->strings.Intern(row_name);
        e.name = name_id;
        if (!row_shape.empty() && row_shape[r] != 0) {
          StringId& shape_id = rank_names[row_shape[r] - 1];
          if (shape_id == kNoName) shape_id = rank->strings.Intern(texts.View(row_shape[r] - 1));
          e.shape = shape_id;
        }
        uint32_t root = uf.Find(r);
        if (tb.device) {
          e.category = classify(row);
          if (e.category == Category::kCollective || e.category == Category::kP2P) {
            CommRecord rec = HcclRecord(row_name, texts.View(row.type_id), &rank->strings);
            e.comm = static_cast<int32_t>(track.comms.size());
            track.comms.push_back(std::move(rec));
            ++comm;
          } else if (e.category == Category::kCopy) {
            ++copy;
          } else {
            ++compute;
          }
          e.correlation = corr[root];
          if (e.correlation >= 0) e.step = step_at(first_launch[root]);
        } else if (proc[r] == Proc::kPython) {
          if (row.cat_code == Cat::kEnqueue || row.cat_code == Cat::kDequeue) {
            e.category = Category::kLaunch;
            e.correlation = corr[root];
            if (first_launch[root] != INT64_MAX) e.step = step_at(first_launch[root]);
          } else if (StartsWith(row_name, "ProfilerStep#")) {
            e.category = Category::kMarker;
            e.flags = kFlagStepMarker;
            e.step = ParseStepNumber(row_name);
          } else {
            e.category = Category::kHostOp;
          }
        } else {  // CANN
          bool sync = Contains(row_name, "aclrtSynchronize");
          bool blocking_copy = Contains(row_name, "aclrtMemcpy") && !Contains(row_name, "Async");
          if (issuing[r] && corr[root] >= 0) {
            e.category = Category::kLaunch;
            e.correlation = corr[root];
            e.step = step_at(first_launch[root]);
            if (blocking_copy) e.flags = kFlagBlocking;
          } else if (sync || blocking_copy) {
            e.category = Category::kSync;
            e.flags = kFlagBlocking;
          } else {
            e.category = Category::kHostOp;
          }
        }
        ++cat_counts[static_cast<int>(e.category)];
        track.events.Append(e);
      }
      if (tb.device) {
        track.role = comm > 0 && compute == 0 ? TrackRole::kDeviceComm
                     : copy > 0 && compute == 0 && comm == 0 ? TrackRole::kDeviceCopy
                                                             : TrackRole::kDeviceCompute;
      } else {
        track.role = tb.tid == python_pid ? TrackRole::kHostMain
                     : has_dequeue        ? TrackRole::kHostDispatch
                                          : TrackRole::kHostOther;
      }
    }
    for (int c = 0; c < kCategoryCount; ++c) {
      if (cat_counts[c]) {
        stats.Add("imported.", CategoryName(static_cast<Category>(c)), cat_counts[c]);
      }
    }
  });
  stats.FlushInto(rank);
  if (overlap) *overlap = overlap_sums.Figures(process_names, rank_id);
}
}  // namespace

bool ParseHcclName(std::string_view name, std::string_view* group, int64_t* sequence) {
  if (!StartsWith(name, "hcom_")) return false;
  size_t at = name.find('@');
  if (at != std::string_view::npos) name = name.substr(0, at);
  size_t dd = name.find("__");
  if (dd == std::string_view::npos) return false;
  std::string_view rest = name.substr(dd + 2);
  size_t us = rest.rfind('_');
  if (us == std::string_view::npos || us == 0) return false;
  int64_t seq = 0;
  if (!ParseScaledDecimal(rest.substr(us + 1), 0, &seq) || seq < 0) return false;
  *group = rest.substr(0, us);
  *sequence = seq;
  return true;
}

CommRecord HcclRecord(std::string_view name, std::string_view type, StringTable* strings) {
  CommRecord rec;
  rec.kind = HcclKind(StartsWith(type, "hcom_") ? type : name);
  std::string_view group;
  int64_t seq = -1;
  if (ParseHcclName(name, &group, &seq)) {
    rec.group = strings->Intern(group);
    rec.sequence = seq;
  }
  return rec;
}

// The text goes into the thread's kept buffer (kept_buffer.h), not a fresh
// padded_string: its pages are then already mapped on the next read.
namespace {
simdjson::padded_string_view Padded(const KeptBuffer& b) {
  return simdjson::padded_string_view(b.data(), b.size(), b.capacity());
}
}  // namespace

void ImportTraceView(std::string_view json, const std::string& file, Rank* rank,
                     std::vector<LabeledValue>* overlap, int32_t rank_id) {
  const KeptBuffer text = KeptBuffer::Copy(KeptBuffer::kJsonText, json, simdjson::SIMDJSON_PADDING);
  ImportTraceViewPadded(Padded(text), file, rank, overlap, rank_id);
}

void ImportTraceViewFile(const std::string& path, Rank* rank, std::vector<LabeledValue>* overlap,
                         int32_t rank_id) {
  const KeptBuffer text = KeptBuffer::Load(KeptBuffer::kJsonText, path, simdjson::SIMDJSON_PADDING);
  ImportTraceViewPadded(Padded(text), path, rank, overlap, rank_id);
}

namespace {

std::vector<LabeledValue> ScanOverlapPadded(const simdjson::padded_string_view& json,
                                           const std::string& file, int32_t rank) {
  OverlapSums sums;
  std::unordered_map<int64_t, std::string> process_names;
  IdMapper ids;
  ParseGuarded(json, file, [&](simdjson::ondemand::document& doc,
                               const simdjson::padded_string_view& text, int64_t& event_index) {
    int64_t count = 0;
    ForEachEvent(doc, [&](simdjson::ondemand::object ev) {
      event_index = count++;
      std::string_view ph, name, arg_name, ts_text, dur_text, pid_text;
      for (auto field_result : ev) {
        simdjson::ondemand::field field;
        if (auto err = std::move(field_result).get(field)) throw simdjson::simdjson_error(err);
        Key key = KeyOf(FieldKey(field));
        if (key == Key::kOther) continue;
        simdjson::ondemand::value v = field.value();
        switch (key) {
          case Key::kPh: StringText(v, &ph); break;
          case Key::kName: StringText(v, &name); break;
          case Key::kPid: pid_text = ValueText(v); break;
          case Key::kTs: ts_text = ValueText(v); break;
          case Key::kDur: dur_text = ValueText(v); break;
          case Key::kArgs:
            if (v.type() != json_type::object) break;
            for (auto a_result : v.get_object()) {
              simdjson::ondemand::field a;
              if (auto err = std::move(a_result).get(a)) throw simdjson::simdjson_error(err);
              if (FieldKey(a) != "name") continue;
              simdjson::ondemand::value av = a.value();
              StringText(av, &arg_name);
            }
            break;
          default: break;
        }
      }
      if (Is(ph, "M") && Is(name, "process_name")) {
        process_names[ids.Map(pid_text)] = std::string(arg_name);
        return;
      }
      if (ph != "X") return;
      const int which = OverlapSums::Which(name);
      if (which < 0) return;
      if (!sums.Add(ids.Map(pid_text), which, ts_text, dur_text)) {
        ThrowInputError(file, Position(doc, text, event_index, simdjson::SUCCESS), kBadOverlapTime);
      }
    });
  });
  return sums.Figures(process_names, rank);
}

}  // namespace

std::vector<LabeledValue> ScanOverlapAnalysis(std::string_view json, const std::string& file,
                                              int32_t rank) {
  const KeptBuffer text = KeptBuffer::Copy(KeptBuffer::kJsonText, json, simdjson::SIMDJSON_PADDING);
  return ScanOverlapPadded(Padded(text), file, rank);
}

std::vector<LabeledValue> ScanOverlapAnalysisFile(const std::string& path, int32_t rank) {
  const KeptBuffer text = KeptBuffer::Load(KeptBuffer::kJsonText, path, simdjson::SIMDJSON_PADDING);
  return ScanOverlapPadded(Padded(text), path, rank);
}

}  // namespace moetrace
