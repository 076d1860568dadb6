#include "analyzer/diff/diff_text.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "analyzer/gate.h"
#include "analyzer/ops/ops_summary.h"

namespace moetrace {
namespace {

using analysis::Diff;
using analysis::DiffValue;
using Rows = std::vector<std::vector<std::string>>;

// Columns padded to their widest cell, two spaces apart (the gate's table).
std::string Columns(const Rows& rows, std::string_view indent) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    out += indent;
    for (size_t i = 0; i < row.size(); ++i) {
      out += row[i];
      if (i + 1 < row.size()) out += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out += '\n';
  }
  return out;
}

// A GFM table cell: pipes and newlines would break the table, `<` could open
// a tag (operator names come from the trace).
std::string Cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '<') out += "&lt;";
    else if (c == '&') out += "&amp;";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

std::string Markdown(const DiffSection& s) {
  const Rows& rows = s.rows;
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    out += '|';
    for (const std::string& c : rows[r]) out += " " + (r == 0 ? c : Cell(c)) + " |";
    out += '\n';
    if (r == 0) {
      out += '|';
      for (size_t i = 0; i < rows[0].size(); ++i) out += s.Numeric(i) ? "---:|" : "---|";
      out += '\n';
    }
  }
  return out;
}

std::string Relative(const DiffValue& v) {
  return v.has_relative() ? fmt::format(" ({:+.1f}%)", 100 * v.relative()) : "";
}


std::string More(int shown, int total) {
  return total > shown ? fmt::format("{} more in --json", total - shown) : "";
}

}  // namespace

std::vector<DiffSection> DiffSections(const Diff& d) {
  std::vector<DiffSection> out;
  {
    DiffSection s{"What explains the step-time change (per rank and step; shares sum to 100%)", {}, 1, ""};
    s.rows.push_back({"component", "A", "B", "delta", "share"});
    for (const DiffValue& v : d.breakdown()) {
      s.rows.push_back({v.name(), DiffMs(v.a()), DiffMs(v.b()), DiffDeltaText(v, true), DiffShare(v)});
    }
    out.push_back(std::move(s));
  }
  {
    DiffSection s{"Summary", {}, 1, ""};
    s.rows.push_back({"metric", "A", "B", "delta"});
    for (const DiffValue& v : d.summary()) {
      s.rows.push_back({v.name(), DiffValueText(v.name(), v.has_a(), v.a()),
                        DiffValueText(v.name(), v.has_b(), v.b()), DiffDeltaText(v, false)});
    }
    out.push_back(std::move(s));
  }
  if (d.steps_size() > 0) {
    DiffSection s{"Breakdown per step (mean over the ranks having the step on both sides)", {}, 1, ""};
    s.rows.push_back({"step", "ranks", "A", "B", "delta", "largest change", "its share"});
    const int n = std::min(d.steps_size(), kDiffRows);
    for (int i = 0; i < n; ++i) {
      const auto& st = d.steps(i);
      const DiffValue& span = st.components(0);
      const DiffValue* top = st.components_size() > 1 ? &st.components(1) : nullptr;
      s.rows.push_back({std::to_string(st.step()), std::to_string(st.ranks()), DiffMs(span.a()),
                        DiffMs(span.b()), DiffDeltaText(span, true),
                        top && top->delta() != 0 ? top->name() + " " + DiffSignedMs(top->delta()) : "-",
                        top && top->delta() != 0 ? DiffShare(*top) : "-"});
    }
    s.note = More(n, d.steps_size());
    out.push_back(std::move(s));
  }
  if (d.classes_size() > 0) {
    DiffSection s{"Operator classes (device time per rank and step)", {}, 1, "", true};
    s.rows.push_back({"class", "A", "B", "delta", "share", "side"});
    for (const auto& c : d.classes()) {
      s.rows.push_back({c.name(), DiffSideCell(c.side(), 'a', DiffMs(c.ns_a())),
                        DiffSideCell(c.side(), 'b', DiffMs(c.ns_b())), DiffSignedMs(c.delta_ns()),
                        DiffShare(c.has_share_of_step_change(), c.share_of_step_change()), c.side()});
    }
    s.note = "Device time is summed over ops, not a union: shares need not sum to 100%.";
    out.push_back(std::move(s));
  }
  if (d.top_size() > 0) {
    DiffSection s{"Top operators (device time per rank and step, largest change first)", {}, 2, "", true};
    s.rows.push_back({"operator", "class", "count A", "count B", "A", "B", "delta", "share", "side"});
    const int n = std::min(d.top_size(), kDiffRows);
    for (int i = 0; i < n; ++i) {
      const auto& o = d.top(i);
      s.rows.push_back({DiffOpLabel(o), o.op_class(), DiffSideCell(o.side(), 'a', std::to_string(o.count_a())),
                        DiffSideCell(o.side(), 'b', std::to_string(o.count_b())),
                        DiffSideCell(o.side(), 'a', DiffMs(o.ns_a())),
                        DiffSideCell(o.side(), 'b', DiffMs(o.ns_b())),
                        DiffSignedMs(o.delta_ns()),
                        DiffShare(o.has_share_of_step_change(), o.share_of_step_change()), o.side()});
    }
    s.note = More(n, d.top_size());
    out.push_back(std::move(s));
  }
  if (d.dispatch_size() > 0) {
    DiffSection s{"Dispatch by operator type (host time per rank and step, largest host-bound change first)",
              {}, 1, "", true};
    s.rows.push_back({"operator", "launches A", "launches B", "host A", "host B", "host-bound A",
                      "host-bound B", "delta host-bound", "share", "side"});
    const int n = std::min(d.dispatch_size(), kDiffRows);
    for (int i = 0; i < n; ++i) {
      const auto& o = d.dispatch(i);
      auto a = [&](const std::string& t) { return DiffSideCell(o.side(), 'a', t); };
      auto b = [&](const std::string& t) { return DiffSideCell(o.side(), 'b', t); };
      s.rows.push_back({o.name(), a(std::to_string(o.count_a())), b(std::to_string(o.count_b())),
                        a(DiffMs(o.host_ns_a())), b(DiffMs(o.host_ns_b())), a(DiffMs(o.host_bound_ns_a())),
                        b(DiffMs(o.host_bound_ns_b())), DiffSignedMs(o.delta_host_bound_ns()),
                        DiffShare(o.has_share_of_step_change(), o.share_of_step_change()), o.side()});
    }
    s.note = More(n, d.dispatch_size());
    out.push_back(std::move(s));
  }
  {
    DiffSection s{"Ranks (matched by rank id; mean step, largest change first)", {}, 1, ""};
    s.rows.push_back({"rank", "A", "B", "delta"});
    const int n = std::min(d.ranks_size(), kDiffRows);
    for (int i = 0; i < n; ++i) {
      const auto& r = d.ranks(i);
      s.rows.push_back({std::to_string(r.rank()), DiffMs(r.step_ns_a()), DiffMs(r.step_ns_b()),
                        DiffSignedMs(r.delta_ns())});
    }
    auto list = [](const google::protobuf::RepeatedField<int32_t>& ids) {
      if (ids.empty()) return std::string("none");
      std::string t;
      for (int i = 0; i < ids.size() && i < 20; ++i) t += (i ? ", " : "") + std::to_string(ids[i]);
      if (ids.size() > 20) t += fmt::format(", ... ({} in all)", ids.size());
      return t;
    };
    s.note = fmt::format("ranks on both sides: {}{}; only in A: {}; only in B: {}", d.ranks_size(),
                         d.ranks_size() > n ? fmt::format(" ({} more in --json)", d.ranks_size() - n) : "",
                         list(d.ranks_only_a()), list(d.ranks_only_b()));
    out.push_back(std::move(s));
  }
  return out;
}

std::string DiffHeader(const Diff& d) {
  return fmt::format("A = {} ({}, {} ranks), B = {} ({}, {} ranks)", d.a(),
                     d.source_a().empty() ? "?" : d.source_a(), d.ranks_a(), d.b(),
                     d.source_b().empty() ? "?" : d.source_b(), d.ranks_b());
}

std::string DiffStepLine(const Diff& d) {
  std::string rel;
  if (d.step_ns_a() != 0) rel = fmt::format(" ({:+.2f}%)", 100 * d.step_change_ns() / d.step_ns_a());
  return fmt::format("step time per rank and step: A {}, B {}, delta {}{}", DiffMs(d.step_ns_a()),
                     DiffMs(d.step_ns_b()), DiffSignedMs(d.step_change_ns()), rel);
}


std::string DiffMs(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }

std::string DiffSignedMs(double ns) {
  // -0.000 reads as a change; anything that rounds to 0 prints as +0.000.
  const double ms = std::round(ns / 1e3) / 1e3;
  return fmt::format("{}{:.3f} ms", ms < 0 ? "-" : "+", std::abs(ms));
}

std::string DiffShare(bool has, double share) {
  if (!has) return "-";
  // A share that rounds to zero prints as 0.0%, never -0.0%.
  const double pct = std::round(1000 * share) / 10;
  return fmt::format("{:.1f}%", pct == 0 ? 0.0 : pct);
}
std::string DiffShare(const DiffValue& v) {
  return DiffShare(v.has_share_of_step_change(), v.share_of_step_change());
}

std::string DiffValueText(std::string_view path, bool has, double v) {
  if (!has) return "-";
  if (path == "cluster.rank_count" || path == "cluster.steps") return fmt::format("{:.0f}", v);
  return FormatMetricValue(path, v);
}

std::string DiffDeltaText(const DiffValue& v, bool time) {
  if (!v.has_delta()) return "-";
  if (time) return DiffSignedMs(v.delta()) + Relative(v);
  const std::string& p = v.name();
  const bool ratio = p.find(".ratios.") != std::string::npos || p.ends_with("unmasked_fraction") ||
                     p.ends_with(".mfu") || p.ends_with(".hfu");
  std::string s;
  if (ratio) {
    s = fmt::format("{:+.2f} pp", 100 * v.delta());
  } else if (p.ends_with("_bytes")) {
    s = fmt::format("{:+.3f} GiB", v.delta() / (1024.0 * 1024 * 1024));
  } else if (p.find("_ns") != std::string::npos) {
    s = DiffSignedMs(v.delta());
  } else {
    s = fmt::format("{:+.4g}", v.delta());
  }
  return s + Relative(v);
}

std::string DiffSideCell(const std::string& side, char which, const std::string& text) {
  const bool absent = (which == 'a' && side == "only_b") || (which == 'b' && side == "only_a");
  return absent ? "-" : text;
}

std::string DiffOpLabel(const analysis::DiffOp& op) {
  return ops::OpLabel(op.name(), op.has_shape() ? &op.shape() : nullptr);
}

std::string DiffVerdict(const Diff& d) {
  if (d.no_change()) return "no change";
  std::string s = fmt::format("B's step is {} against A's", DiffSignedMs(d.step_change_ns()));
  if (d.breakdown_size() > 0 && d.breakdown(0).has_share_of_step_change()) {
    s += fmt::format("; largest share: {} ({})", d.breakdown(0).name(), DiffShare(d.breakdown(0)));
  }
  for (const auto& o : d.dispatch()) {
    if (o.delta_host_bound_ns() > 0 && d.step_change_ns() > 0) {
      s += fmt::format("; dispatch grew most for {}", o.name());
      break;
    }
  }
  return s;
}

std::string FormatDiffTable(const Diff& d) {
  std::string out = "moetrace diff: " + DiffHeader(d) + "\n" + DiffStepLine(d) + "\n";
  for (const DiffSection& s : DiffSections(d)) {
    out += "\n" + s.title + ":\n" + Columns(s.rows, "  ");
    if (!s.note.empty()) out += "  " + s.note + "\n";
  }
  for (const std::string& n : d.notes()) out += "note: " + n + "\n";
  out += "\ndiff: " + DiffVerdict(d) + "\n";
  return out;
}

std::string DiffMarkdown(const Diff& d) {
  std::string out = "### moetrace diff: " + Cell(DiffVerdict(d)) + "\n\n" + Cell(DiffHeader(d)) + "\n\n" +
                    DiffStepLine(d) + "\n";
  for (const DiffSection& s : DiffSections(d)) {
    out += "\n#### " + s.title + "\n\n" + Markdown(s);
    if (!s.note.empty()) out += "\n" + Cell(s.note) + "\n";
  }
  if (d.notes_size() > 0) out += "\n";
  for (const std::string& n : d.notes()) out += "- " + Cell(n) + "\n";
  return out;
}

}  // namespace moetrace
