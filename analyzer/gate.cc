#include "analyzer/gate.h"

#include <fmt/core.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analyzer/diff/diff.h"
#include "analyzer/diff/gate_operators.h"
#include "analyzer/label_check.h"
#include "analyzer/split_analysis_json.h"
#include "formats/errors.h"
#include "formats/json_syntax.h"

namespace moetrace {
namespace {

GateThreshold Lower(std::string path, std::optional<double> abs, std::optional<double> rel) {
  return GateThreshold{std::move(path), false, abs, rel};
}
GateThreshold Higher(std::string path, std::optional<double> abs, std::optional<double> rel) {
  return GateThreshold{std::move(path), true, abs, rel};
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

enum class Unit { kRatio, kTime, kBytes, kPlain };

Unit UnitOf(std::string_view path) {
  if (path.find(".ratios.") != std::string_view::npos || EndsWith(path, "unmasked_fraction") ||
      EndsWith(path, ".mfu") || EndsWith(path, ".hfu") || EndsWith(path, "host_wait_share")) {
    return Unit::kRatio;
  }
  if (EndsWith(path, "_ns") || path.find("_ns.") != std::string_view::npos) return Unit::kTime;
  if (EndsWith(path, "_bytes")) return Unit::kBytes;
  return Unit::kPlain;
}

// A difference in the metric's unit (percentage points for ratios).
std::string FormatDifference(std::string_view path, double d) {
  const char* sign = d < 0 ? "-" : "+";
  const double a = std::abs(d);
  switch (UnitOf(path)) {
    case Unit::kRatio: return fmt::format("{}{:.2f} pp", sign, a * 100);
    case Unit::kTime: return fmt::format("{}{:.3f} ms", sign, a / 1e6);
    case Unit::kBytes: return fmt::format("{}{:.3f} GiB", sign, a / (1024.0 * 1024 * 1024));
    case Unit::kPlain: return fmt::format("{}{:.4g}", sign, a);
  }
  return "";
}

std::string ValueOrDash(const GateRow& r, const std::optional<double>& v) {
  return v ? FormatMetricValue(r.threshold.path, *v) : "-";
}

std::string DeltaText(const GateRow& r) {
  if (!r.baseline || !r.current) return "-";
  std::string s = FormatDifference(r.threshold.path, r.delta);
  if (*r.baseline != 0) s += fmt::format(" ({:+.1f}%)", 100 * r.delta / std::abs(*r.baseline));
  return s;
}

std::string ThresholdText(const GateRow& r) {
  const GateThreshold& t = r.threshold;
  std::string s = t.higher_is_better ? "higher better, drop <= " : "lower better, rise <= ";
  std::string parts;
  if (t.abs) parts += FormatDifference(t.path, *t.abs).substr(1);
  if (t.rel) {
    if (!parts.empty()) parts += " or ";
    parts += fmt::format("{:g}%", *t.rel * 100);
  }
  return s + parts;
}

}  // namespace

std::vector<GateThreshold> DefaultGateThresholds() {
  return {
      Lower("cluster.ratios.host_bound", 0.02, std::nullopt),
      Lower("cluster.ratios.unmasked_comm", 0.05, std::nullopt),
      Lower("cluster.ratios.bubble", 0.02, std::nullopt),
      Lower("cluster.ratios.free", 0.03, std::nullopt),
      Lower("cluster.step_time_ns.median", std::nullopt, 0.05),
      Lower("cluster.step_time_ns.max", std::nullopt, 0.05),
      Lower("cluster.comm_by_class.EP.unmasked_fraction", 0.05, std::nullopt),
      Lower("cluster.memory.peak_bytes", std::nullopt, 0.05),
      Lower("cluster.expert_imbalance.max_vio_mean", 0.05, 0.10),
      Higher("cluster.mfu", 0.01, 0.03),
      Higher("cluster.tokens_per_s", std::nullopt, 0.05),
  };
}

std::string_view GateVerdictName(GateVerdict v) {
  switch (v) {
    case GateVerdict::kPass: return "pass";
    case GateVerdict::kImproved: return "improved";
    case GateVerdict::kRegressed: return "REGRESSED";
    case GateVerdict::kMissing: return "MISSING";
    case GateVerdict::kSkipped: return "skipped";
  }
  return "";
}

bool GateResult::regressed() const {
  for (const GateRow& r : rows) {
    if (r.verdict == GateVerdict::kRegressed || r.verdict == GateVerdict::kMissing) return true;
  }
  return false;
}

bool GateResult::time_regressed() const {
  for (const GateRow& r : rows) {
    if (r.verdict == GateVerdict::kRegressed && IsTimeMetric(r.threshold.path)) return true;
  }
  return false;
}

GateResult RunGate(const analysis::Analysis& baseline, const analysis::Analysis& current,
                   const std::vector<GateThreshold>& thresholds) {
  GateResult result;
  result.diff = BuildDiff(baseline, current, "baseline", "current");
  for (const GateThreshold& t : thresholds) {
    GateRow row;
    row.threshold = t;
    double v = 0;
    if (LookupNumber(baseline, t.path, &v) && std::isfinite(v)) row.baseline = v;
    if (LookupNumber(current, t.path, &v) && std::isfinite(v)) row.current = v;
    if (!row.baseline) {
      row.verdict = GateVerdict::kSkipped;  // nothing to compare with
    } else if (!row.current) {
      row.verdict = GateVerdict::kMissing;
    } else {
      row.delta = *row.current - *row.baseline;
      row.tolerance = std::max(t.abs.value_or(0), t.rel.value_or(0) * std::abs(*row.baseline));
      const double worse = t.higher_is_better ? -row.delta : row.delta;
      if (worse > row.tolerance) {
        row.verdict = GateVerdict::kRegressed;
      } else if (worse < -row.tolerance) {
        row.verdict = GateVerdict::kImproved;
      } else {
        row.verdict = GateVerdict::kPass;
      }
    }
    result.rows.push_back(std::move(row));
  }
  return result;
}

analysis::Analysis ParseAnalysisJson(std::string_view json, std::string_view file) {
  analysis::Analysis a;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // documents of newer versions still gate
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &a, options);
  if (!status.ok()) {
    ThrowIfMalformedJson(std::string(file), json);  // a syntax error, with its byte
    ThrowInputError(file, "", fmt::format("not an `analyze --json` document: {}",
                                          std::string(status.message())));
  }
  return a;
}

analysis::Analysis LoadAnalysisJson(const std::string& path, int threads) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    ThrowInputError(path, "", "is a directory, not an analysis document");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) ThrowInputError(path, "", "cannot open the analysis document");
  // Read in one piece when the size is known: a stringstream copied the
  // 106 MB document of the 718B trace twice (~10% of `diff`'s CPU).
  std::string text;
  const bool regular = std::filesystem::is_regular_file(path, ec);
  std::streamoff size = -1;
  if (regular) {
    in.seekg(0, std::ios::end);
    size = in.tellg();
  }
  if (size > 0) {
    text.resize(static_cast<size_t>(size));
    in.seekg(0);
    in.read(text.data(), size);
    text.resize(static_cast<size_t>(in.gcount()));
  } else {  // a pipe, or a file whose size is not known
    in.clear();
    in.seekg(0);
    std::stringstream ss;
    ss << in.rdbuf();
    text = std::move(ss).str();
  }
  analysis::Analysis a = threads == 1 ? ParseAnalysisJson(text, path) : ParseAnalysisJsonSplit(text, path, threads);
  // Unknown fields are ignored (newer documents still gate), so any JSON
  // object parses: an `advise` or `replay` document would gate as all zeros.
  if (!a.has_cluster()) {
    ThrowInputError(path, "", "not an `analyze --json` document: it has no \"cluster\" section");
  }
  return a;
}

std::string FormatMetricValue(std::string_view path, double v) {
  switch (UnitOf(path)) {
    case Unit::kRatio: return fmt::format("{:.2f}%", v * 100);
    case Unit::kTime: return fmt::format("{:.3f} ms", v / 1e6);
    case Unit::kBytes: return fmt::format("{:.3f} GiB", v / (1024.0 * 1024 * 1024));
    case Unit::kPlain: return fmt::format("{:.4g}", v);
  }
  return "";
}

std::string XmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // Control characters other than tab/newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += "?";
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string FormatGateTable(const GateResult& result) {
  std::vector<std::array<std::string, 6>> cells;
  cells.push_back({"metric", "baseline", "current", "delta", "threshold", "verdict"});
  for (const GateRow& r : result.rows) {
    cells.push_back({r.threshold.path, ValueOrDash(r, r.baseline), ValueOrDash(r, r.current),
                     DeltaText(r), ThresholdText(r), std::string(GateVerdictName(r.verdict))});
  }
  size_t width[6] = {};
  for (const auto& row : cells) {
    for (int i = 0; i < 6; ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : cells) {
    for (int i = 0; i < 6; ++i) {
      out += row[i];
      if (i < 5) out += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out += '\n';
  }
  int regressed = 0;
  for (const GateRow& r : result.rows) {
    regressed += r.verdict == GateVerdict::kRegressed || r.verdict == GateVerdict::kMissing;
  }
  out += regressed ? fmt::format("gate: FAIL ({} of {} metrics regressed)\n", regressed, result.rows.size())
                   : fmt::format("gate: pass ({} metrics)\n", result.rows.size());
  return out;
}

std::string GateJUnitXml(const GateResult& result) {
  int failures = 0, skipped = 0;
  for (const GateRow& r : result.rows) {
    failures += r.verdict == GateVerdict::kRegressed || r.verdict == GateVerdict::kMissing;
    skipped += r.verdict == GateVerdict::kSkipped;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"moetrace gate\" tests=\"{0}\" failures=\"{1}\">\n"
                     "  <testsuite name=\"moetrace gate\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" skipped=\"{2}\">\n",
                     result.rows.size(), failures, skipped);
  for (const GateRow& r : result.rows) {
    const std::string name = XmlEscape(r.threshold.path);
    out += fmt::format("    <testcase classname=\"moetrace.gate\" name=\"{}\"", name);
    const std::string detail = fmt::format(
        "{}: baseline {}, current {}, delta {}, threshold {}", r.threshold.path,
        ValueOrDash(r, r.baseline), ValueOrDash(r, r.current), DeltaText(r), ThresholdText(r));
    if (r.verdict == GateVerdict::kRegressed || r.verdict == GateVerdict::kMissing) {
      std::string text = detail;
      if (r.verdict == GateVerdict::kRegressed && IsTimeMetric(r.threshold.path)) {
        const std::string ops = GateOperatorsText(result.diff);
        if (!ops.empty()) text += "\n" + ops;
      }
      const std::string message = r.verdict == GateVerdict::kMissing
                                      ? r.threshold.path + " is missing from the current analysis"
                                      : r.threshold.path + " regressed";
      out += fmt::format(">\n      <failure message=\"{}\" type=\"regression\">{}</failure>\n    </testcase>\n",
                         XmlEscape(message), XmlEscape(text));
    } else if (r.verdict == GateVerdict::kSkipped) {
      out += fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                         XmlEscape(r.threshold.path + " is absent from the baseline"));
    } else {
      out += fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n", XmlEscape(detail));
    }
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string GateMarkdown(const GateResult& result) {
  // Pipes and backslashes would break a GFM table cell; metric paths have none,
  // but thresholds files are user input.
  auto cell = [](std::string s) {
    std::string out;
    for (char c : s) {
      if (c == '|') out += "\\|";
      else if (c == '<') out += "&lt;";
      else if (c == '\n') out += ' ';
      else out += c;
    }
    return out;
  };
  int regressed = 0;
  for (const GateRow& r : result.rows) {
    regressed += r.verdict == GateVerdict::kRegressed || r.verdict == GateVerdict::kMissing;
  }
  std::string out = regressed
                        ? fmt::format("### moetrace gate: :x: {} of {} metrics regressed\n\n", regressed,
                                      result.rows.size())
                        : fmt::format("### moetrace gate: :white_check_mark: all {} metrics pass\n\n",
                                      result.rows.size());
  out += "| metric | baseline | current | delta | threshold | verdict |\n";
  out += "|---|---:|---:|---:|---|---|\n";
  for (const GateRow& r : result.rows) {
    std::string verdict(GateVerdictName(r.verdict));
    if (r.verdict == GateVerdict::kRegressed || r.verdict == GateVerdict::kMissing) {
      verdict = "**" + verdict + "**";
    }
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", cell(r.threshold.path),
                       ValueOrDash(r, r.baseline), ValueOrDash(r, r.current), cell(DeltaText(r)),
                       cell(ThresholdText(r)), verdict);
  }
  if (result.time_regressed()) out += GateOperatorsMarkdown(result.diff);
  return out;
}

}  // namespace moetrace
