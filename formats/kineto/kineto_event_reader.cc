#include "formats/kineto/kineto_event_reader.h"

#include <vector>

#include "formats/decimal.h"
#include "formats/kineto/json_key.h"
#include "formats/kineto/raw_value.h"

namespace moetrace {
namespace kineto_reader {
namespace {

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

}  // namespace

void EventReader::ParseEvent(const char* begin, const char* end) {
  const size_t room = size_t(buf_.data() + buf_.padded_size() - begin);
  od::document doc;
  auto err = parser_.iterate(begin, size_t(end - begin), room).get(doc);
  if (err) FailJson(begin, err, "in an event");
  od::object obj;
  if ((err = doc.get_object().get(obj))) FailJson(begin, err, "in an event");
  ParseObject(obj, begin);
}

void EventReader::ParseObject(od::object& obj, const char* begin) {
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
          ev.pid = Id(v, key, begin, &ev.pid_synthetic);
        } else if (key == "tid") {
          ev.tid = Id(v, key, begin, &ev.tid_synthetic);
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

const char* EventReader::Where(od::value& v, const char* fallback) {
  std::string_view tok = v.raw_json_token();
  return tok.data() ? tok.data() : fallback;
}

void EventReader::ObserveArg(std::string_view key, od::value& x) {
  if (!observer_ || (key != "stream" && key != "correlation")) return;
  KinetoRawValue r = PeekRawValue(x);
  if (r.escaped) facts_unusual_ = true;
  (key == "stream" ? facts_.stream : facts_.correlation) = r;
}

bool EventReader::IsNull(od::value& v) {
  od::json_type t;
  return !v.type().get(t) && t == od::json_type::null;
}

void EventReader::WrongType(od::value& v, std::string_view key, const char* at,
                            const char* expected) {
  od::json_type t;
  std::string got = v.type().get(t) ? "invalid JSON" : TypeName(t);
  Fail(Where(v, at), std::string("expected ") + expected + " for " + Quote(key) + ", got " +
                         got);
}

std::string_view EventReader::String(od::value& v, std::string_view key, const char* at) {
  std::string_view s;
  if (v.get_string().get(s)) WrongType(v, key, at, "a string");
  return s;
}

bool EventReader::Time(od::value& v, std::string_view key, const char* at, int64_t* out,
                       bool is_ts) {
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

bool EventReader::Int(od::value& v, std::string_view key, const char* at, int64_t* out,
                      bool lenient) {
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

int64_t EventReader::Id(od::value& v, std::string_view key, const char* at, bool* synthetic) {
  od::json_type t;
  if (v.type().get(t)) WrongType(v, key, at, "a number or a string");
  int64_t id = 0;
  *synthetic = false;
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
    *synthetic = true;
    return builder_->SyntheticId(key, s);
  }
  if (t == od::json_type::null) {
    *synthetic = true;
    return builder_->SyntheticId(key, "");
  }
  WrongType(v, key, at, "a number or a string");
}

template <typename T>
void EventReader::List(od::value& v, std::string_view key, const char* at, std::vector<T>* out) {
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

void EventReader::Args(od::value& v, const char* at, KinetoEvent* ev) {
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

void EventReader::ArgsField(std::string_view key, od::value& x, const char* at,
                            KinetoEvent* ev) {
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

KinetoCommArgs& EventReader::Args(KinetoEvent* ev) {
  int32_t idx = ev->comm_args;
  if (idx < 0) return builder_->NewCommArgs(&ev->comm_args);
  return builder_->CommArgsAt(idx);
}

}  // namespace kineto_reader
}  // namespace moetrace
