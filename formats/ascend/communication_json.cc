#include "formats/ascend/communication_json.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "formats/ascend/ascend_csv.h"
#include "formats/decimal.h"
#include "formats/errors.h"
#include "formats/json_error.h"

namespace moetrace {
namespace {

using simdjson::ondemand::json_type;

constexpr std::string_view kTimeInfo = "Communication Time Info";
constexpr std::string_view kBandwidthInfo = "Communication Bandwidth Info";
constexpr std::string_view kSizeDistribution = "Size Distribution";
constexpr std::string_view kTransitSize = "Transit Size(MB)";
constexpr std::string_view kTransitTime = "Transit Time(ms)";

// One op record as read: (key part, value) pairs in file order.
struct Transport {
  std::string name;  // key part: "hccs"
  std::vector<std::pair<std::string, double>> fields;
  std::vector<std::tuple<int64_t, double, double>> sizes;  // bytes, count, time ms
  double size_mb = 0, time_ms = 0;
  bool AllZero() const {
    if (!sizes.empty()) return false;
    for (const auto& [k, v] : fields) {
      if (v != 0) return false;
    }
    return true;
  }
};

struct Record {
  bool seen = false;
  std::vector<std::pair<std::string, double>> time;  // "elapse_time_ms" -> value
  std::vector<std::pair<std::string, double>> time_ms_sums;  // "elapse" -> ms, for totals
  std::vector<Transport> transports;
};

struct RankSums {
  int64_t ops = 0;
  std::map<std::string, double> time_ms;                       // "elapse" -> sum
  std::map<std::string, std::pair<double, double>> transport;  // name -> (MB, ms)
};

// "step12" -> 12, "step" -> kNone; false for other keys.
bool StepKey(std::string_view key, int32_t* step) {
  if (key.substr(0, 4) != "step") return false;
  std::string_view digits = key.substr(4);
  if (digits.empty()) {
    *step = kNone;
    return true;
  }
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  int64_t n = 0;
  if (!ParseScaledDecimal(digits, 0, &n) || n > INT32_MAX) return false;
  *step = static_cast<int32_t>(n);
  return true;
}

std::string KeyOpName(std::string_view op) {
  std::string s(op);
  std::replace(s.begin(), s.end(), '.', '_');
  return s;
}

class Walker {
 public:
  Walker(const simdjson::padded_string& text, const std::string& file, int32_t rank,
         LenientStats* lenient)
      : text_(text), file_(file), rank_(rank), lenient_(lenient) {}

  void Object(simdjson::ondemand::object obj, int depth) {
    Record rec;
    for (auto field_result : obj) {
      simdjson::ondemand::field field = FieldOf(std::move(field_result));
      std::string_view key = field.unescaped_key();
      simdjson::ondemand::value v = field.value();
      json_type t = TypeOf(v);
      if (key == kTimeInfo || key == kBandwidthInfo) {
        if (t == json_type::null) continue;
        if (t != json_type::object) {
          Odd(v, "expected an object for \"" + std::string(key) + "\"");
          continue;
        }
        rec.seen = true;
        if (key == kTimeInfo) {
          ReadTime(v.get_object(), &rec);
        } else {
          ReadBandwidth(v.get_object(), &rec);
        }
      } else if (t == json_type::object && depth < kMaxJsonDepth) {
        path_.emplace_back(key);
        Object(v.get_object(), depth + 1);
        path_.pop_back();
      }
    }
    if (rec.seen) Emit(rec);
  }

  CommunicationFigures Finish() {
    CommunicationFigures out;
    for (auto& [r, s] : sums_) {
      out.reference.push_back({r, kNone, "communication.op_count", static_cast<double>(s.ops)});
      for (auto& [k, ms] : s.time_ms) {
        out.reference.push_back({r, kNone, "communication." + k + "_time_us", ms * 1000.0});
      }
      for (auto& [t, mb_ms] : s.transport) {
        double bytes = mb_ms.first * 1e6;
        out.reference.push_back({r, kNone, "communication." + t + ".transit_size_bytes", bytes});
        out.reference.push_back(
            {r, kNone, "communication." + t + ".transit_time_us", mb_ms.second * 1000.0});
        if (mb_ms.second > 0) {
          out.reference.push_back(
              {r, kNone, "communication." + t + ".bandwidth_gb_s", mb_ms.first / mb_ms.second});
        }
      }
    }
    std::stable_sort(per_op_.begin(), per_op_.end(), [](const LabeledValue& a, const LabeledValue& b) {
      return std::tie(a.rank, a.step, a.key) < std::tie(b.rank, b.step, b.key);
    });
    for (auto& v : per_op_) out.reference.push_back(std::move(v));
    for (auto& [r, name] : ambiguous_) op_bytes_[r].erase(name);
    out.op_bytes = std::move(op_bytes_);
    out.links = std::move(links_);
    return out;
  }

 private:
  [[noreturn]] void Fail(simdjson::ondemand::value& v, const std::string& what) {
    std::string_view tok = v.raw_json_token();
    std::string pos;
    if (tok.data() >= text_.data() && tok.data() <= text_.data() + text_.size()) {
      pos = "byte " + std::to_string(tok.data() - text_.data());
    }
    ThrowInputError(file_, pos, what);
  }

  // A value's type; an unknown token (NaN, Infinity: what Python's json
  // writes for them) reads as null in lenient mode, counted as skipped.
  json_type TypeOf(simdjson::ondemand::value& v) {
    json_type t = json_type::null;
    if (v.type().get(t) == simdjson::SUCCESS) return t;
    Odd(v, "unexpected token");
    return json_type::null;
  }

  // Strict: throws naming the byte. Lenient: counts the value as skipped.
  void Odd(simdjson::ondemand::value& v, const std::string& what) {
    if (!lenient_) Fail(v, what);
    ++lenient_->skipped;
  }

  // A number field; false for null (absent) and, in lenient mode, for a
  // value that is no number (a number in a string is coerced).
  bool Number(simdjson::ondemand::value v, std::string_view name, double* out) {
    json_type t = TypeOf(v);
    if (t == json_type::null) return false;
    if (t == json_type::number && v.get_double().get(*out) == simdjson::SUCCESS &&
        std::isfinite(*out)) {
      return true;
    }
    std::string_view s;
    if (lenient_ && t == json_type::string && v.get_string().get(s) == simdjson::SUCCESS &&
        ParseFiniteDouble(s, out)) {
      ++lenient_->coerced;
      return true;
    }
    Odd(v, "expected a number for \"" + std::string(name) + "\"");
    return false;
  }

  void ReadTime(simdjson::ondemand::object obj, Record* rec) {
    for (auto field_result : obj) {
      simdjson::ondemand::field field = FieldOf(std::move(field_result));
      std::string_view key = field.unescaped_key();
      double d = 0;
      if (!Number(field.value(), key, &d)) continue;
      rec->time.emplace_back(ReferenceKeyPart(key), d);
      size_t p = key.find(" Time(ms)");
      if (p != std::string_view::npos) {
        rec->time_ms_sums.emplace_back(ReferenceKeyPart(key.substr(0, p)), d);
      }
    }
  }

  void ReadBandwidth(simdjson::ondemand::object obj, Record* rec) {
    for (auto field_result : obj) {
      simdjson::ondemand::field field = FieldOf(std::move(field_result));
      std::string_view transport = field.unescaped_key();
      simdjson::ondemand::value tv = field.value();
      json_type t = TypeOf(tv);
      if (t == json_type::null) continue;
      if (t != json_type::object) {
        Odd(tv, "expected an object for transport \"" + std::string(transport) + "\"");
        continue;
      }
      Transport tr;
      tr.name = ReferenceKeyPart(transport);
      for (auto f_result : tv.get_object()) {
        simdjson::ondemand::field f = FieldOf(std::move(f_result));
        std::string_view key = f.unescaped_key();
        simdjson::ondemand::value v = f.value();
        if (key == kSizeDistribution) {
          ReadSizes(v, &tr);
          continue;
        }
        double d = 0;
        if (!Number(v, key, &d)) continue;
        tr.fields.emplace_back(ReferenceKeyPart(key), d);
        if (key == kTransitSize) tr.size_mb = d;
        if (key == kTransitTime) tr.time_ms = d;
      }
      rec->transports.push_back(std::move(tr));
    }
  }

  // {"0.003072": [count, time ms], ...}: packet size in MB -> bytes.
  void ReadSizes(simdjson::ondemand::value v, Transport* tr) {
    json_type t = TypeOf(v);
    if (t == json_type::null) return;
    if (t != json_type::object) return Odd(v, "expected an object for \"Size Distribution\"");
    for (auto f_result : v.get_object()) {
      simdjson::ondemand::field f = FieldOf(std::move(f_result));
      std::string key(f.unescaped_key().value());
      simdjson::ondemand::value pair = f.value();
      int64_t bytes = 0;
      if (!ParseScaledDecimal(key, 6, &bytes) || bytes < 0) {
        Odd(pair, "expected a packet size in MB as the key, got \"" + key + "\"");
        continue;
      }
      if (TypeOf(pair) != json_type::array) {
        Odd(pair, "expected [count, time ms] for packet size " + key);
        continue;
      }
      double vals[2] = {0, 0};
      int n = 0;
      bool ok = true;
      for (auto e_result : pair.get_array()) {
        simdjson::ondemand::value e = e_result.value();
        if (ok && (n >= 2 || TypeOf(e) != json_type::number)) {
          Odd(e, "expected [count, time ms] for packet size " + key);
          ok = false;
        }
        if (ok && e.get_double().get(vals[n]) != simdjson::SUCCESS) {
          Odd(e, "expected [count, time ms] for packet size " + key);
          ok = false;
        }
        if (ok) ++n;
      }
      if (ok && n != 2) {
        Odd(pair, "expected [count, time ms] for packet size " + key);
        ok = false;
      }
      if (ok) tr->sizes.emplace_back(bytes, vals[0], vals[1]);
    }
  }

  void Emit(const Record& rec) {
    if (path_.empty()) return;
    int32_t r = rank_;
    size_t op_index = path_.size() - 1;
    if (rank_ < 0) {
      // Cluster: {op: {rank id: record}}.
      int64_t id = 0;
      if (path_.size() < 2 || !ParseScaledDecimal(path_.back(), 0, &id) || id < 0 ||
          id > INT32_MAX) {
        return;
      }
      r = static_cast<int32_t>(id);
      op_index = path_.size() - 2;
    }
    const std::string& op = path_[op_index];
    if (op.rfind("Total", 0) == 0) return;  // the profiler's own sums
    int32_t step = kNone;
    for (size_t i = op_index; i-- > 0;) {
      if (StepKey(path_[i], &step)) break;
    }

    RankSums& s = sums_[r];
    ++s.ops;
    for (const auto& [k, ms] : rec.time_ms_sums) s.time_ms[k] += ms;
    std::string prefix = "communication.op." + KeyOpName(op) + ".";
    for (const auto& [k, d] : rec.time) per_op_.push_back({r, step, prefix + k, d});
    bool has_sdma = false;
    for (const Transport& t : rec.transports) has_sdma |= t.name == "sdma";
    double total_mb = 0;
    // Group: the cluster file's top-level key, when it is no step key.
    int32_t ignored_step = 0;
    std::string group =
        rank_ < 0 && op_index > 0 && !StepKey(path_[0], &ignored_step) ? path_[0] : std::string();
    for (const Transport& t : rec.transports) {
      auto& tsum = s.transport[t.name];
      tsum.first += t.size_mb;
      tsum.second += t.time_ms;
      if (t.size_mb != 0 || t.time_ms != 0) {
        LinkSum& l = links_[{group, r, t.name}];
        l.size_mb += t.size_mb;
        l.time_ms += t.time_ms;
        ++l.ops;
      }
      bool part_of_sdma = t.name == "hccs" || t.name == "pcie" || t.name == "sio";
      if (!(has_sdma && part_of_sdma)) total_mb += t.size_mb;
      if (t.AllZero()) continue;
      std::string tp = prefix + t.name + ".";
      for (const auto& [k, d] : t.fields) per_op_.push_back({r, step, tp + k, d});
      for (const auto& [bytes, count, ms] : t.sizes) {
        std::string sp = tp + "size_" + std::to_string(bytes) + ".";
        per_op_.push_back({r, step, sp + "count", count});
        per_op_.push_back({r, step, sp + "time_ms", ms});
      }
    }
    if (rec.transports.empty()) return;
    uint64_t bytes = total_mb > 0 ? static_cast<uint64_t>(std::llround(total_mb * 1e6)) : 0;
    per_op_.push_back({r, step, prefix + "transit_bytes", static_cast<double>(bytes)});
    std::string name = op.substr(0, op.find('@'));
    auto [it, inserted] = op_bytes_[r].emplace(name, bytes);
    if (!inserted && it->second != bytes) ambiguous_.emplace(r, name);
  }

  const simdjson::padded_string& text_;
  const std::string& file_;
  int32_t rank_;
  LenientStats* lenient_;
  std::vector<std::string> path_;
  std::map<LinkKey, LinkSum> links_;
  std::map<int32_t, RankSums> sums_;
  std::vector<LabeledValue> per_op_;
  std::map<int32_t, OpBytes> op_bytes_;
  std::set<std::pair<int32_t, std::string>> ambiguous_;
};

}  // namespace

CommunicationFigures ReadCommunicationJson(std::string_view json, const std::string& file,
                                           int32_t rank, LenientStats* lenient) {
  simdjson::padded_string text(json);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  bool started = false;
  Walker walker(text, file, rank, lenient);
  try {
    doc = parser.iterate(text);
    started = true;
    if (doc.type() != json_type::object) ThrowInputError(file, "byte 0", "expected a JSON object");
    walker.Object(doc.get_object(), 0);
  } catch (const simdjson::simdjson_error& e) {
    ThrowMalformedJson(file, doc, text, started, e.error());
  }
  return walker.Finish();
}

int64_t FillCommBytes(const OpBytes& op_bytes, Rank* rank) {
  if (op_bytes.empty()) return 0;
  std::set<std::string_view> matched;
  for (Track& track : rank->tracks) {
    if (track.kind != TrackKind::kDeviceStream) continue;
    EventTable& ev = track.events;
    for (size_t i = 0; i < ev.size(); ++i) {
      int32_t c = ev.comm[i];
      if (c < 0 || static_cast<size_t>(c) >= track.comms.size()) continue;
      if (ev.category[i] != Category::kCollective && ev.category[i] != Category::kP2P) continue;
      std::string_view name = rank->strings.Get(ev.name[i]);
      name = name.substr(0, name.find('@'));
      auto it = op_bytes.find(name);
      if (it == op_bytes.end()) continue;
      matched.insert(it->first);
      if (track.comms[c].bytes == 0) track.comms[c].bytes = it->second;
    }
  }
  int64_t n = static_cast<int64_t>(matched.size());
  rank->AddStat("read.communication_json.ops_matched", n);
  rank->AddStat("read.communication_json.ops_unmatched", static_cast<int64_t>(op_bytes.size()) - n);
  return n;
}

}  // namespace moetrace
