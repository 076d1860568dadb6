// The Markdown report: the HTML report's findings as GFM tables, capped so
// it fits a pull-request comment (at most ~12 rows per table).
#include <fmt/core.h>

#include <algorithm>
#include <cctype>

#include "analyzer/human_number.h"
#include "reports/cluster_output_rows.h"
#include "reports/findings.h"
#include "reports/report.h"
#include "reports/ops_rows.h"
#include "reports/rl_rows.h"

namespace moetrace {
namespace {

// Text from a trace inside a table cell: no pipes, no raw HTML, one line.
// Only what Markdown would read as markup is escaped, so that the source
// stays readable as plain text (a title's "38.9 % -> 44.4 %" keeps its
// arrow): '<' before what could open a tag, comment or autolink, '&' before
// what could spell an entity. A '>' is markup only at the start of a line,
// where no cell is.
std::string Cell(std::string_view s) {
  // Tag names, autolink schemes and entity names all start with a letter.
  auto alpha = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const char next = i + 1 < s.size() ? s[i + 1] : '\0';
    switch (c) {
      case '|': out += "\\|"; break;
      case '<': out += alpha(next) || next == '/' || next == '!' || next == '?' ? "&lt;" : "<"; break;
      case '&': out += alpha(next) || next == '#' ? "&amp;" : "&"; break;
      case '`': out += "'"; break;
      case '\n': case '\r': out += ' '; break;
      default: out += c;
    }
  }
  return out;
}

const char* Mark(Verdict v) {
  switch (v) {
    case Verdict::kGood: return ":green_circle:";
    case Verdict::kWarn: return ":yellow_circle:";
    case Verdict::kBad: return ":red_circle:";
    case Verdict::kInfo: return "";
  }
  return "";
}

}  // namespace

std::string RenderMarkdownReport(const ReportData& rd) {
  const analysis::Analysis& a = rd.analysis;
  const Findings f = BuildFindings(a, 12);
  std::string s = fmt::format("## moetrace report: {}\n\n", Cell(f.title));
  if (f.headlines.empty() && f.bars.empty() && rd.proposals.empty() && !a.has_cluster_output() &&
      !a.rl().present()) {
    s += "Nothing to report: the analysis found no step with device activity.\n\n";
  }
  // What to change comes first, with its predicted gain.
  if (!rd.proposals.empty()) {
    s += "### Top proposals (moetrace advise, best predicted gain first)\n\n"
         "| # | predicted step time | proposal | setting |\n|---:|---:|---|---|\n";
    for (size_t i = 0; i < rd.proposals.size() && i < 8; ++i) {
      const advise::Proposal& p = rd.proposals[i];
      s += fmt::format("| {} | {} | {} | `{}` |\n", i + 1,
                       p.predicted ? fmt::format("{:+.1f} %", -100 * p.gain) : "not predicted", Cell(p.title),
                       Cell(p.knob));
    }
    if (rd.proposals.size() > 8) s += fmt::format("\n{} more not shown.\n", rd.proposals.size() - 8);
    s += "\n";
  } else if (rd.advised) {
    s += "The advisor found nothing to propose.\n\n";
  }
  if (!rd.not_proposed.empty()) {
    s += "Tried and not proposed: ";
    for (size_t i = 0; i < rd.not_proposed.size() && i < 5; ++i) {
      s += fmt::format("{}{} ({})", i ? "; " : "", Cell(rd.not_proposed[i].title), Cell(rd.not_proposed[i].not_proposed));
    }
    if (rd.not_proposed.size() > 5) s += fmt::format("; {} more", rd.not_proposed.size() - 5);
    s += ".\n\n";
  }
  if (!rd.advice_note.empty()) s += "> " + Cell(rd.advice_note) + "\n\n";
  if (!f.headlines.empty()) {
    s += "| | metric | value | detail |\n|---|---|---:|---|\n";
    for (const Headline& h : f.headlines) {
      s += fmt::format("| {} | {} | {} | {} |\n", Mark(h.verdict), h.label, h.value, Cell(h.detail));
    }
    s += "\n";
  }
  if (a.rl().present()) {
    // Four iterations fit a PR comment: the first and the steady state.
    const RlRows rl = BuildRlRows(a.rl(), 4);
    s += "### RL post-training\n\n| figure | value | |\n|---|---:|---|\n";
    for (const RlFigure& x : rl.figures) s += fmt::format("| {} | {} | {} |\n", x.label, Cell(x.value), x.detail);
    s += "\n";
    for (const RlIterationRows& it : rl.iterations) {
      s += fmt::format("Iteration {}: {}.\n\n", it.iteration, it.summary);
      for (const char* h : RlIterationRows::kHeader) s += fmt::format("| {} ", h);
      s += "|\n|---|---|---:|---:|---:|---:|---:|\n";
      for (const auto& p : it.phases) {
        for (const std::string& c : p) s += fmt::format("| {} ", Cell(c));
        s += "|\n";
      }
      s += "\n";
    }
    if (rl.more_iterations > 0) {
      s += fmt::format("{} more iterations in `rl.iterations` of `analyze --json`.\n\n", rl.more_iterations);
    }
  }
  if (!f.bars.empty()) {
    // The slowest bars first.
    std::vector<RankBar> bars = f.bars;
    std::stable_sort(bars.begin(), bars.end(), [](const RankBar& x, const RankBar& y) { return x.span > y.span; });
    s += fmt::format("### Step breakdown (mean per step{}, slowest first)\n\n", f.grouped ? ", rank groups" : "");
    s += "| ranks | span | compute | exposed comm | exposed copy | host-bound | other free |\n"
         "|---|---:|---:|---:|---:|---:|---:|\n";
    for (size_t i = 0; i < bars.size() && i < 12; ++i) {
      const RankBar& b = bars[i];
      s += fmt::format("| {}{} | {} | {} | {} | {} | {} | {} |\n", b.label, b.outlier ? " (outlier)" : "",
                       FormatDuration(b.span), FormatDuration(b.compute), FormatDuration(b.comm_exposed), FormatDuration(b.copy_exposed),
                       FormatDuration(b.host_bound), FormatDuration(b.other_free));
    }
    if (bars.size() > 12) s += fmt::format("\n{} more not shown.\n", bars.size() - 12);
    s += "\n";
  }
  if (!f.classes.empty()) {
    s += "### Communication by class (per step)\n\n| class | total | exposed | unmasked |\n|---|---:|---:|---:|\n";
    for (const ClassRow& c : f.classes) {
      s += fmt::format("| {} | {} | {} | {} |\n", c.name, FormatDuration(c.total_ns), FormatDuration(c.exposed_ns),
                       FormatPct(c.unmasked));
    }
    s += "\n";
  }
  const OpsRows ops = BuildOpsRows(a, 10, 5);
  if (!ops.classes.empty()) {
    s += "### Operators (device time per rank and step)\n\n" + Cell(ops.note) + "\n\n";
    auto table = [&](const auto& header, const auto& rows, const char* align) {
      for (const char* h : header) s += fmt::format("| {} ", h);
      s += "|\n" + std::string(align) + "\n";
      for (const auto& r : rows) {
        for (const std::string& c : r) s += fmt::format("| {} ", Cell(c));
        s += "|\n";
      }
      s += "\n";
    };
    table(OpsRows::kClassHeader, ops.classes, "|---|---:|---:|---:|");
    table(OpsRows::kTopHeader, ops.top, "|---|---|---:|---:|---:|---:|---:|---:|");
    if (!ops.dispatch.empty()) table(OpsRows::kDispatchHeader, ops.dispatch, "|---|---:|---:|---:|---:|---:|---:|");
  }
  const auto& ei = a.cluster().expert_imbalance();
  if (ei.layers_size() > 0) {
    std::vector<const analysis::ExpertLayer*> layers;
    for (const auto& l : ei.layers()) layers.push_back(&l);
    std::stable_sort(layers.begin(), layers.end(), [](const auto* x, const auto* y) {
      return (x->has_max_vio() ? x->max_vio() : x->ep_max_vio()) > (y->has_max_vio() ? y->max_vio() : y->ep_max_vio());
    });
    s += fmt::format("### Expert load ({}; worst layers)\n\n| layer | MaxVio | EP MaxVio | hot experts (tokens) |\n"
                     "|---:|---:|---:|---|\n", Cell(ei.source()));
    for (size_t i = 0; i < layers.size() && i < 5; ++i) {
      const auto& l = *layers[i];
      std::string hot;
      for (const auto& h : l.hot_experts()) {
        if (!hot.empty()) hot += ", ";
        hot += fmt::format("#{} ({})", h.expert(), HumanCount(double(h.tokens())));
      }
      s += fmt::format("| {} | {} | {:.3f} | {} |\n", l.layer(),
                       l.has_max_vio() ? fmt::format("{:.3f}", l.max_vio()) : "-", l.ep_max_vio(),
                       hot.empty() ? "-" : hot);
    }
    s += "\n";
  }
  const auto& c = a.cluster();
  if (c.memory().peak_bytes() > 0) {
    s += fmt::format("### Memory\n\nPeak {} on rank {}", FormatBytes(c.memory().peak_bytes()), c.memory().rank());
    for (const auto& r : a.ranks()) {
      if (r.rank() != c.memory().rank()) continue;
      if (r.memory().has_headroom_bytes()) s += fmt::format(", headroom {}", FormatBytes(r.memory().headroom_bytes()));
      std::vector<std::pair<std::string, int64_t>> cats(r.memory().at_peak().begin(), r.memory().at_peak().end());
      std::sort(cats.begin(), cats.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
      if (!cats.empty()) {
        s += ". At the peak: ";
        for (size_t i = 0; i < cats.size(); ++i) {
          s += fmt::format("{}{} {}", i ? ", " : "", Cell(cats[i].first), FormatBytes(cats[i].second));
        }
      }
    }
    s += ".\n\n";
  }
  if (!f.slow_ranks.empty() || c.waited_for_size() > 0) {
    s += "### Outlier ranks (slow or fast)\n\n";
    if (!f.slow_ranks.empty()) {
      s += "| ranks | metric | value / step | mean | deviation |\n|---|---|---:|---:|---:|\n";
      for (size_t i = 0; i < f.slow_groups.size() && i < 10; ++i) {
        const OutlierGroup& g = f.slow_groups[i];
        s += fmt::format("| {} | {} | {} | {} | {} |\n", OutlierRanks(g), Cell(g.metric), FormatDuration(g.value),
                         FormatDuration(g.mean), OutlierDeviation(g));
      }
      if (f.slow_groups.size() > 10) s += fmt::format("\n{} more lines not shown.\n", f.slow_groups.size() - 10);
      s += "\n";
    }
    if (f.minor_slow_ranks > 0) {
      s += fmt::format("{} smaller deviation{} (under 1 % of the step) only in `cluster.slow_ranks` of "
                       "`analyze --json`.\n\n", f.minor_slow_ranks, f.minor_slow_ranks == 1 ? "" : "s");
    }
    if (c.waited_for_size() > 0) {
      const auto& w = c.waited_for(0);
      s += fmt::format("Collectives waited most for rank {} ({} in {} collectives).\n\n", w.rank(),
                       FormatDuration(w.caused_wait_ns()), w.collectives());
    }
  }
  const ClusterOutputRows co = BuildClusterOutputRows(a, 12);
  if (!co.source.empty()) {
    s += fmt::format("### Cluster output (msprof-analyze)\n\nThe profiler's figures from `{}` "
                     "(cluster_step_trace_time.csv, mean per step), slowest first; slowest rank and link "
                     "shares are moetrace's.\n\n",
                     Cell(co.source));
    std::string rule = "|";
    for (const char* h : ClusterOutputRows::kRankHeader) {
      s += fmt::format("| {} ", h);
      rule += rule.size() == 1 ? "---|" : "---:|";
    }
    s += "|\n" + rule + "\n";
    for (size_t i = 0; i < co.ranks.size(); ++i) {
      for (size_t k = 0; k < co.ranks[i].size(); ++k) {
        s += fmt::format("| {}{} ", Cell(co.ranks[i][k]), k == 0 && co.slowest[i] ? " (slowest)" : "");
      }
      s += "|\n";
    }
    if (!co.slowest_rank.empty()) s += "\n" + co.slowest_rank + "\n";
    if (!co.links.empty()) {
      s += "\nSlowest links (share of the nominal link):\n\n";
      for (const char* h : ClusterOutputRows::kLinkHeader) s += fmt::format("| {} ", h);
      s += "|\n|---|---|---|---:|---:|---:|---|\n";
      for (const auto& l : co.links) {
        for (const std::string& c : l) s += fmt::format("| {} ", Cell(c));
        s += "|\n";
      }
    }
    s += "\n";
  }
  for (int i = 0; i < a.warnings_size() && i < 5; ++i) s += fmt::format("> warning: {}\n", Cell(a.warnings(i)));
  return s;
}

}  // namespace moetrace
