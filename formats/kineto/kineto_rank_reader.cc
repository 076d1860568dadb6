#include "formats/kineto/kineto_rank_reader.h"

#include <fmt/core.h>
#include <simdjson.h>

#include <cctype>
#include <cstring>
#include <functional>
#include <new>
#include <system_error>
#include <string>

#include "formats/decimal.h"
#include "formats/errors.h"
#include "formats/export/utf8.h"
#include "formats/kineto/json_key.h"
#include "formats/kineto/json_scan.h"
#include "formats/kineto/kineto_builder.h"
#include "formats/kineto/kineto_event_reader.h"
#include "formats/kineto/kineto_split_reader.h"

namespace moetrace {
namespace {

namespace od = simdjson::ondemand;
using kineto_reader::EventReader;
using kineto_reader::Quote;

// Calls f(key, field) for each field of `o`, stopping at the first
// malformed one: the header is read on a best-effort basis.
template <typename F>
void ForEachField(od::object o, F&& f) {
  for (auto fr : o) {
    od::field field;
    std::string_view k;
    if (std::move(fr).get(field) || field.unescaped_key().get(k)) return;
    f(k, field);
  }
}

// The top-level values other than traceEvents that the importer reads.
void ParseHeaderValue(std::string_view key, std::string_view text, KinetoHeader* h) {
  if (key != "distributedInfo" && key != "deviceProperties" && key != "baseTimeNanoseconds" &&
      key != "host_name" && key != "schemaVersion" && key != "otherData") {
    return;
  }
  simdjson::padded_string json(text);
  od::parser parser;
  od::document doc;
  if (parser.iterate(json).get(doc)) return;
  if (key == "distributedInfo") {
    od::object o;
    if (doc.get_object().get(o)) return;
    // A count written as a string ("3") is read, and counted.
    auto count_of = [&](od::field& f, int64_t* n) {
      od::value v = f.value();
      if (!v.get_int64().get(*n)) return true;
      std::string_view text;
      if (v.get_string().get(text) || !ParseScaledDecimal(text, 0, n)) return false;
      ++h->coerced_strings;
      return true;
    };
    ForEachField(o, [&](std::string_view k, od::field& f) {
      int64_t n = 0;
      std::string_view s;
      if (k == "rank") {
        if (count_of(f, &n) && n >= 0 && n <= INT32_MAX) h->rank = int32_t(n);
      } else if (k == "world_size") {
        if (count_of(f, &n) && n >= 0 && n <= INT32_MAX) h->world_size = int32_t(n);
      } else if (k == "backend") {
        if (!f.value().get_string().get(s)) h->backend = std::string(s);
      }
    });
  } else if (key == "deviceProperties") {
    od::array a;
    if (doc.get_array().get(a)) return;
    for (auto d : a) {
      od::object o;
      if (d.get_object().get(o)) return;
      ForEachField(o, [&](std::string_view k, od::field& f) {
        std::string_view s;
        uint64_t n = 0;
        if (k == "name" && !f.value().get_string().get(s)) h->device_name = std::string(s);
        if (k == "totalGlobalMem" && !f.value().get_uint64().get(n)) h->device_memory = n;
      });
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
  } else if (key == "otherData") {
    od::object o;
    if (doc.get_object().get(o)) return;
    ForEachField(o, [&](std::string_view k, od::field& f) {
      uint64_t n = 0;
      if (k == "ranks" && !f.value().get_uint64().get(n)) h->export_ranks = n;
    });
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
                std::string_view rank_rule, const std::string& file, Rank* rank) {
  // Its ranks' processes would be read as one rank's threads and streams.
  if (h.export_ranks > 1) {
    ThrowInputError(file, "",
                    fmt::format("a Chrome JSON of {} ranks written by `moetrace convert`, for viewing only: "
                                "analyze the trace it came from, or convert that to .mtrace or to DIR/ "
                                "(a file per rank)",
                                h.export_ranks));
  }
  builder.Finish(h.has_base_time ? h.base_time_ns : 0);
  if (h.rank >= 0) {
    rank->rank = h.rank;
    rank->AddStat("rank_rule.distributedInfo", 1);
  } else {
    rank->rank = rank_hint >= 0 ? rank_hint : 0;
    rank->AddStat("rank_rule." + std::string(rank_rule), 1);
  }
  rank->host = h.host_name;
  if (h.coerced_strings) rank->AddStat("coerced.distributedInfo.string", h.coerced_strings);
}

struct NotTheFastPath {};
struct SplitFailed {};

// One single-pass read of a whole document.
struct WholeRead {
  const PaddedBuffer& buf;
  KinetoEventObserver* observer;
  KinetoBuilder& builder;
  EventReader& reader;
  KinetoHeader h;
  SplitTail* tail;  // reads the second half of the events on another thread
  od::document* doc = nullptr;  // the document being read
};

bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// The events of one "traceEvents" array. Returns where the text goes on
// past the array when its second half was read by a SplitTail (the caller
// has then left the document's iterator behind), else null.
const char* ReadEvents(od::array& events, WholeRead& w, const std::string& file) {
  w.h.has_trace_events = true;
  w.reader.RestartObserver();
  SplitTail& tail = *w.tail;
  for (auto er : events) {
    od::value ev;
    od::object obj;
    if (er.get(ev)) throw NotTheFastPath();
    const char* at = ev.raw_json_token().data();  // the '{'
    if (ev.get_object().get(obj)) throw NotTheFastPath();
    w.reader.ParseObject(obj, at);
    // Reading the head only: an event that ends it is the one before the
    // split point (the end is out of bounds; the next call would read past).
    const char* next = nullptr;
    if (tail.head_end() && w.doc->current_location().get(next) == simdjson::OUT_OF_BOUNDS) {
      if (!tail.Take(&w.builder, w.observer, w.reader.observed_count())) throw SplitFailed();
      if (!tail.observed_all()) w.reader.set_observed_all(false);
      return tail.array_end();
    }
  }
  return nullptr;
}

// The fields of a top-level object; see ReadEvents for what it returns.
const char* ReadTopFields(od::object& top, WholeRead& w, const std::string& file) {
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
      if (const char* resume = ReadEvents(events, w, file)) return resume;
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
    ParseHeaderValue(key, raw, &w.h);
  }
  return nullptr;
}

// Reads a whole document, or (`from` set) the rest of the top-level object
// of `buf` from `from`, just past a split array: "}" or ", <fields> }". That
// rest is read as an object of its own, from a copy that starts with '{'.
void ReadDocument(const char* from, WholeRead& w, const std::string& file) {
  PaddedBuffer rest;
  const char* text = w.buf.data();
  size_t size = w.buf.size(), padded = w.buf.padded_size();
  if (!from && w.tail->head_end()) size = size_t(w.tail->head_end() - text);
  if (from) {
    const char* end = w.buf.data() + w.buf.size();
    while (from < end && IsJsonSpace(*from)) ++from;
    if (from < end && *from == '}') {
      for (++from; from < end; ++from) {
        if (!IsJsonSpace(*from)) throw NotTheFastPath();
      }
      return;
    }
    if (from == end || *from != ',') throw NotTheFastPath();
    char* d = rest.Grow(size_t(end - from));
    memcpy(d, from, size_t(end - from));
    d[0] = '{';
    rest.Commit(size_t(end - from));
    rest.Finish();
    text = rest.data();
    size = rest.size();
    padded = rest.padded_size();
  }
  od::parser parser;
  od::document doc;
  od::object top;
  if (parser.iterate(text, size, padded).get(doc) || doc.get_object().get(top)) {
    throw NotTheFastPath();
  }
  w.doc = &doc;
  if (const char* resume = ReadTopFields(top, w, file)) {
    ReadDocument(resume, w, file);
    return;
  }
  // Past the root object there must be nothing (on-demand only checks
  // that the last token closes it: "{...} }" would pass).
  const char* after = nullptr;
  if (!doc.current_location().get(after)) throw NotTheFastPath();
}

// The whole document in one on-demand pass, for a buffer that holds all of
// it: no event-boundary scan and one structural index instead of one per
// event. Anything it does not expect (a BOM, escaped top-level keys, any
// error at all) throws NotTheFastPath or InputError, and the caller reads
// the file again the streaming way, which gives the precise message.
Rank ReadWholeKinetoRank(const PaddedBuffer& buf, const std::string& file, int32_t rank_hint,
                         std::string_view rank_rule, KinetoHeader* header_out,
                         KinetoEventObserver* observer, bool split) {
  if (!buf.data() || buf.size() < 2 || static_cast<unsigned char>(buf.data()[0]) == 0xEF) {
    throw NotTheFastPath();
  }
  Rank rank;
  KinetoBuilder builder(&rank);
  EventReader reader(buf, file, &builder);
  reader.Observe(observer);
  // Started first: the tail's copy and index overlap this thread's index
  // of the whole document.
  SplitTail tail;
  // ReadKinetoRank's contract with threads > 1: the caller lets the bytes
  // of `buf` change during the call (the tail restores them).
  if (split) tail.Start(const_cast<PaddedBuffer&>(buf), file, observer);
  WholeRead w{buf, observer, builder, reader, KinetoHeader(), &tail};
  try {
    ReadDocument(nullptr, w, file);
  } catch (const SplitFailed&) {
    throw;
  } catch (...) {
    // Reading the head only, anything can fail where the guess was wrong:
    // the file gets a single pass, which fails again if it is really bad.
    if (tail.head_end()) throw SplitFailed();
    throw;
  }
  if (tail.head_end()) throw SplitFailed();  // the head ended without reaching the split
  if (!w.h.has_trace_events) throw NotTheFastPath();
  FinishRank(builder, w.h, rank_hint, rank_rule, file, &rank);
  if (header_out) *header_out = w.h;
  if (observer) {
    if (reader.observed_all()) {
      observer->Complete(buf.view());
    } else {
      observer->Incomplete();
    }
  }
  return rank;
}

}  // namespace

Rank ReadKinetoRank(const PaddedBuffer& buf, const std::string& file, int32_t rank_hint,
                    std::string_view rank_rule, KinetoHeader* header_out,
                    const std::function<bool()>& refill, KinetoEventObserver* observer,
                    int threads) {
  if (!refill) {
    try {
      if (threads > 1 && buf.size() >= SplitMinBytes() && buf.size() <= SplitTail::kMaxBytes) {
        try {
          return ReadWholeKinetoRank(buf, file, rank_hint, rank_rule, header_out, observer, true);
        } catch (const SplitFailed&) {
        } catch (const std::system_error&) {  // no thread to be had
        } catch (const std::bad_alloc&) {     // the tail's copy: one pass needs less
        }
      }
      return ReadWholeKinetoRank(buf, file, rank_hint, rank_rule, header_out, observer, false);
    } catch (const NotTheFastPath&) {
    } catch (const InputError&) {
    } catch (const simdjson::simdjson_error&) {
    }
    // simdjson validates the whole document's UTF-8 before reading it: a
    // name with invalid bytes would stop the single pass. The document is
    // readable, so it is read from a copy with U+FFFD in their place.
    if (buf.data() && !simdjson::validate_utf8(buf.data(), buf.size())) {
      std::string text;
      text.reserve(buf.size() + 64);
      const size_t n = AppendSanitizedUtf8(buf.view(), &text);
      PaddedBuffer fixed = PaddedBuffer::FromString(text);
      std::string().swap(text);
      Rank rank = ReadKinetoRank(fixed, file, rank_hint, rank_rule, header_out, refill, observer,
                                 threads);
      rank.import_stats.emplace_back("repaired.utf8", int64_t(n));
      return rank;
    }
    // The events go to the streaming reader, which does not observe.
    if (observer) observer->Incomplete();
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

  // Whitespace may run past what was read (megabytes of it between two
  // events are still JSON): read on until something else or the end.
  auto skip_space = [&](JsonScanner& s) {
    for (;;) {
      s.SkipWhitespace();
      if (!s.at_end() || eof) return;
      off = s.offset();
      buf.ReleaseBefore(off);
      more();
      s = scanner();
    }
  };

  want();
  JsonScanner sc = scanner();
  sc.SkipBom();
  skip_space(sc);
  if (!sc.Consume('{')) {
    sc.SkipWhitespace();
    reader.Fail(sc.pos(), sc.at_end() ? "expected a JSON object, got an empty file"
                                      : "expected a JSON object ('{') at the start of the trace");
  }
  skip_space(sc);
  bool done = sc.Consume('}');
  while (!done) {
    off = sc.offset();
    want();
    sc = scanner();
    skip_space(sc);
    const char* key_at = sc.pos();
    std::string_view key;
    if (!sc.ReadString(&key)) {
      reader.Fail(key_at, sc.at_end() ? "unexpected end of file in the top-level object"
                                      : "expected a key string in the top-level object");
    }
    std::string key_copy(key);  // the buffer may move below
    skip_space(sc);
    if (!sc.Consume(':')) reader.Fail(sc.pos(), "expected ':' after key " + Quote(key_copy));
    skip_space(sc);
    if (key_copy == "traceEvents") {
      if (!sc.Consume('[')) reader.Fail(sc.pos(), "expected an array ('[') for \"traceEvents\"");
      h.has_trace_events = true;
      skip_space(sc);
      if (!sc.Consume(']')) {
        for (;;) {
          off = sc.offset();
          if (buf.size() - off < kAhead) {
            want();
            sc = scanner();
          }
          skip_space(sc);
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
          skip_space(sc);
          if (sc.Consume(',')) continue;
          if (sc.Consume(']')) break;
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
    skip_space(sc);
    if (sc.Consume(',')) continue;
    if (sc.Consume('}')) break;
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
  FinishRank(builder, h, rank_hint, rank_rule, file, &rank);
  if (header_out) *header_out = h;
  return rank;
}

}  // namespace moetrace
