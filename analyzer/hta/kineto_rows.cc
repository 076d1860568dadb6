#include "analyzer/hta/kineto_rows.h"

#include <dirent.h>
#include <zlib.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <simdjson.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <string_view>

#include "formats/errors.h"
#include "formats/export/utf8.h"
#include "formats/kineto/json_key.h"
#include "formats/kineto/raw_value.h"

namespace moetrace::hta {
namespace {

using std::string_view;

bool StartsWith(string_view s, string_view p) { return s.substr(0, p.size()) == p; }
bool Contains(string_view s, string_view p) { return s.find(p) != string_view::npos; }

bool IsStepString(string_view s) {
  return StartsWith(s, "ProfilerStep#") && s.size() > 13 && s[13] >= '0' && s[13] <= '9';
}

bool IsPySpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\n';
}

// HTA's check: the name must match ProfilerStep\s*#\s*\d+ at its start.
bool IsValidStepName(string_view s) {
  size_t i = 12;  // after "ProfilerStep"
  while (i < s.size() && IsPySpace(s[i])) ++i;
  if (i >= s.size() || s[i] != '#') return false;
  ++i;
  while (i < s.size() && IsPySpace(s[i])) ++i;
  return i < s.size() && s[i] >= '0' && s[i] <= '9';
}

bool IsIntegerLiteral(string_view tok) {
  size_t i = 0;
  if (i < tok.size() && tok[i] == '-') ++i;
  size_t digits = 0;
  while (i < tok.size() && tok[i] >= '0' && tok[i] <= '9') ++i, ++digits;
  while (i < tok.size() && IsPySpace(tok[i])) ++i;
  return digits > 0 && i == tok.size();
}

bool ParseDouble(string_view s, double* out) {
  while (!s.empty() && IsPySpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsPySpace(s.back())) s.remove_suffix(1);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// Whether a double converts to int64 without overflow (1e30 does not: the
// cast would be undefined).
bool FitsInt64(double d) { return d > -9.2e18 && d < 9.2e18; }

// A number token (or numeric string) truncated toward zero; -1 otherwise.
int64_t ToIntId(const KinetoRawValue& v) {
  if (v.type == KinetoRawValue::kNumber) {
    string_view tok = v.text;
    if (IsIntegerLiteral(tok)) {
      int64_t x = 0;
      auto r = std::from_chars(tok.data(), tok.data() + tok.size(), x);
      if (r.ec == std::errc()) return x;
    }
    double d;
    if (!ParseDouble(tok, &d) || !FitsInt64(d)) return -1;
    return static_cast<int64_t>(std::trunc(d));
  }
  if (v.type == KinetoRawValue::kString) {
    double d;
    if (!ParseDouble(v.text, &d) || !FitsInt64(d)) return -1;
    return static_cast<int64_t>(std::trunc(d));
  }
  return -1;
}

using Num = RowNum;

// Absent and null read as kAbsent, other non-numbers as kNonNumber: the
// two are alike for ts and dur (neither is an integer, neither a duration).
Num ReadNum(const KinetoRawValue& v) {
  Num n;
  if (v.type == KinetoRawValue::kAbsent || v.type == KinetoRawValue::kNull) return n;
  if (v.type != KinetoRawValue::kNumber) {
    n.kind = Num::kNonNumber;
    return n;
  }
  string_view tok = v.text;
  // Integers (nearly every ts/dur) skip the double parser: converting the
  // int64 rounds to nearest like from_chars does on the same digits.
  if (IsIntegerLiteral(tok)) {
    auto r = std::from_chars(tok.data(), tok.data() + tok.size(), n.i);
    if (r.ec == std::errc()) {
      n.kind = Num::kInt;
      n.d = static_cast<double>(n.i);
      if (n.i == 0 && tok[0] == '-') n.d = -0.0;  // as from_chars reads "-0"
      return n;
    }
  }
  if (!ParseDouble(tok, &n.d)) {
    n.kind = Num::kNonNumber;
    return n;
  }
  n.kind = Num::kOther;
  return n;
}

bool IsIdleCat(string_view c) {
  return c == "kernel" || c == "Kernel" || c == "gpu_memset" || c == "Memset" ||
         c == "gpu_memcpy" || c == "Memcpy" || c == "mtia_ccp_events";
}

bool IsLaunchName(string_view n) {
  return n == "cudaLaunchKernel" || n == "cudaLaunchKernelExC" ||
         n == "runFunction - job_prep_and_submit_for_execution" || n == "cudaMemcpyAsync" ||
         n == "cudaMemsetAsync";
}

}  // namespace

KernelClass ClassifyKernelName(string_view name) {
  string_view first = name.substr(0, name.find('\n'));
  if (StartsWith(name, "nccl") || StartsWith(name, "hip") || StartsWith(name, "hccl") ||
      Contains(first, "ncclKernel")) {
    return KernelClass::kComm;
  }
  if (StartsWith(name, "Memcpy") || StartsWith(name, "hipMemcpy") || StartsWith(name, "Memset") ||
      StartsWith(name, "hipMemset") || StartsWith(name, "dma")) {
    return KernelClass::kMemory;
  }
  static constexpr string_view kOtherPrefixes[] = {
      "nccl", "Stream Wait Event", "runFunction", "hip", "job_exe", "packet", "pe_exe",
      "cpum_exe_subgraph", "hccl", "collective_subgraph_execution"};
  for (string_view p : kOtherPrefixes) {
    if (StartsWith(name, p)) return KernelClass::kOther;
  }
  if (Contains(first, "Memcpy") || Contains(first, "Memset") || Contains(first, "dma") ||
      Contains(first, "Sync")) {
    return KernelClass::kOther;
  }
  if (StartsWith(first, "cuda") && Contains(first.substr(4), "LaunchKernel")) {
    return KernelClass::kOther;
  }
  return KernelClass::kCompute;
}

std::string ReadMaybeGzip(const std::string& path) {
  // Read straight into one buffer sized up front (the gzip trailer holds the
  // uncompressed size mod 2^32), with simdjson's padding already reserved,
  // so the text is never copied or regrown.
  std::string out;
  FILE* raw = std::fopen(path.c_str(), "rb");
  if (!raw) ThrowInputError(path, "", "cannot open");
  std::fseek(raw, 0, SEEK_END);
  const long file_size = std::ftell(raw);
  size_t expect = file_size > 0 ? static_cast<size_t>(file_size) : 0;
  const bool gz = path.size() >= 2 && path.compare(path.size() - 2, 2, "gz") == 0;
  if (gz && file_size >= 18) {
    unsigned char t[4];
    std::fseek(raw, file_size - 4, SEEK_SET);
    if (std::fread(t, 1, 4, raw) == 4) {
      expect = static_cast<size_t>(t[0]) | (static_cast<size_t>(t[1]) << 8) |
               (static_cast<size_t>(t[2]) << 16) | (static_cast<size_t>(t[3]) << 24);
    }
  }
  std::fclose(raw);
  out.reserve(expect + 1 + simdjson::SIMDJSON_PADDING);
  if (!gz) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) ThrowInputError(path, "", "cannot open");
    out.resize(expect);
    size_t got = std::fread(out.data(), 1, expect, f);
    out.resize(got);
    char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
    std::fclose(f);
    return out;
  }
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) ThrowInputError(path, "", "cannot open");
  gzbuffer(f, 1 << 18);
  // One spare byte shows whether the stream goes on past the announced size.
  out.resize(expect + 1);
  size_t pos = 0;
  for (;;) {
    if (pos == out.size()) {
      // Past the announced size (multi-member or > 4 GiB): grow.
      out.resize(out.size() * 2 + (1 << 20));
    }
    const size_t want = std::min<size_t>(out.size() - pos, 1u << 30);
    int n = gzread(f, out.data() + pos, static_cast<unsigned>(want));
    if (n < 0) {
      int err;
      std::string what = gzerror(f, &err);
      gzclose(f);
      ThrowInputError(path, "decompressed byte " + std::to_string(pos),
                      "gzip stream is corrupt: " + what);
    }
    if (n == 0) break;
    pos += static_cast<size_t>(n);
  }
  gzclose(f);
  out.resize(pos);
  return out;
}

namespace {

// text.find("\"rank\":", pos), vectorised: a file without the key (legacy
// traces) is searched whole, and string_view::find stops at every quote.
// Candidates are the positions with 'r' at +1 and 'k' at +4, 16 at a time.
size_t FindRankKey(string_view text, size_t pos) {
  static constexpr string_view kKey = "\"rank\":";
  size_t i = pos;
#if defined(__SSE2__)
  const __m128i r = _mm_set1_epi8('r'), k = _mm_set1_epi8('k');
  while (i + 4 + 16 <= text.size()) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i + 1));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i + 4));
    unsigned bits = unsigned(_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, r),
                                                             _mm_cmpeq_epi8(b, k))));
    while (bits) {
      const size_t at = i + size_t(__builtin_ctz(bits));
      bits &= bits - 1;
      if (text.substr(at, kKey.size()) == kKey) return at;
    }
    i += 16;
  }
#endif
  return text.find(kKey, i);
}

}  // namespace

int64_t FindRank(string_view text) {
  // The first match in text order is the first match of the first matching
  // line, since matches never cross a line feed.
  size_t pos = 0;
  while ((pos = FindRankKey(text, pos)) != string_view::npos) {
    size_t i = pos + 7;
    size_t spaces = 0;
    while (i < text.size() && IsPySpace(text[i]) && text[i] != '\n') ++i, ++spaces;
    size_t d = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    if (spaces > 0 && i > d) {
      int64_t r = 0;
      for (size_t k = d; k < i; ++k) {
        if (r > (INT64_MAX - 9) / 10) return r;  // absurd rank: saturate
        r = r * 10 + (text[k] - '0');
      }
      return r;
    }
    pos += 7;
  }
  return 0;
}

RankRows ParseKinetoRows(const std::string& file, std::string text) {
  // The importer reads a name with invalid UTF-8 as U+FFFD (simdjson would
  // reject the whole document): the rows are read from the same text.
  if (!simdjson::validate_utf8(text.data(), text.size())) {
    std::string fixed;
    fixed.reserve(text.size() + simdjson::SIMDJSON_PADDING);
    AppendSanitizedUtf8(text, &fixed);
    text.swap(fixed);
  }
  if (text.capacity() < text.size() + simdjson::SIMDJSON_PADDING) {
    text.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  }
  return ParseKinetoRows(file, std::string_view(text), text.capacity());
}

RowsBuilder::RowsBuilder(std::string file) { rows_.file = std::move(file); }

void RowsBuilder::Restart() {
  std::string file = std::move(rows_.file);
  rows_ = RankRows();
  rows_.file = std::move(file);
  ts_raw_.clear();
  dur_raw_.clear();
  fractional_ = false;
}

void RowsBuilder::AddNonObject() { fractional_ = true; }  // no integer ts

void RowsBuilder::Add(const KinetoEventFacts& f) {
  const Num ts = ReadNum(f.ts), dur = ReadNum(f.dur);
  const bool has_cat = f.cat.type != KinetoRawValue::kAbsent && f.cat.type != KinetoRawValue::kNull;
  bool cat_is_trace = false, idle_cat = false, cat_step = false;
  if (f.cat.type == KinetoRawValue::kString) {
    cat_is_trace = f.cat.text == "Trace";
    idle_cat = IsIdleCat(f.cat.text);
    cat_step = IsStepString(f.cat.text);
  }
  if (ts.kind != Num::kInt) fractional_ = true;
  const bool has_dur = dur.kind == Num::kInt || dur.kind == Num::kOther;
  if (!has_dur || !has_cat || cat_is_trace) return;
  const string_view name = f.name.type == KinetoRawValue::kString ? f.name.text : string_view();
  const int64_t stream = ToIntId(f.stream);
  uint8_t bits = 0;
  if (name == "Event Sync" || name == "Context Sync") bits |= kRowGpuSyncName;
  if (IsLaunchName(name)) bits |= kRowLaunchName;
  if (idle_cat) bits |= kRowIdleCat;
  if (IsStepString(name)) {
    bits |= kRowStepName;
    rows_.step_strings.emplace(name);
  }
  if (cat_step) rows_.step_strings.emplace(f.cat.text);
  if (StartsWith(name, "ProfilerStep") && !IsValidStepName(name) && rows_.bad_step_name.empty()) {
    rows_.bad_step_name.assign(name);
  }
  rows_.idx.push_back(f.index);
  rows_.stream.push_back(stream);
  rows_.correlation.push_back(ToIntId(f.correlation));
  // Only rows with a stream are ever classified (§6.2, §8): skip the string
  // tests for the CPU ops, most of a trace.
  rows_.kclass.push_back(stream != -1 ? ClassifyKernelName(name) : KernelClass::kOther);
  rows_.bits.push_back(bits);
  ts_raw_.push_back(ts);
  dur_raw_.push_back(dur.d);
}

void RowsBuilder::Append(RowsBuilder& part, int64_t first_index) {
  RankRows& p = part.rows_;
  for (int64_t i : p.idx) rows_.idx.push_back(i + first_index);
  rows_.stream.insert(rows_.stream.end(), p.stream.begin(), p.stream.end());
  rows_.correlation.insert(rows_.correlation.end(), p.correlation.begin(), p.correlation.end());
  rows_.kclass.insert(rows_.kclass.end(), p.kclass.begin(), p.kclass.end());
  rows_.bits.insert(rows_.bits.end(), p.bits.begin(), p.bits.end());
  rows_.step_strings.merge(p.step_strings);
  if (rows_.bad_step_name.empty()) rows_.bad_step_name = p.bad_step_name;
  ts_raw_.insert(ts_raw_.end(), part.ts_raw_.begin(), part.ts_raw_.end());
  dur_raw_.insert(dur_raw_.end(), part.dur_raw_.begin(), part.dur_raw_.end());
  fractional_ = fractional_ || part.fractional_;
  part.Restart();
}

RankRows RowsBuilder::Finish(int64_t rank) {
  RankRows rows = std::move(rows_);
  rows.rank = rank;
  rows.fractional = fractional_;
  // §2.2: integer mode takes ts/dur as written; fractional mode rounds
  // every (ts, dur) pair to whole µs and drops rows without a ts.
  size_t out = 0;
  for (size_t i = 0; i < rows.idx.size(); ++i) {
    int64_t ts;
    double dur;
    if (!fractional_) {
      ts = ts_raw_[i].i;
      dur = dur_raw_[i];
    } else {
      if (ts_raw_[i].kind != Num::kInt && ts_raw_[i].kind != Num::kOther) continue;
      double end = ts_raw_[i].d + dur_raw_[i];
      double t = std::ceil(ts_raw_[i].d);
      if (!FitsInt64(t) || !std::isfinite(end)) continue;  // a ts of 1e30 has no place either
      ts = static_cast<int64_t>(t);
      dur = std::floor(end) - t;
    }
    rows.idx[out] = rows.idx[i];
    rows.stream[out] = rows.stream[i];
    rows.correlation[out] = rows.correlation[i];
    rows.kclass[out] = rows.kclass[i];
    rows.bits[out] = rows.bits[i];
    rows.ts.push_back(ts);
    rows.dur.push_back(dur);
    ++out;
  }
  rows.idx.resize(out);
  rows.stream.resize(out);
  rows.correlation.resize(out);
  rows.kclass.resize(out);
  rows.bits.resize(out);
  Restart();
  // A finished builder stays alive as long as the set's read (ImportedRows
  // keeps every observer): its scratch must not.
  std::vector<RowNum>().swap(ts_raw_);
  std::vector<double>().swap(dur_raw_);
  return rows;
}

namespace {

// A string value as HTA's json reader sees it: unescaped.
KinetoRawValue Unescaped(simdjson::ondemand::value v) {
  KinetoRawValue r = PeekRawValue(v);
  if (r.escaped) {
    r.escaped = false;
    if (v.get_string().get(r.text)) r = KinetoRawValue{KinetoRawValue::kOther, {}, false};
  }
  return r;
}

}  // namespace

RankRows ParseKinetoRows(const std::string& file, std::string_view text, size_t padded_size) {
  RowsBuilder rows(file);
  const int64_t rank = FindRank(text);
  simdjson::padded_string_view json(text.data(), text.size(), padded_size);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  bool iterating = false;  // doc has an iterator (iterate() may throw first)
  try {
    doc = parser.iterate(json);
    iterating = true;
    simdjson::ondemand::object top = doc.get_object();
    for (auto field : top) {
      string_view key = field.unescaped_key();
      if (key != "traceEvents") continue;
      rows.Restart();  // a repeated key: the last occurrence wins
      simdjson::ondemand::array events = field.value().get_array();
      KinetoEventFacts f;
      int64_t idx = -1;
      for (simdjson::ondemand::value ev : events) {
        ++idx;
        simdjson::ondemand::object obj;
        if (ev.get_object().get(obj)) {
          rows.AddNonObject();
          continue;
        }
        f = KinetoEventFacts();
        f.index = idx;
        for (auto fr : obj) {
          if (fr.error()) throw simdjson::simdjson_error(fr.error());
          simdjson::ondemand::field&& fl = std::move(fr).value_unsafe();  // no copy
          string_view k;
          if (auto err = FieldKey(fl, &k)) throw simdjson::simdjson_error(err);
          simdjson::ondemand::value v = fl.value();
          if (k == "ts") {
            f.ts = PeekRawValue(v);
          } else if (k == "dur") {
            f.dur = PeekRawValue(v);
          } else if (k == "cat" || k == "name") {
            // Like HTA's reader, a value that is not JSON fails the file.
            simdjson::ondemand::json_type t = v.type();
            KinetoRawValue r;
            r.type = t == simdjson::ondemand::json_type::null     ? KinetoRawValue::kNull
                     : t == simdjson::ondemand::json_type::string ? KinetoRawValue::kString
                                                                   : KinetoRawValue::kOther;
            // On-demand keeps every unescaped string in the parser's buffer
            // until the next document: views stay valid, no copy per event.
            if (r.type == KinetoRawValue::kString) r.text = v.get_string();
            (k == "cat" ? f.cat : f.name) = r;
          } else if (k == "args") {
            f.stream = f.correlation = KinetoRawValue();
            simdjson::ondemand::object args;
            if (v.get_object().get(args)) continue;
            for (auto ar : args) {
              if (ar.error()) throw simdjson::simdjson_error(ar.error());
              simdjson::ondemand::field&& a = std::move(ar).value_unsafe();
              string_view ak;
              if (auto err = FieldKey(a, &ak)) throw simdjson::simdjson_error(err);
              if (ak == "stream") {
                f.stream = Unescaped(a.value());
              } else if (ak == "correlation") {
                f.correlation = Unescaped(a.value());
              }
            }
          }
        }
        rows.Add(f);
      }
    }
  } catch (const simdjson::simdjson_error& e) {
    std::string position;
    const char* at = nullptr;
    // A document that failed in iterate() (invalid UTF-8, unclosed string)
    // has no iterator to ask: no position then.
    if (e.error() == simdjson::INCOMPLETE_ARRAY_OR_OBJECT) {
      // Found when the structure is indexed, before the iterator moves (it
      // would say byte 0): the document ends where more was expected.
      position = "byte " + std::to_string(json.size());
    } else if (iterating && !doc.current_location().get(at) && at) {
      position = "byte " + std::to_string(at - json.data());
    }
    ThrowInputError(file, position, std::string("malformed JSON: ") + e.what());
  }
  return rows.Finish(rank);
}

std::vector<std::string> ListTraceFiles(const std::string& path) {
  std::vector<std::string> files;
  DIR* d = opendir(path.c_str());
  if (!d) {
    files.push_back(path);
    return files;
  }
  // Raw listing order, as HTA's os.listdir sees it (decides duplicate ranks).
  while (dirent* e = readdir(d)) {
    string_view n = e->d_name;
    bool gz = n.size() >= 3 && n.substr(n.size() - 3) == ".gz";
    bool js = n.size() >= 5 && n.substr(n.size() - 5) == ".json";
    if (!gz && !js) continue;
    std::string full = path;
    if (!full.empty() && full.back() != '/') full += '/';
    full += n;
    files.push_back(std::move(full));
  }
  closedir(d);
  return files;
}

}  // namespace moetrace::hta
