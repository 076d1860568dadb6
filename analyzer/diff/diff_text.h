// The terminal table and the Markdown of `moetrace diff` (analyzer/diff/README.md
// "Output"). Both show the same rows; long lists are cut to kDiffRows with a
// line saying how many more `--json` holds.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/proto/diff.pb.h"

namespace moetrace {

inline constexpr int kDiffRows = 10;

std::string FormatDiffTable(const analysis::Diff& diff);
std::string DiffMarkdown(const analysis::Diff& diff);

// One table of the diff, as every renderer shows it: rows[0] is the header;
// columns from first_numeric on are numbers (right-aligned), except the last
// when text_last (the "side" column).
struct DiffSection {
  std::string title;
  std::vector<std::vector<std::string>> rows;
  int first_numeric = 1;
  std::string note;
  bool text_last = false;
  bool Numeric(size_t column) const {
    return int(column) >= first_numeric && !(text_last && column + 1 == rows[0].size());
  }
};
std::vector<DiffSection> DiffSections(const analysis::Diff& diff);
std::string DiffHeader(const analysis::Diff& diff);    // "A = ... (source, N ranks), B = ..."
std::string DiffStepLine(const analysis::Diff& diff);  // "step time per rank and step: ..."

// Cell texts shared with the HTML (reports/diff_html.cc): a time per rank and
// step in ms ("0.082 ms"), a signed difference ("+0.068 ms"), a share ("41.9%",
// "-" when absent), a summary value in its metric's unit.
std::string DiffMs(double ns);
std::string DiffSignedMs(double ns);
std::string DiffShare(const analysis::DiffValue& v);
std::string DiffShare(bool has, double share);
std::string DiffValueText(std::string_view path, bool has, double v);
std::string DiffDeltaText(const analysis::DiffValue& v, bool time);
// A side's cell of an operator row: "-" when the operator is not in that
// side's list (its figures count as 0 in the delta), else `text`.
std::string DiffSideCell(const std::string& side, char which, const std::string& text);
// "name", or "name [shape]" (the shape as recorded, bracketed once).
std::string DiffOpLabel(const analysis::DiffOp& op);
// The one-line verdict: "no change" or what explains the change.
std::string DiffVerdict(const analysis::Diff& diff);

}  // namespace moetrace
