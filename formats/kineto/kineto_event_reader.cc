#include "formats/kineto/kineto_event_reader.h"

#include <vector>

#include "formats/decimal.h"
#include "formats/export/utf8.h"
#include "formats/kineto/json_key.h"
#include "formats/kineto/raw_value.h"

namespace moetrace {
namespace kineto_reader {
namespace {

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
  kOutSplits, kGroupRanks, kInputDims,
};

// The args keys the importer reads; dispatching on the length first keeps
// the common miss ("Ev Idx", "Input type", "grid", ...) to one or two compares.
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
    case 10:
      if (k == "Group size") return Arg::kGroupSize;
      if (k == "Input Dims") return Arg::kInputDims;
      return Arg::kNone;
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
  event_begin_ = begin;
  auto err = parser_.iterate(begin, size_t(end - begin), room).get(doc);
  if (err == simdjson::UTF8_ERROR) {
    // A name with invalid UTF-8 is an odd value, not an unreadable
    // document: the event is read from a copy with U+FFFD in its place.
    std::string fixed;
    const size_t n = AppendSanitizedUtf8(std::string_view(begin, size_t(end - begin)), &fixed);
    builder_->CountField(FieldFix::kRepaired, "utf8", int64_t(n));
    repaired_ = simdjson::padded_string(fixed);
    err = parser_.iterate(repaired_).get(doc);
  }
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
          std::string_view s;
          ev.ph = String(v, key, begin, FieldFix::kSkippedField, &s) && !s.empty() ? s[0] : '\0';
        } else if (key == "ts") {
          if (facts) facts->ts = PeekRawValue(v);
          ev.has_ts = false;
          ev.ts = 0;
          switch (Time(v, key, begin, &ev.ts, true)) {
            case Value::kOk: ev.has_ts = true; break;
            case Value::kAbsent: break;
            case Value::kBad:
              // An event without a usable time has no place on a track.
              ev.rejected = true;
              builder_->CountField(FieldFix::kSkippedEvent, key, 1);
              break;
          }
        } else if (key == "id") {
          ev.has_flow_id = Int(v, key, begin, &ev.flow_id, FieldFix::kSkippedField);
        }
        break;
      case 3:
        if (key == "cat") {
          const od::json_type t = Type(v, key, begin);
          ev.has_cat = t != od::json_type::null &&
                       String(v, key, begin, FieldFix::kSkippedField, &ev.cat);
          // The observer sees the value as written: a number is a category
          // to HTA, not an absent one.
          if (facts) facts->cat = t == od::json_type::string ? StringFact(ev.has_cat, ev.cat) : OtherFact(t);
        } else if (key == "pid") {
          ev.pid = Id(v, key, begin, &ev.pid_synthetic, &ev.rejected);
        } else if (key == "tid") {
          ev.tid = Id(v, key, begin, &ev.tid_synthetic, &ev.rejected);
        } else if (key == "dur") {
          if (facts) facts->dur = PeekRawValue(v);
          ev.has_dur = Time(v, key, begin, &ev.dur, false) == Value::kOk;
          if (!ev.has_dur) ev.dur = 0;  // the last key wins, as in any JSON reader
        }
        break;
      case 4:
        if (key == "name") {
          const od::json_type t = Type(v, key, begin);
          const bool has_name = t != od::json_type::null &&
                                String(v, key, begin, FieldFix::kSkippedField, &ev.name);
          if (!has_name) ev.name = std::string_view();
          if (facts) facts->name = t == od::json_type::string ? StringFact(has_name, ev.name) : OtherFact(t);
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

od::json_type EventReader::Type(od::value& v, std::string_view key, const char* at) {
  od::json_type t;
  bool b;
  // A value simdjson cannot even type is bad syntax, not an odd field; so
  // is a literal that is not true, false or null ("tru"), which on-demand
  // does not check until it is read.
  if (v.type().get(t) || (t == od::json_type::boolean && v.get_bool().get(b)) ||
      (t == od::json_type::null && (v.is_null().get(b) || !b))) {
    Fail(Where(v, at), "malformed JSON value for " + Quote(key));
  }
  return t;
}

bool EventReader::String(od::value& v, std::string_view key, const char* at, FieldFix fix,
                         std::string_view* out) {
  if (Type(v, key, at) == od::json_type::string && !v.get_string().get(*out)) return true;
  builder_->CountField(fix, key, 1);
  return false;
}

EventReader::Value EventReader::Time(od::value& v, std::string_view key, const char* at,
                                     int64_t* out, bool is_ts) {
  const od::json_type t = Type(v, key, at);
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
      return Value::kOk;
    }
    text = v.raw_json_token();
  } else if (t == od::json_type::string) {
    // Some Chrome-JSON writers quote their times ("1704161511422904.204").
    if (v.get_string().get(text)) return Bad(key, is_ts);
    from_string = true;
  } else if (t == od::json_type::null) {
    return Value::kAbsent;
  } else {
    return Bad(key, is_ts);
  }
  bool integral = true;
  // Not a number, or beyond int64 ns (a ts of 1e30): not a time.
  if (MicrosToNanos(text, out, &integral) != DecimalStatus::kOk) return Bad(key, is_ts);
  if (is_ts) builder_->CountTimestamp(integral, from_string);
  return Value::kOk;
}

EventReader::Value EventReader::Bad(std::string_view key, bool is_ts) {
  // A bad ts drops the event (the caller counts it); a bad dur is skipped.
  if (!is_ts) builder_->CountField(FieldFix::kSkippedField, key, 1);
  return Value::kBad;
}

bool EventReader::Int(od::value& v, std::string_view key, const char* at, int64_t* out,
                      FieldFix fix) {
  const od::json_type t = Type(v, key, at);
  if (t == od::json_type::number) {
    int64_t n = 0;
    if (!v.get_int64().get(n)) {  // a plain integer: simdjson's parser
      *out = n;
      return true;
    }
    if (ParseTruncatedInteger(v.raw_json_token(), out)) return true;
    double d = 0;
    if (!v.get_double().get(d) && d > -9.2e18 && d < 9.2e18) {
      *out = int64_t(d);
      return true;
    }
  } else if (t == od::json_type::null) {
    return false;
  } else if (t == od::json_type::string) {
    // ROCm, vLLM, SGLang and recent PyTorch write numbers as strings
    // ("bytes": "13248").
    std::string_view text;
    if (!v.get_string().get(text) && ParseTruncatedInteger(TrimField(text), out)) {
      if (fix == FieldFix::kSkippedArg) builder_->CountField(FieldFix::kCoercedArg, key, 1);
      return true;
    }
  }
  builder_->CountField(fix, key, 1);
  return false;
}

int64_t EventReader::Id(od::value& v, std::string_view key, const char* at, bool* synthetic,
                        bool* rejected) {
  const od::json_type t = Type(v, key, at);
  int64_t id = 0;
  *synthetic = false;
  if (t == od::json_type::number) {
    if (!v.get_int64().get(id) || ParseTruncatedInteger(v.raw_json_token(), &id)) return id;
  } else if (t == od::json_type::string) {
    std::string_view s;
    if (!v.get_string().get(s)) {
      if (ParseTruncatedInteger(s, &id)) return id;
      if (s.size() > 7 && s.compare(0, 7, "stream ") == 0 &&
          ParseTruncatedInteger(s.substr(7), &id)) {
        return id;
      }
      *synthetic = true;
      return builder_->SyntheticId(key, s);
    }
  } else if (t == od::json_type::null) {
    *synthetic = true;
    return builder_->SyntheticId(key, "");
  }
  // Beyond int64 (a pid of 1e20), a boolean, an object: no track to put
  // the event on.
  *rejected = true;
  builder_->CountField(FieldFix::kSkippedEvent, key, 1);
  return 0;
}

template <typename T>
void EventReader::List(od::value& v, std::string_view key, const char* at, std::vector<T>* out) {
  const od::json_type t = Type(v, key, at);
  bool ok = true;
  if (t == od::json_type::string) {
    std::string_view s;
    ok = !v.get_string().get(s) && ParseIntList(s, out);
  } else if (t == od::json_type::array) {
    od::array a;
    if (v.get_array().get(a)) Fail(Where(v, at), "malformed JSON list for " + Quote(key));
    for (auto x : a) {
      od::value e;
      if (x.get(e)) Fail(Where(v, at), "malformed JSON list for " + Quote(key));
      od::json_type et;
      if (e.type().get(et)) Fail(Where(v, at), "malformed JSON list for " + Quote(key));
      int64_t n = 0;
      if (et == od::json_type::number && !e.get_int64().get(n)) {
        out->push_back(T(n));
      } else if (et == od::json_type::null) {
      } else {
        // Anything else (a numeric string, a float) is read like a lone
        // value; what cannot be read spoils the list.
        std::string_view s;
        if (et == od::json_type::number) {
          s = e.raw_json_token();
        } else if (et != od::json_type::string || e.get_string().get(s)) {
          ok = false;
        }
        if (ok && !ParseTruncatedInteger(TrimField(s), &n)) ok = false;
        if (ok) out->push_back(T(n));
      }
    }
  } else if (t != od::json_type::null) {
    ok = false;
  }
  if (!ok) {
    out->clear();
    builder_->CountField(FieldFix::kSkippedArg, key, 1);
  }
}

void EventReader::Args(od::value& v, const char* at, KinetoEvent* ev) {
  const od::json_type t = Type(v, "args", at);
  if (t == od::json_type::null) return;
  od::object a;
  if (t != od::json_type::object || v.get_object().get(a)) {
    builder_->CountField(FieldFix::kSkippedField, "args", 1);
    return;
  }
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
  constexpr FieldFix kArg = FieldFix::kSkippedArg;
  int64_t n = 0;
  std::string_view s;
  ObserveArg(key, x);
  switch (ClassifyArg(key)) {
    case Arg::kNone: break;
    case Arg::kCorrelation: Int(x, key, at, &ev->correlation, kArg); break;
    case Arg::kExternalId: Int(x, key, at, &ev->external_id, kArg); break;
    case Arg::kStream:
      if (!Int(x, key, at, &ev->stream, kArg)) ev->stream = -1;
      break;
    case Arg::kDevice:
      if (!Int(x, key, at, &ev->device, kArg)) ev->device = -1;
      break;
    case Arg::kBytes: Int(x, key, at, &ev->bytes, kArg); break;
    case Arg::kName: {
      od::json_type t;
      if (!x.type().get(t) && t == od::json_type::string && !x.get_string().get(s)) {
        ev->meta_name = s;
      }
      break;
    }
    case Arg::kDeviceType: Int(x, key, at, &ev->mem_device_type, kArg); break;
    case Arg::kDeviceId: Int(x, key, at, &ev->mem_device_id, kArg); break;
    case Arg::kMemBytes: ev->has_mem_bytes = Int(x, key, at, &ev->mem_bytes, kArg); break;
    case Arg::kTotalAllocated: Int(x, key, at, &ev->total_allocated, kArg); break;
    case Arg::kTotalReserved: Int(x, key, at, &ev->total_reserved, kArg); break;
    case Arg::kCollective:
      if (String(x, key, at, kArg, &s)) Args(ev).collective = std::string(s);
      break;
    case Arg::kPgName:
      if (Type(x, key, at) == od::json_type::number) {
        if (Int(x, key, at, &n, kArg)) Args(ev).pg_name = std::to_string(n);
      } else if (String(x, key, at, kArg, &s)) {
        Args(ev).pg_name = std::string(s);
      }
      break;
    case Arg::kPgId:
      if (Int(x, key, at, &n, kArg) && Args(ev).pg_name.empty()) {
        Args(ev).pg_name = std::to_string(n);
      }
      break;
    case Arg::kPgDesc:
      if (String(x, key, at, kArg, &s)) Args(ev).pg_desc = std::string(s);
      break;
    case Arg::kDtype:
      if (String(x, key, at, kArg, &s)) Args(ev).dtype = std::string(s);
      break;
    case Arg::kInNelems: Int(x, key, at, &Args(ev).in_nelems, kArg); break;
    case Arg::kOutNelems: Int(x, key, at, &Args(ev).out_nelems, kArg); break;
    case Arg::kGroupSize: Int(x, key, at, &Args(ev).group_size, kArg); break;
    case Arg::kRankStart: Int(x, key, at, &Args(ev).rank_start, kArg); break;
    case Arg::kRankStride: Int(x, key, at, &Args(ev).rank_stride, kArg); break;
    case Arg::kSrcRank: Int(x, key, at, &Args(ev).src_rank, kArg); break;
    case Arg::kDstRank: Int(x, key, at, &Args(ev).dst_rank, kArg); break;
    case Arg::kInSplits: List(x, key, at, &Args(ev).in_splits); break;
    case Arg::kOutSplits: List(x, key, at, &Args(ev).out_splits); break;
    case Arg::kGroupRanks: List(x, key, at, &Args(ev).group_ranks); break;
    case Arg::kInputDims: {
      // Kept as written (a view of the text); the builder normalizes the
      // spacing when it interns it.
      od::array a;
      const od::json_type t = Type(x, key, at);
      if (t == od::json_type::array && !x.get_array().get(a) && !a.raw_json().get(s)) {
        ev->input_dims = s;
      } else if (t != od::json_type::null) {
        builder_->CountField(kArg, key, 1);
      }
      break;
    }
  }
}

KinetoCommArgs& EventReader::Args(KinetoEvent* ev) {
  int32_t idx = ev->comm_args;
  if (idx < 0) return builder_->NewCommArgs(&ev->comm_args);
  return builder_->CommArgsAt(idx);
}

}  // namespace kineto_reader
}  // namespace moetrace
