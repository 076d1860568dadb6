#include "analyzer/diff/gate_operators.h"

#include <fmt/core.h>

#include <vector>

#include "analyzer/diff/diff_text.h"

namespace moetrace {
namespace {

using analysis::Diff;

// Grown only: the gate explains a regression, and diff.top is sorted by
// |delta|, so the largest growths come first.
std::vector<const analysis::DiffOp*> GrownOps(const Diff& d) {
  std::vector<const analysis::DiffOp*> out;
  for (const auto& o : d.top()) {
    if (o.delta_ns() > 0 && int(out.size()) < kGateOperatorRows) out.push_back(&o);
  }
  return out;
}

std::vector<const analysis::DiffDispatch*> GrownDispatch(const Diff& d) {
  std::vector<const analysis::DiffDispatch*> out;
  for (const auto& o : d.dispatch()) {
    if (o.delta_host_bound_ns() > 0 && int(out.size()) < kGateOperatorRows) out.push_back(&o);
  }
  return out;
}

bool HasOperators(const Diff& d) { return d.top_size() + d.classes_size() + d.dispatch_size() > 0; }

// Inline code in a table cell: backticks and pipes of a trace's name must not end it.
std::string Code(const std::string& s) {
  std::string out = "`";
  for (char c : s) {
    if (c == '`') out += '\'';
    else if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out + "`";
}

}  // namespace

bool IsTimeMetric(std::string_view path) {
  if (path.ends_with("_bytes") || path.find("expert_imbalance") != std::string_view::npos) return false;
  return path.find("_ns") != std::string_view::npos || path.find(".ratios.") != std::string_view::npos ||
         path.ends_with("unmasked_fraction") || path.ends_with(".mfu") || path.ends_with(".hfu") ||
         path.ends_with("tokens_per_s");
}

std::string GateOperatorsMarkdown(const Diff& d) {
  if (!HasOperators(d)) return "";
  std::string out = fmt::format(
      "\n#### What got slower: top operator deltas (baseline → current)\n\n"
      "Device time per rank and step from `cluster.operators`; share = delta / the step-time "
      "change ({} per rank and step).\n\n",
      DiffSignedMs(d.step_change_ns()));
  const auto ops = GrownOps(d);
  if (ops.empty()) {
    out += "No operator's device time grew.\n";
  } else {
    out += "| operator | class | baseline | current | delta | share of step change |\n"
           "|---|---|---:|---:|---:|---:|\n";
    for (const auto* o : ops) {
      out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", Code(DiffOpLabel(*o)), o->op_class(),
                         DiffSideCell(o->side(), 'a', DiffMs(o->ns_a())),
                         DiffSideCell(o->side(), 'b', DiffMs(o->ns_b())), DiffSignedMs(o->delta_ns()),
                         DiffShare(o->has_share_of_step_change(), o->share_of_step_change()));
    }
  }
  const auto dispatch = GrownDispatch(d);
  if (!dispatch.empty()) {
    out += "\n| dispatched operator | launches | host-bound baseline | host-bound current | delta | share of step change |\n"
           "|---|---:|---:|---:|---:|---:|\n";
    for (const auto* o : dispatch) {
      out += fmt::format("| {} | {} → {} | {} | {} | {} | {} |\n", Code(o->name()),
                         DiffSideCell(o->side(), 'a', std::to_string(o->count_a())),
                         DiffSideCell(o->side(), 'b', std::to_string(o->count_b())),
                         DiffSideCell(o->side(), 'a', DiffMs(o->host_bound_ns_a())),
                         DiffSideCell(o->side(), 'b', DiffMs(o->host_bound_ns_b())),
                         DiffSignedMs(o->delta_host_bound_ns()),
                         DiffShare(o->has_share_of_step_change(), o->share_of_step_change()));
    }
  }
  return out;
}

std::string GateOperatorsText(const Diff& d) {
  if (!HasOperators(d)) return "";
  std::string out = "slower operators (device time per rank and step): ";
  const auto ops = GrownOps(d);
  if (ops.empty()) out += "none";
  for (size_t i = 0; i < ops.size(); ++i) {
    out += fmt::format("{}{} {} ({} of the step change)", i ? "; " : "", DiffOpLabel(*ops[i]),
                       DiffSignedMs(ops[i]->delta_ns()),
                       DiffShare(ops[i]->has_share_of_step_change(), ops[i]->share_of_step_change()));
  }
  const auto dispatch = GrownDispatch(d);
  if (!dispatch.empty()) {
    out += ". Host-bound dispatch grew for: ";
    for (size_t i = 0; i < dispatch.size(); ++i) {
      out += fmt::format("{}{} {}", i ? "; " : "", dispatch[i]->name(),
                         DiffSignedMs(dispatch[i]->delta_host_bound_ns()));
    }
  }
  return out;
}

}  // namespace moetrace
