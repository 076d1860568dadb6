#include "formats/kineto/kineto_rank_reader.h"

#include <simdjson.h>

#include <cctype>
#include <functional>
#include <string>

#include "formats/errors.h"
#include "formats/decimal.h"
#include "formats/kineto/json_key.h"
#include "formats/kineto/json_scan.h"
#include "formats/kineto/kineto_builder.h"
#include "formats/kineto/raw_value.h"

namespace moetrace {
namespace {

namespace od = simdjson::ondemand;

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

const char* TypeName(od::json_type t) {
  switch (t) {
    case od::json_type::array: return "an array";
    case od::json_type::object: return "an object";
    case od::json_type::number: return "a number";
    case od::json_type::string: return "a string";
    case od::json_type::boolean: return "a boolean";
    case od::json_type::null: return "null";
  }
  return "a value";
}

// Integers from a list written either as a JSON array or as a string
// holding one ("[0, 1, 2]", as record_param_comms writes them).
template <typename T>
bool ParseIntList(std::string_view text, std::vector<T>* out) {
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == '-' || (c >= '0' && c <= '9')) {
      size_t j = i + 1;
      while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
      int64_t v = 0;
      if (!ParseTruncatedInteger(text.substr(i, j - i), &v)) return false;
      out->push_back(T(v));
      i = j;
    } else if (c == '[' || c == ']' || c == ',' || c == ' ' || c == '\n' || c == '\t') {
      ++i;
    } else {
      return false;
    }
  }
  return true;
}

enum class Arg {
  kNone, kCorrelation, kExternalId, kStream, kDevice, kBytes, kName, kDeviceType, kDeviceId,
  kMemBytes, kTotalAllocated, kTotalReserved, kCollective, kPgName, kPgId, kPgDesc, kDtype,
  kInNelems, kOutNelems, kGroupSize, kRankStart, kRankStride, kSrcRank, kDstRank, kInSplits,
  kOutSplits, kGroupRanks,
};

// The args keys the importer reads; dispatching on the length first keeps
// the common miss ("Ev Idx", "Input Dims", "grid", ...) to one or two compares.
Arg ClassifyArg(std::string_view k) {
  switch (k.size()) {
    case 4: return k == "name" ? Arg::kName : Arg::kNone;
    case 5:
      if (k == "bytes") return Arg::kBytes;
      if (k == "Bytes") return Arg::kMemBytes;
      if (k == "dtype") return Arg::kDtype;
      return Arg::kNone;
    case 6:
      if (k == "stream") return Arg::kStream;
      if (k == "device") return Arg::kDevice;
      return Arg::kNone;
    case 8:
      if (k == "streamId") return Arg::kStream;
      if (k == "Src Rank") return Arg::kSrcRank;
      if (k == "Dst Rank") return Arg::kDstRank;
      return Arg::kNone;
    case 9:
      if (k == "Device Id") return Arg::kDeviceId;
      if (k == "stream id") return Arg::kStream;
      return Arg::kNone;
    case 10: return k == "Group size" ? Arg::kGroupSize : Arg::kNone;
    case 11:
      if (k == "correlation") return Arg::kCorrelation;
      if (k == "External id" || k == "external id") return Arg::kExternalId;
      if (k == "Device Type") return Arg::kDeviceType;
      return Arg::kNone;
    case 13:
      if (k == "In msg nelems") return Arg::kInNelems;
      if (k == "In split size") return Arg::kInSplits;
      return Arg::kNone;
    case 14:
      if (k == "Total Reserved") return Arg::kTotalReserved;
      if (k == "Out msg nelems") return Arg::kOutNelems;
      if (k == "Out split size") return Arg::kOutSplits;
      return Arg::kNone;
    case 15:
      if (k == "Total Allocated") return Arg::kTotalAllocated;
      if (k == "Collective name") return Arg::kCollective;
      return Arg::kNone;
    case 16: return k == "Process Group ID" ? Arg::kPgId : Arg::kNone;
    case 17: return k == "Global rank start" ? Arg::kRankStart : Arg::kNone;
    case 18:
      if (k == "Process Group Name") return Arg::kPgName;
      if (k == "Global rank stride") return Arg::kRankStride;
      return Arg::kNone;
    case 19: return k == "Process Group Ranks" ? Arg::kGroupRanks : Arg::kNone;
    case 25: return k == "Process Group Description" ? Arg::kPgDesc : Arg::kNone;
    default: return Arg::kNone;
  }
}

class EventReader {
 public:
  EventReader(const PaddedBuffer& buf, const std::string& file, KinetoBuilder* builder)
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

  [[noreturn]] void Fail(const char* at, const std::string& what) const {
    ThrowInputError(file_, "byte " + std::to_string(at - buf_.data()), what);
  }
  [[noreturn]] void FailJson(const char* at, simdjson::error_code err,
                             const char* context) const {
    Fail(at, std::string("malformed JSON ") + context + ": " + simdjson::error_message(err));
  }

  void ParseEvent(const char* begin, const char* end) {
    const size_t room = size_t(buf_.data() + buf_.padded_size() - begin);
    od::document doc;
    auto err = parser_.iterate(begin, size_t(end - begin), room).get(doc);
    if (err) FailJson(begin, err, "in an event");
    od::object obj;
    if ((err = doc.get_object().get(obj))) FailJson(begin, err, "in an event");
    ParseObject(obj, begin);
  }

  // One event object; `begin` is where it starts (for error positions).
  void ParseObject(od::object& obj, const char* begin) {
    simdjson::error_code err;
    KinetoEvent ev;
    KinetoEventFacts* facts = nullptr;
    if (observer_) {
      const int64_t index = facts_.index;
      facts_ = KinetoEventFacts();
      facts_.index = index;
      facts = &facts_;
    }
    for (auto fr : obj) {
      // A reference into the result, not a copy: copying a field costs a
      // store-forwarding stall per key (a third of this loop's time).
      if ((err = fr.error())) FailJson(begin, err, "in an event");
      od::field&& f = std::move(fr).value_unsafe();
      std::string_view key;
      if ((err = FieldKey(f, &key))) FailJson(begin, err, "in an event key");
      od::value v = f.value();
      switch (key.size()) {
        case 2:
          if (key == "ph") {
            std::string_view s = String(v, key, begin);
            ev.ph = s.empty() ? '\0' : s[0];
          } else if (key == "ts") {
            if (facts) facts->ts = PeekRawValue(v);
            ev.has_ts = Time(v, key, begin, &ev.ts, true);
          } else if (key == "id") {
            ev.has_flow_id = Int(v, key, begin, &ev.flow_id, true);
          }
          break;
        case 3:
          if (key == "cat") {
            ev.has_cat = !IsNull(v);
            if (ev.has_cat) ev.cat = String(v, key, begin);
            if (facts) facts->cat = StringFact(ev.has_cat, ev.cat);
          } else if (key == "pid") {
            ev.pid = Id(v, key, begin);
          } else if (key == "tid") {
            ev.tid = Id(v, key, begin);
          } else if (key == "dur") {
            if (facts) facts->dur = PeekRawValue(v);
            ev.has_dur = Time(v, key, begin, &ev.dur, false);
          }
          break;
        case 4:
          if (key == "name") {
            const bool has_name = !IsNull(v);
            if (has_name) ev.name = String(v, key, begin);
            if (facts) facts->name = StringFact(has_name, ev.name);
          } else if (key == "args") {
            if (facts) facts->stream = facts->correlation = KinetoRawValue();
            Args(v, begin, &ev);
          }
          break;
        default:
          break;
      }
    }
    builder_->Add(ev);
    if (facts) {
      observer_->OnEvent(*facts);
      ++facts_.index;
    }
  }

 private:
  const char* Where(od::value& v, const char* fallback) {
    std::string_view tok = v.raw_json_token();
    return tok.data() ? tok.data() : fallback;
  }

  static KinetoRawValue StringFact(bool present, std::string_view s) {
    KinetoRawValue r;
    r.type = present ? KinetoRawValue::kString : KinetoRawValue::kNull;
    r.text = s;
    return r;
  }

  // args["stream"] / args["correlation"] as written, for the observer.
  void ObserveArg(std::string_view key, od::value& x) {
    if (!observer_ || (key != "stream" && key != "correlation")) return;
    KinetoRawValue r = PeekRawValue(x);
    if (r.escaped) facts_unusual_ = true;
    (key == "stream" ? facts_.stream : facts_.correlation) = r;
  }

  bool IsNull(od::value& v) {
    od::json_type t;
    return !v.type().get(t) && t == od::json_type::null;
  }

  [[noreturn]] void WrongType(od::value& v, std::string_view key, const char* at,
                              const char* expected) {
    od::json_type t;
    std::string got = v.type().get(t) ? "invalid JSON" : TypeName(t);
    Fail(Where(v, at), std::string("expected ") + expected + " for " + Quote(key) + ", got " +
                           got);
  }

  std::string_view String(od::value& v, std::string_view key, const char* at) {
    std::string_view s;
    if (v.get_string().get(s)) WrongType(v, key, at, "a string");
    return s;
  }

  // A microsecond time as exact nanoseconds; false when null.
  bool Time(od::value& v, std::string_view key, const char* at, int64_t* out, bool is_ts) {
    od::json_type t;
    if (v.type().get(t)) WrongType(v, key, at, "a number");
    std::string_view text;
    bool from_string = false;
    if (t == od::json_type::number) {
      // Whole µs, the common case: simdjson's integer parser is exact and
      // several times faster than the decimal parser, which takes the rest.
      constexpr int64_t kMaxMicros = INT64_MAX / 1000;
      int64_t us = 0;
      if (!v.get_int64().get(us) && us <= kMaxMicros && us >= -kMaxMicros) {
        *out = us * 1000;
        if (is_ts) builder_->CountTimestamp(true, false);
        return true;
      }
      text = v.raw_json_token();
    } else if (t == od::json_type::string) {
      // Some Chrome-JSON writers quote their times ("1704161511422904.204").
      if (v.get_string().get(text)) WrongType(v, key, at, "a number");
      from_string = true;
    } else if (t == od::json_type::null) {
      return false;
    } else {
      WrongType(v, key, at, "a number");
    }
    bool integral = true;
    switch (MicrosToNanos(text, out, &integral)) {
      case DecimalStatus::kOk: break;
      case DecimalStatus::kNotANumber:
        Fail(Where(v, at), "expected a number for " + Quote(key) + ", got string " +
                               Quote(text));
      case DecimalStatus::kOutOfRange:
        Fail(Where(v, at), "number out of range for " + Quote(key) + ": " + std::string(text));
    }
    if (is_ts) builder_->CountTimestamp(integral, from_string);
    return true;
  }

  // An integer (a fractional number is truncated); numeric strings are
  // accepted when `lenient`. False when null or (lenient) not numeric.
  bool Int(od::value& v, std::string_view key, const char* at, int64_t* out, bool lenient) {
    od::json_type t;
    if (v.type().get(t)) WrongType(v, key, at, "an integer");
    std::string_view text;
    if (t == od::json_type::number) {
      int64_t n = 0;
      if (!v.get_int64().get(n)) {  // a plain integer: simdjson's parser
        *out = n;
        return true;
      }
      text = v.raw_json_token();
      if (ParseTruncatedInteger(text, out)) return true;
      double d = 0;
      if (v.get_double().get(d) || !(d > -9.2e18 && d < 9.2e18)) {
        Fail(Where(v, at), "number out of range for " + Quote(key));
      }
      *out = int64_t(d);
      return true;
    }
    if (t == od::json_type::null) return false;
    if (t == od::json_type::string && lenient) {
      if (v.get_string().get(text)) WrongType(v, key, at, "an integer");
      return ParseTruncatedInteger(text, out);
    }
    WrongType(v, key, at, "an integer");
  }

  // pid / tid: numbers, numeric strings ("25738"), "stream 7", or labels.
  int64_t Id(od::value& v, std::string_view key, const char* at) {
    od::json_type t;
    if (v.type().get(t)) WrongType(v, key, at, "a number or a string");
    int64_t id = 0;
    if (t == od::json_type::number) {
      Int(v, key, at, &id, false);
      return id;
    }
    if (t == od::json_type::string) {
      std::string_view s = String(v, key, at);
      if (ParseTruncatedInteger(s, &id)) return id;
      if (s.size() > 7 && s.compare(0, 7, "stream ") == 0 &&
          ParseTruncatedInteger(s.substr(7), &id)) {
        return id;
      }
      return builder_->SyntheticId(s);
    }
    if (t == od::json_type::null) return builder_->SyntheticId("");
    WrongType(v, key, at, "a number or a string");
  }

  template <typename T>
  void List(od::value& v, std::string_view key, const char* at, std::vector<T>* out) {
    od::json_type t;
    if (v.type().get(t)) WrongType(v, key, at, "a list");
    if (t == od::json_type::string) {
      std::string_view s = String(v, key, at);
      if (!ParseIntList(s, out)) Fail(Where(v, at), "expected a list of integers for " + Quote(key));
    } else if (t == od::json_type::array) {
      od::array a;
      if (v.get_array().get(a)) WrongType(v, key, at, "a list");
      for (auto x : a) {
        od::value e;
        if (x.get(e)) WrongType(v, key, at, "a list of integers");
        int64_t n = 0;
        if (Int(e, key, at, &n, false)) out->push_back(T(n));
      }
    } else if (t != od::json_type::null) {
      WrongType(v, key, at, "a list");
    }
  }

  void Args(od::value& v, const char* at, KinetoEvent* ev) {
    od::json_type t;
    if (v.type().get(t)) WrongType(v, "args", at, "an object");
    if (t == od::json_type::null) return;
    od::object a;
    if (v.get_object().get(a)) WrongType(v, "args", at, "an object");
    for (auto fr : a) {
      simdjson::error_code err;
      if ((err = fr.error())) FailJson(at, err, "in args");
      od::field&& f = std::move(fr).value_unsafe();
      std::string_view key;
      if ((err = FieldKey(f, &key))) FailJson(at, err, "in an args key");
      od::value x = f.value();
      ArgsField(key, x, at, ev);
    }
  }

  void ArgsField(std::string_view key, od::value& x, const char* at, KinetoEvent* ev) {
    int64_t n = 0;
    ObserveArg(key, x);
    switch (ClassifyArg(key)) {
      case Arg::kNone: break;
      case Arg::kCorrelation: Int(x, key, at, &ev->correlation, false); break;
      case Arg::kExternalId: Int(x, key, at, &ev->external_id, false); break;
      case Arg::kStream:
        if (!Int(x, key, at, &ev->stream, true)) ev->stream = -1;
        break;
      case Arg::kDevice:
        if (!Int(x, key, at, &ev->device, true)) ev->device = -1;
        break;
      case Arg::kBytes: Int(x, key, at, &ev->bytes, false); break;
      case Arg::kName: {
        od::json_type t;
        if (!x.type().get(t) && t == od::json_type::string) ev->meta_name = String(x, key, at);
        break;
      }
      case Arg::kDeviceType: Int(x, key, at, &ev->mem_device_type, false); break;
      case Arg::kDeviceId: Int(x, key, at, &ev->mem_device_id, false); break;
      case Arg::kMemBytes: ev->has_mem_bytes = Int(x, key, at, &ev->mem_bytes, false); break;
      case Arg::kTotalAllocated: Int(x, key, at, &ev->total_allocated, false); break;
      case Arg::kTotalReserved: Int(x, key, at, &ev->total_reserved, false); break;
      case Arg::kCollective: Args(ev).collective = std::string(String(x, key, at)); break;
      case Arg::kPgName: {
        od::json_type t;
        if (!x.type().get(t) && t == od::json_type::number) {
          if (Int(x, key, at, &n, false)) Args(ev).pg_name = std::to_string(n);
        } else {
          Args(ev).pg_name = std::string(String(x, key, at));
        }
        break;
      }
      case Arg::kPgId:
        if (Int(x, key, at, &n, true) && Args(ev).pg_name.empty()) {
          Args(ev).pg_name = std::to_string(n);
        }
        break;
      case Arg::kPgDesc: Args(ev).pg_desc = std::string(String(x, key, at)); break;
      case Arg::kDtype: Args(ev).dtype = std::string(String(x, key, at)); break;
      case Arg::kInNelems: Int(x, key, at, &Args(ev).in_nelems, true); break;
      case Arg::kOutNelems: Int(x, key, at, &Args(ev).out_nelems, true); break;
      case Arg::kGroupSize: Int(x, key, at, &Args(ev).group_size, true); break;
      case Arg::kRankStart: Int(x, key, at, &Args(ev).rank_start, true); break;
      case Arg::kRankStride: Int(x, key, at, &Args(ev).rank_stride, true); break;
      case Arg::kSrcRank: Int(x, key, at, &Args(ev).src_rank, true); break;
      case Arg::kDstRank: Int(x, key, at, &Args(ev).dst_rank, true); break;
      case Arg::kInSplits: List(x, key, at, &Args(ev).in_splits); break;
      case Arg::kOutSplits: List(x, key, at, &Args(ev).out_splits); break;
      case Arg::kGroupRanks: List(x, key, at, &Args(ev).group_ranks); break;
    }
  }

  KinetoCommArgs& Args(KinetoEvent* ev) {
    int32_t idx = ev->comm_args;
    if (idx < 0) return builder_->NewCommArgs(&ev->comm_args);
    return builder_->CommArgsAt(idx);
  }

  const PaddedBuffer& buf_;
  const std::string& file_;
  KinetoBuilder* builder_;
  od::parser parser_;
  KinetoEventObserver* observer_ = nullptr;
  KinetoEventFacts facts_;
  bool facts_unusual_ = false;
};

// The top-level values other than traceEvents that the importer reads.
void ParseHeaderValue(std::string_view key, std::string_view text, KinetoHeader* h) {
  if (key != "distributedInfo" && key != "deviceProperties" && key != "baseTimeNanoseconds" &&
      key != "host_name" && key != "schemaVersion") {
    return;
  }
  simdjson::padded_string json(text);
  od::parser parser;
  od::document doc;
  if (parser.iterate(json).get(doc)) return;
  if (key == "distributedInfo") {
    od::object o;
    if (doc.get_object().get(o)) return;
    for (auto fr : o) {
      od::field f;
      std::string_view k;
      if (std::move(fr).get(f) || f.unescaped_key().get(k)) return;
      int64_t n = 0;
      std::string_view s;
      if (k == "rank") {
        if (!f.value().get_int64().get(n) && n >= 0 && n <= INT32_MAX) h->rank = int32_t(n);
      } else if (k == "world_size") {
        if (!f.value().get_int64().get(n) && n >= 0 && n <= INT32_MAX) {
          h->world_size = int32_t(n);
        }
      } else if (k == "backend") {
        if (!f.value().get_string().get(s)) h->backend = std::string(s);
      }
    }
  } else if (key == "deviceProperties") {
    od::array a;
    if (doc.get_array().get(a)) return;
    for (auto d : a) {
      od::object o;
      if (d.get_object().get(o)) return;
      for (auto fr : o) {
        od::field f;
        std::string_view k;
        if (std::move(fr).get(f) || f.unescaped_key().get(k)) return;
        std::string_view s;
        uint64_t n = 0;
        if (k == "name" && !f.value().get_string().get(s)) h->device_name = std::string(s);
        if (k == "totalGlobalMem" && !f.value().get_uint64().get(n)) h->device_memory = n;
      }
      break;  // the first device describes the job's hardware
    }
  } else if (key == "baseTimeNanoseconds") {
    int64_t n = 0;
    if (!doc.get_int64().get(n)) {
      h->has_base_time = true;
      h->base_time_ns = n;
    }
  } else if (key == "host_name") {
    std::string_view s;
    if (!doc.get_string().get(s)) h->host_name = std::string(s);
  } else if (key == "schemaVersion") {
    int64_t n = 0;
    if (!doc.get_int64().get(n)) h->schema_version = n;
  }
}

}  // namespace

KinetoHeader SniffKinetoHeader(std::string_view prefix) {
  KinetoHeader h;
  JsonScanner sc(prefix.data(), prefix.data() + prefix.size());
  sc.SkipBom();
  if (!sc.Consume('{')) return h;
  for (;;) {
    std::string_view key;
    if (!sc.ReadString(&key) || !sc.Consume(':')) return h;
    if (key == "traceEvents") {
      h.has_trace_events = sc.Peek() == '[';
      return h;
    }
    const char* s = sc.SkipValue();
    if (!s) return h;
    ParseHeaderValue(key, std::string_view(s, size_t(sc.pos() - s)), &h);
    if (!sc.Consume(',')) return h;
  }
}

int32_t RankFromFileName(std::string_view name) {
  size_t slash = name.find_last_of('/');
  if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
  int32_t found = -1;
  for (size_t i = 0; i + 4 < name.size() + 1; ++i) {
    if (std::tolower(static_cast<unsigned char>(name[i])) != 'r' ||
        std::tolower(static_cast<unsigned char>(name[i + 1])) != 'a' ||
        std::tolower(static_cast<unsigned char>(name[i + 2])) != 'n' ||
        std::tolower(static_cast<unsigned char>(name[i + 3])) != 'k') {
      continue;
    }
    size_t j = i + 4;
    if (j < name.size() && (name[j] == '-' || name[j] == '_')) ++j;
    size_t d = j;
    int64_t v = 0;
    while (d < name.size() && std::isdigit(static_cast<unsigned char>(name[d])) && v < INT32_MAX) {
      v = v * 10 + (name[d] - '0');
      ++d;
    }
    if (d > j && v <= INT32_MAX) found = int32_t(v);  // the last match wins
  }
  return found;
}

namespace {

// Fills the rank and header of a rank file, as ReadKinetoRank does.
void FinishRank(KinetoBuilder& builder, const KinetoHeader& h, int32_t rank_hint,
                std::string_view rank_rule, Rank* rank) {
  builder.Finish(h.has_base_time ? h.base_time_ns : 0);
  if (h.rank >= 0) {
    rank->rank = h.rank;
    rank->AddStat("rank_rule.distributedInfo", 1);
  } else {
    rank->rank = rank_hint >= 0 ? rank_hint : 0;
    rank->AddStat("rank_rule." + std::string(rank_rule), 1);
  }
  rank->host = h.host_name;
}

struct NotTheFastPath {};

// The whole document in one on-demand pass, for a buffer that holds all of
// it: no event-boundary scan and one structural index instead of one per
// event. Anything it does not expect (a BOM, escaped top-level keys, any
// error at all) throws NotTheFastPath or InputError, and the caller reads
// the file again the streaming way, which gives the precise message.
Rank ReadWholeKinetoRank(const PaddedBuffer& buf, const std::string& file, int32_t rank_hint,
                         std::string_view rank_rule, KinetoHeader* header_out,
                         KinetoEventObserver* observer) {
  Rank rank;
  KinetoBuilder builder(&rank);
  EventReader reader(buf, file, &builder);
  reader.Observe(observer);
  KinetoHeader h;
  od::parser parser;
  od::document doc;
  if (!buf.data() || buf.size() < 2 || static_cast<unsigned char>(buf.data()[0]) == 0xEF) {
    throw NotTheFastPath();
  }
  if (parser.iterate(buf.data(), buf.size(), buf.padded_size()).get(doc)) throw NotTheFastPath();
  od::object top;
  if (doc.get_object().get(top)) throw NotTheFastPath();
  for (auto fr : top) {
    if (fr.error()) throw NotTheFastPath();
    od::field&& f = std::move(fr).value_unsafe();
    // The streaming reader matches keys as written, escapes included: an
    // escaped key is left to it.
    const char* raw_key = reinterpret_cast<const char*>(f.key().raw());
    size_t n = 0;
    while (raw_key[n] != '"' && raw_key[n] != '\\') ++n;
    if (raw_key[n] != '"') throw NotTheFastPath();
    const std::string_view key(raw_key, n);
    od::value v = f.value();
    if (key == "traceEvents") {
      od::array events;
      if (v.get_array().get(events)) throw NotTheFastPath();
      h.has_trace_events = true;
      reader.RestartObserver();
      for (auto er : events) {
        od::value ev;
        od::object obj;
        if (er.get(ev)) throw NotTheFastPath();
        const char* at = ev.raw_json_token().data();  // the '{'
        if (ev.get_object().get(obj)) throw NotTheFastPath();
        reader.ParseObject(obj, at);
      }
      continue;
    }
    // The top-level values the importer reads, as their raw text.
    od::json_type t;
    if (v.type().get(t)) throw NotTheFastPath();
    std::string_view raw;
    if (t == od::json_type::object) {
      od::object o;
      if (v.get_object().get(o) || o.raw_json().get(raw)) throw NotTheFastPath();
    } else if (t == od::json_type::array) {
      od::array a;
      if (v.get_array().get(a) || a.raw_json().get(raw)) throw NotTheFastPath();
    } else {
      raw = v.raw_json_token();
    }
    ParseHeaderValue(key, raw, &h);
  }
  // Past the root object there must be nothing (on-demand only checks
  // that the last token closes it: "{...} }" would pass).
  const char* rest = nullptr;
  if (!doc.current_location().get(rest)) throw NotTheFastPath();
  if (!h.has_trace_events) throw NotTheFastPath();
  FinishRank(builder, h, rank_hint, rank_rule, &rank);
  if (header_out) *header_out = h;
  if (observer && reader.observed_all()) observer->Complete(buf.view());
  return rank;
}

}  // namespace

Rank ReadKinetoRank(const PaddedBuffer& buf, const std::string& file, int32_t rank_hint,
                    std::string_view rank_rule, KinetoHeader* header_out,
                    const std::function<bool()>& refill, KinetoEventObserver* observer) {
  if (!refill) {
    try {
      return ReadWholeKinetoRank(buf, file, rank_hint, rank_rule, header_out, observer);
    } catch (const NotTheFastPath&) {
    } catch (const InputError&) {
    } catch (const simdjson::simdjson_error&) {
    }
  }
  Rank rank;
  KinetoBuilder builder(&rank);
  EventReader reader(buf, file, &builder);
  KinetoHeader h;
  // The buffer may grow (and move) when `refill` appends to it, so the
  // position is kept as an offset and scanners are rebuilt from it.
  size_t off = 0;
  bool eof = !refill;
  auto more = [&]() -> bool {  // true when bytes were appended
    if (eof) return false;
    size_t before = buf.size();
    if (!refill()) eof = true;
    return buf.size() > before;
  };
  auto scanner = [&]() {
    const char* b = buf.data() ? buf.data() : "";
    JsonScanner s(b, b + buf.size());
    s.set_pos(b + off);
    return s;
  };
  // Keeps at least `kAhead` bytes readable past `off` while the input lasts,
  // so keys and punctuation never straddle the end of what was read.
  constexpr size_t kAhead = size_t(1) << 20;
  auto want = [&]() {
    while (!eof && buf.size() - off < kAhead) more();
  };
  // Skips the value at the current position, reading more when it is cut.
  auto skip_value = [&](JsonScanner& sc) -> const char* {
    for (;;) {
      const char* v = sc.SkipValue();
      // A scalar that runs to the end of the buffer may continue past it.
      if (eof || (v && sc.pos() < sc.end())) return v;
      off = v ? size_t(v - buf.data()) : sc.offset();
      more();
      sc = scanner();
    }
  };

  want();
  JsonScanner sc = scanner();
  sc.SkipBom();
  if (!sc.Consume('{')) {
    sc.SkipWhitespace();
    reader.Fail(sc.pos(), sc.at_end() ? "expected a JSON object, got an empty file"
                                      : "expected a JSON object ('{') at the start of the trace");
  }
  bool done = sc.Consume('}');
  while (!done) {
    off = sc.offset();
    want();
    sc = scanner();
    sc.SkipWhitespace();
    const char* key_at = sc.pos();
    std::string_view key;
    if (!sc.ReadString(&key)) {
      reader.Fail(key_at, sc.at_end() ? "unexpected end of file in the top-level object"
                                      : "expected a key string in the top-level object");
    }
    std::string key_copy(key);  // the buffer may move below
    if (!sc.Consume(':')) reader.Fail(sc.pos(), "expected ':' after key " + Quote(key_copy));
    sc.SkipWhitespace();
    if (key_copy == "traceEvents") {
      if (!sc.Consume('[')) reader.Fail(sc.pos(), "expected an array ('[') for \"traceEvents\"");
      h.has_trace_events = true;
      if (!sc.Consume(']')) {
        for (;;) {
          off = sc.offset();
          if (buf.size() - off < kAhead) {
            want();
            sc = scanner();
          }
          sc.SkipWhitespace();
          const char* ev = sc.pos();
          if (sc.at_end()) reader.Fail(ev, "unexpected end of file in \"traceEvents\"");
          if (*ev != '{') reader.Fail(ev, "expected an event object ('{') in \"traceEvents\"");
          ev = skip_value(sc);
          if (!ev) {
            reader.Fail(sc.pos(),
                        "unterminated event object in \"traceEvents\" (truncated file?)");
          }
          reader.ParseEvent(ev, sc.pos());
          buf.ReleaseBefore(size_t(ev - buf.data()));  // parsed bytes are not read again
          if (sc.Consume(',')) continue;
          if (sc.Consume(']')) break;
          sc.SkipWhitespace();
          reader.Fail(sc.pos(), sc.at_end() ? "unexpected end of file in \"traceEvents\""
                                            : "expected ',' or ']' after an event");
        }
      }
    } else {
      const char* v = skip_value(sc);
      if (!v || v == sc.pos()) {
        reader.Fail(sc.pos(), "expected a value for key " + Quote(key_copy));
      }
      ParseHeaderValue(key_copy, std::string_view(v, size_t(sc.pos() - v)), &h);
    }
    if (sc.Consume(',')) continue;
    if (sc.Consume('}')) break;
    sc.SkipWhitespace();
    reader.Fail(sc.pos(), sc.at_end() ? "unexpected end of file in the top-level object"
                                      : "expected ',' or '}' in the top-level object");
  }
  off = sc.offset();
  while (!eof) {  // anything left must be whitespace
    more();
  }
  sc = scanner();
  sc.SkipWhitespace();
  if (!sc.at_end()) reader.Fail(sc.pos(), "unexpected content after the top-level object");
  if (!h.has_trace_events) {
    ThrowInputError(file, "", "expected a \"traceEvents\" array in the top-level object");
  }
  FinishRank(builder, h, rank_hint, rank_rule, &rank);
  if (header_out) *header_out = h;
  return rank;
}

}  // namespace moetrace
