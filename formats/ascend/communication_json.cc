#include "formats/ascend/communication_json.h"

#include <simdjson.h>

#include <map>

#include "formats/ascend/ascend_csv.h"
#include "formats/ascend/decimal.h"
#include "formats/errors.h"

namespace moetrace {
namespace {

struct RankSums {
  int64_t ops = 0;
  std::map<std::string, double> time_ms;             // "elapse" -> sum
  std::map<std::string, std::pair<double, double>> transport;  // name -> (MB, ms)
};

double Number(simdjson::dom::element e) {
  double d = 0;
  if (e.get_double().get(d) == simdjson::SUCCESS) return d;
  int64_t i = 0;
  if (e.get_int64().get(i) == simdjson::SUCCESS) return static_cast<double>(i);
  uint64_t u = 0;
  if (e.get_uint64().get(u) == simdjson::SUCCESS) return static_cast<double>(u);
  return 0;
}

void AddOp(simdjson::dom::object op, RankSums* s) {
  ++s->ops;
  simdjson::dom::object time;
  if (op["Communication Time Info"].get_object().get(time) == simdjson::SUCCESS) {
    for (auto [k, v] : time) {
      std::string key(k);
      size_t p = key.find(" Time(ms)");
      if (p == std::string::npos) continue;
      s->time_ms[ReferenceKeyPart(key.substr(0, p))] += Number(v);
    }
  }
  simdjson::dom::object bw;
  if (op["Communication Bandwidth Info"].get_object().get(bw) == simdjson::SUCCESS) {
    for (auto [k, v] : bw) {
      simdjson::dom::object t;
      if (v.get_object().get(t) != simdjson::SUCCESS) continue;
      auto& sums = s->transport[ReferenceKeyPart(k)];
      simdjson::dom::element e;
      if (t["Transit Size(MB)"].get(e) == simdjson::SUCCESS) sums.first += Number(e);
      if (t["Transit Time(ms)"].get(e) == simdjson::SUCCESS) sums.second += Number(e);
    }
  }
}

// Walks the tree; `parent_key` is the key under which `obj` sits.
void Walk(simdjson::dom::object obj, std::string_view key, std::string_view parent_key,
          int32_t rank, std::map<int32_t, RankSums>* sums, int depth) {
  if (depth > 16) return;
  simdjson::dom::element probe;
  if (obj["Communication Time Info"].get(probe) == simdjson::SUCCESS) {
    if (rank >= 0) {
      if (key != "Total Op Info") AddOp(obj, &(*sums)[rank]);
      return;
    }
    // Cluster file: {op: {rank: record}}.
    int64_t r = 0;
    if (parent_key != "Total Op Info" && ParseScaledDecimal(key, 0, &r) && r >= 0 && r <= INT32_MAX) {
      AddOp(obj, &(*sums)[static_cast<int32_t>(r)]);
    }
    return;
  }
  for (auto [k, v] : obj) {
    simdjson::dom::object child;
    if (v.get_object().get(child) == simdjson::SUCCESS) Walk(child, k, key, rank, sums, depth + 1);
  }
}

}  // namespace

std::vector<LabeledValue> CommunicationReference(std::string_view json, const std::string& file,
                                                 int32_t rank) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  auto err = parser.parse(json.data(), json.size()).get(root);
  if (err) ThrowInputError(file, "", std::string("malformed JSON: ") + simdjson::error_message(err));
  simdjson::dom::object obj;
  if (root.get_object().get(obj) != simdjson::SUCCESS) {
    ThrowInputError(file, "byte 0", "expected a JSON object");
  }
  std::map<int32_t, RankSums> sums;
  Walk(obj, "", "", rank, &sums, 0);
  std::vector<LabeledValue> out;
  for (auto& [r, s] : sums) {
    out.push_back({r, kNone, "communication.op_count", static_cast<double>(s.ops)});
    for (auto& [k, ms] : s.time_ms) {
      out.push_back({r, kNone, "communication." + k + "_time_us", ms * 1000.0});
    }
    for (auto& [t, mb_ms] : s.transport) {
      double bytes = mb_ms.first * 1024.0 * 1024.0;
      out.push_back({r, kNone, "communication." + t + ".transit_size_bytes", bytes});
      out.push_back({r, kNone, "communication." + t + ".transit_time_us", mb_ms.second * 1000.0});
      if (mb_ms.second > 0) {
        out.push_back({r, kNone, "communication." + t + ".bandwidth_gb_s",
                       bytes / 1e9 / (mb_ms.second / 1000.0)});
      }
    }
  }
  return out;
}

}  // namespace moetrace
