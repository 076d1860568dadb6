// The thresholds file of `moetrace gate`, in TOML (analyzer/GATE.md).
// toml++ is header-only: this is the one translation unit that includes it.
#include <fmt/core.h>

#include <fstream>
#include <map>
#include <sstream>

#define TOML_ENABLE_FORMATTERS 0
#include <toml++/toml.h>

#include "analyzer/gate.h"
#include "formats/errors.h"

namespace moetrace {
namespace {

[[noreturn]] void Fail(std::string_view file, const toml::source_region& where, std::string_view what) {
  ThrowInputError(file, fmt::format("line {}", where.begin.line), what);
}

// True when `path` names a numeric scalar reachable through singular
// message fields of Analysis (what LookupNumber can read).
bool IsNumericPath(std::string_view path) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Descriptor* d = analysis::Analysis::descriptor();
  while (true) {
    const size_t dot = path.find('.');
    const FieldDescriptor* f = d->FindFieldByName(std::string(path.substr(0, dot)));
    if (!f || f->is_repeated()) return false;
    if (dot == std::string_view::npos) {
      switch (f->cpp_type()) {
        case FieldDescriptor::CPPTYPE_INT32: case FieldDescriptor::CPPTYPE_INT64:
        case FieldDescriptor::CPPTYPE_UINT32: case FieldDescriptor::CPPTYPE_UINT64:
        case FieldDescriptor::CPPTYPE_DOUBLE: case FieldDescriptor::CPPTYPE_FLOAT:
          return true;
        default:
          return false;
      }
    }
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) return false;
    d = f->message_type();
    path.remove_prefix(dot + 1);
  }
}

double Tolerance(std::string_view file, const toml::node& v, std::string_view key) {
  if (!v.is_number()) Fail(file, v.source(), fmt::format("`{}` must be a number", key));
  const double x = *v.value<double>();
  if (!(x >= 0)) Fail(file, v.source(), fmt::format("`{}` must be >= 0", key));
  return x;
}

}  // namespace

std::vector<GateThreshold> ParseGateThresholds(std::string_view text, std::string_view file) {
  toml::table doc;
  try {
    doc = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    Fail(file, e.source(), e.description());
  }
  bool use_defaults = true;
  std::vector<GateThreshold> own;
  for (auto&& [key, node] : doc) {
    if (key.str() == "defaults") {
      if (!node.is_boolean()) Fail(file, node.source(), "`defaults` must be true or false");
      use_defaults = *node.value<bool>();
      continue;
    }
    const toml::table* t = node.as_table();
    if (!t) {
      Fail(file, node.source(),
           fmt::format("`{}` is not a metric table (write [\"cluster.ratios.host_bound\"])", key.str()));
    }
    GateThreshold th;
    th.path = std::string(key.str());
    if (!IsNumericPath(th.path)) {
      Fail(file, node.source(),
           fmt::format("`{}` is not a numeric metric path of the analysis (METRICS.md; quote it: [\"cluster.ratios.host_bound\"])", th.path));
    }
    // The direction defaults to the default set's, else lower is better.
    for (const GateThreshold& d : DefaultGateThresholds()) {
      if (d.path == th.path) th.higher_is_better = d.higher_is_better;
    }
    for (auto&& [k, v] : *t) {
      if (k.str() == "better") {
        const std::optional<std::string_view> s = v.value<std::string_view>();
        if (!s || (*s != "lower" && *s != "higher")) {
          Fail(file, v.source(), "`better` must be \"lower\" or \"higher\"");
        }
        th.higher_is_better = *s == "higher";
      } else if (k.str() == "abs") {
        th.abs = Tolerance(file, v, "abs");
      } else if (k.str() == "rel") {
        th.rel = Tolerance(file, v, "rel");
      } else {
        Fail(file, v.source(),
             fmt::format("unknown key `{}` in [\"{}\"] (expected better, abs, rel)", k.str(), th.path));
      }
    }
    if (!th.abs && !th.rel) Fail(file, node.source(), fmt::format("[\"{}\"] needs abs or rel", th.path));
    own.push_back(std::move(th));
  }
  std::vector<GateThreshold> out;
  if (use_defaults) out = DefaultGateThresholds();
  for (GateThreshold& th : own) {
    bool replaced = false;
    for (GateThreshold& d : out) {
      if (d.path == th.path) {
        d = th;
        replaced = true;
      }
    }
    if (!replaced) out.push_back(std::move(th));
  }
  return out;
}

std::vector<GateThreshold> LoadGateThresholds(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ThrowInputError(path, "", "cannot open the thresholds file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseGateThresholds(ss.str(), path);
}

}  // namespace moetrace
