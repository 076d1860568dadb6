#include "reports/advice.h"

#include <simdjson.h>

#include <fstream>
#include <sstream>

#include "formats/errors.h"

namespace moetrace {
namespace {

std::string Str(simdjson::dom::element e, const char* key) {
  std::string_view s;
  if (e[key].get_string().get(s)) return "";
  return std::string(s);
}

double Dbl(simdjson::dom::element e, const char* key, double def = 0) {
  double d;
  if (e[key].get_double().get(d)) return def;
  return d;
}

int64_t Int(simdjson::dom::element e, const char* key, int64_t def = -1) {
  int64_t v;
  if (e[key].get_int64().get(v)) return def;
  return v;
}

std::vector<std::string> Strings(simdjson::dom::element e, const char* key) {
  std::vector<std::string> out;
  simdjson::dom::array a;
  if (e[key].get_array().get(a)) return out;
  for (simdjson::dom::element x : a) {
    std::string_view s;
    if (!x.get_string().get(s)) out.emplace_back(s);
  }
  return out;
}

}  // namespace

std::vector<advise::Proposal> ParseAdviceJson(std::string_view json, std::string_view file) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto err = parser.parse(simdjson::padded_string(json)).get(doc)) {
    ThrowInputError(file, "", std::string("not JSON: ") + simdjson::error_message(err));
  }
  simdjson::dom::array list;
  if (doc["proposals"].get_array().get(list)) {
    ThrowInputError(file, "", "not an `advise --json` document (no \"proposals\" array)");
  }
  std::vector<advise::Proposal> out;
  for (simdjson::dom::element e : list) {
    if (!e.is_object()) ThrowInputError(file, "", "a proposal is not an object");
    advise::Proposal p;
    p.rule = Str(e, "rule");
    p.title = Str(e, "title");
    p.knob = Str(e, "knob");
    p.detail = Str(e, "detail");
    p.config = Strings(e, "config");
    p.replay = Strings(e, "replay");
    p.confidence = Dbl(e, "confidence");
    simdjson::dom::array ev;
    if (!e["evidence"].get_array().get(ev)) {
      for (simdjson::dom::element x : ev) p.evidence.push_back({Str(x, "metric"), Dbl(x, "value")});
    }
    simdjson::dom::element pred;
    if (!e["predicted"].get(pred) && pred.is_object()) {
      p.predicted = true;
      p.fixes = Str(pred, "fixes");
      p.fixes_before = Dbl(pred, "fixes_before");
      p.fixes_after = Dbl(pred, "fixes_after");
      p.gain = Dbl(pred, "gain");
      p.step_before_ns = Int(pred, "step_time_before_ns", 0);
      p.step_after_ns = Int(pred, "step_time_after_ns", 0);
      p.peak_before_bytes = Int(pred, "peak_memory_before_bytes");
      p.peak_after_bytes = Int(pred, "peak_memory_after_bytes");
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<advise::Proposal> LoadAdviceJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ThrowInputError(path, "", "cannot open the advice document");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseAdviceJson(ss.str(), path);
}

}  // namespace moetrace
