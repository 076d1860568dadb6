// The HTML report: the findings and trace extracts become a mustache data
// tree (every value a string, escaped on output), rendered with
// kainjow::mustache. The one translation unit that includes it.
#include <fmt/core.h>
#include <kainjow/mustache.hpp>

#include <algorithm>
#include <cmath>

#include "analyzer/advise/effect_text.h"
#include "analyzer/human_number.h"
#include "reports/cluster_output_rows.h"
#include "reports/findings.h"
#include "reports/report.h"
#include "reports/report_template.h"
#include "reports/ops_rows.h"
#include "reports/rl_rows.h"
#include "reports/rl_timeline.h"

namespace moetrace {
namespace {

using kainjow::mustache::data;
using kainjow::mustache::list;
using kainjow::mustache::mustache;
using kainjow::mustache::object;

std::string Num(double v) { return fmt::format("{:.1f}", v); }

data Section(const char* id, const char* name) { return object{{"id", id}, {"name", name}}; }

// Horizontal stacked bars, one per rank (group): label column then the bar.
data BreakdownData(const Findings& f) {
  double max_span = 0;
  for (const RankBar& b : f.bars) max_span = std::max(max_span, b.span);
  const double x0 = 170, width = 800;
  list bars;
  double y = 4;
  for (const RankBar& b : f.bars) {
    const std::pair<const char*, double> parts[] = {{"c-compute", b.compute},
                                                     {"c-comm", b.comm_exposed},
                                                     {"c-copy", b.copy_exposed},
                                                     {"c-host", b.host_bound},
                                                     {"c-free", b.other_free}};
    const char* names[] = {"compute", "exposed communication", "exposed copy", "host-bound", "other free"};
    list segments;
    double x = x0;
    for (int i = 0; i < 5; ++i) {
      const double w = max_span > 0 ? parts[i].second / max_span * width : 0;
      if (w <= 0) continue;
      segments.push_back(object{{"x", Num(x)},
                                {"y", Num(y)},
                                {"w", Num(std::max(w, 0.5))},
                                {"cls", parts[i].first},
                                {"title", fmt::format("{}: {} {} ({})", b.label, names[i], FormatDuration(parts[i].second),
                                                      FormatPct(b.span > 0 ? parts[i].second / b.span : 0))}});
      x += w;
    }
    data bar = object{{"label", b.label}, {"ty", Num(y + 11)}, {"tx", Num(x + 6)},
                      {"total", FormatDuration(b.span)}, {"segments", segments}};
    bar.set("outlier", data(b.outlier));
    bars.push_back(bar);
    y += 20;
  }
  data d = object{{"bars", bars}, {"height", Num(y + 4)}};
  d.set("grouped", data(f.grouped));
  return d;
}

data TimelineData(const Timeline& t) {
  const double x0 = 110, width = 960;
  const double len = static_cast<double>(std::max<TimeNs>(1, t.end - t.start));
  const char* classes[4] = {"c-compute", "c-comm", "c-copy", "c-host"};
  list lanes;
  double y = 4;
  for (int l = 0; l < 4; ++l) {
    list blocks;
    for (const Interval& iv : t.lanes[l]) {
      const double x = x0 + (iv.start - t.start) / len * width;
      const double w = std::max(0.5, (iv.end - iv.start) / len * width);
      std::string title = fmt::format("{} {}", kTimelineLaneNames[l], FormatDuration(iv.end - iv.start));
      if (!iv.label.empty()) title += ": " + iv.label;
      blocks.push_back(object{{"x", Num(x)}, {"y", Num(y)}, {"w", Num(w)}, {"cls", classes[l]}, {"title", title}});
    }
    lanes.push_back(object{{"name", kTimelineLaneNames[l]}, {"y", Num(y)}, {"ty", Num(y + 14)}, {"blocks", blocks}});
    y += 26;
  }
  list ticks;
  for (int i = 0; i <= 4; ++i) {
    ticks.push_back(object{{"x", Num(x0 + width * i / 4)},
                           {"anchor", i == 0 ? "start" : i == 4 ? "end" : "middle"},
                           {"y", Num(y + 12)},
                           {"label", FormatDuration(len * i / 4)}});
  }
  return object{{"rank", std::to_string(t.rank)},
                {"step", t.step >= 0 ? std::to_string(t.step) : std::string("-")},
                {"duration", FormatDuration(len)},
                {"height", Num(y + 18)},
                {"lanes", lanes},
                {"ticks", ticks}};
}

// Diverging colour: blue below the layer mean, white at it, red above (2x).
std::string HeatColour(double ratio) {
  const double t = std::clamp(ratio - 1.0, -1.0, 1.0);
  int r = 255, g = 255, b = 255;
  if (t > 0) {
    g = b = static_cast<int>(255 - t * 200);
  } else {
    r = g = static_cast<int>(255 + t * 170);
  }
  return fmt::format("rgb({},{},{})", r, g, b);
}

data ExpertData(const analysis::ExpertImbalance& ei, const ExpertLoads& loads) {
  data d = object{{"source", ei.source().empty() ? std::string("routing records") : ei.source()}};
  // Heat map from the trace's routing records.
  size_t experts = 0;
  for (const auto& v : loads.tokens) experts = std::max(experts, v.size());
  const size_t max_rows = 96;
  if (experts > 0) {
    const double x0 = 70, cell_w = std::clamp(1000.0 / experts, 1.0, 24.0);
    const double cell_h = loads.tokens.size() > 48 ? 6 : 14;
    list rows;
    double y = cell_h >= 12 ? 2 : 8;  // room above the first 11 px label of thin rows
    for (size_t l = 0; l < loads.tokens.size() && l < max_rows; ++l) {
      const auto& v = loads.tokens[l];
      double sum = 0;
      for (int64_t t : v) sum += static_cast<double>(t);
      const double mean = v.empty() ? 0 : sum / v.size();
      list cells;
      for (size_t e = 0; e < v.size(); ++e) {
        const double ratio = mean > 0 ? v[e] / mean : 1;
        cells.push_back(object{{"x", Num(x0 + e * cell_w)}, {"y", Num(y)}, {"w", Num(cell_w)}, {"h", Num(cell_h)},
                               {"fill", HeatColour(ratio)},
                               {"title", fmt::format("layer {} expert {}: {} tokens ({:.2f}x mean)",
                                                     loads.layers[l], e, HumanCount(double(v[e])), ratio)}});
      }
      data row = object{{"layer", std::to_string(loads.layers[l])}, {"ty", Num(y + cell_h - 2)}, {"cells", cells}};
      // 11 px labels on 6 px rows would overprint: label every third row
      // then (each row's cells still name their layer on hover).
      row.set("labelled", data(cell_h >= 12 || l % 3 == 0));
      rows.push_back(row);
      y += cell_h;
    }
    d.set("heatmap", object{{"rows", rows}, {"width", Num(x0 + experts * cell_w + 4)}, {"height", Num(y + 2)}});
  }
  // The layers table: the worst layers first, at most 16.
  std::vector<const analysis::ExpertLayer*> layers;
  for (const auto& l : ei.layers()) layers.push_back(&l);
  std::stable_sort(layers.begin(), layers.end(), [](const auto* a, const auto* b) {
    return (a->has_max_vio() ? a->max_vio() : a->ep_max_vio()) > (b->has_max_vio() ? b->max_vio() : b->ep_max_vio());
  });
  list rows;
  for (size_t i = 0; i < layers.size() && i < 16; ++i) {
    const auto& l = *layers[i];
    std::string hot;
    for (const auto& h : l.hot_experts()) {
      if (!hot.empty()) hot += ", ";
      hot += fmt::format("#{} ({})", h.expert(), HumanCount(double(h.tokens())));
    }
    rows.push_back(object{{"layer", std::to_string(l.layer())},
                          {"max_vio", l.has_max_vio() ? fmt::format("{:.3f}", l.max_vio()) : std::string("-")},
                          {"ep_max_vio", fmt::format("{:.3f}", l.ep_max_vio())},
                          {"cv", l.has_cv() ? fmt::format("{:.3f}", l.cv()) : std::string("-")},
                          {"hot", hot.empty() ? std::string("-") : hot}});
  }
  d.set("layers", rows);
  d.set("has_more_layers", data(layers.size() > 16));
  d.set("more_layers", fmt::format("{} more layers not shown.", layers.size() > 16 ? layers.size() - 16 : 0));
  return d;
}

std::string Points(const std::vector<std::pair<TimeNs, double>>& s, TimeNs t0, TimeNs t1, double ymax) {
  // Each sample holds until the next one: a step line.
  std::string out;
  const double len = static_cast<double>(std::max<TimeNs>(1, t1 - t0));
  auto X = [&](TimeNs t) { return 60 + (t - t0) / len * 1010; };
  auto Y = [&](double v) { return 210 - v / ymax * 200; };
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0) out += fmt::format("{:.1f},{:.1f} ", X(s[i].first), Y(s[i - 1].second));
    out += fmt::format("{:.1f},{:.1f} ", X(s[i].first), Y(s[i].second));
  }
  if (!s.empty()) out += fmt::format("{:.1f},{:.1f}", X(t1), Y(s.back().second));
  return out;
}

data MemoryData(const analysis::Analysis& a, const std::optional<MemorySeries>& series) {
  const auto& cm = a.cluster().memory();
  const analysis::Memory* rm = nullptr;
  for (const auto& r : a.ranks()) {
    if (r.rank() == cm.rank()) rm = &r.memory();
  }
  data d = object{{"peak", FormatBytes(cm.peak_bytes())}, {"rank", std::to_string(cm.rank())}};
  d.set("has_headroom", data(rm && rm->has_headroom_bytes()));
  d.set("headroom", rm && rm->has_headroom_bytes() ? FormatBytes(rm->headroom_bytes()) : std::string());
  if (series && (!series->allocated.empty() || !series->reserved.empty())) {
    TimeNs t0 = INT64_MAX, t1 = INT64_MIN;
    double ymax = 1, peak = -1;
    TimeNs peak_t = 0;
    for (const auto* s : {&series->allocated, &series->reserved}) {
      for (const auto& [t, v] : *s) {
        t0 = std::min(t0, t);
        t1 = std::max(t1, t);
        ymax = std::max(ymax, v);
      }
    }
    for (const auto& [t, v] : series->allocated) {
      if (v > peak) { peak = v; peak_t = t; }
    }
    if (peak < 0) {
      for (const auto& [t, v] : series->reserved) {
        if (v > peak) { peak = v; peak_t = t; }
      }
    }
    if (t1 <= t0) t1 = t0 + 1;
    const double px = 60 + (peak_t - t0) / double(t1 - t0) * 1010, py = 210 - peak / ymax * 200;
    data chart = object{{"allocated", Points(series->allocated, t0, t1, ymax)},
                        {"reserved", Points(series->reserved, t0, t1, ymax)},
                        {"peak_x", Num(px)}, {"peak_y", Num(py)},
                        {"peak_tx", Num(std::min(px + 8, 960.0))}, {"peak_ty", Num(std::max(py - 6, 22.0))},
                        {"peak", FormatBytes(peak)}, {"ymax", FormatBytes(ymax)},
                        {"t0", "0 ms"}, {"t1", FormatDuration(t1 - t0)}};
    chart.set("has_allocated", data(!series->allocated.empty()));
    chart.set("has_reserved", data(!series->reserved.empty()));
    d.set("chart", chart);
  }
  list at_peak;
  if (rm) {
    std::vector<std::pair<std::string, int64_t>> cats(rm->at_peak().begin(), rm->at_peak().end());
    std::sort(cats.begin(), cats.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
    int64_t total = 0;
    for (const auto& c : cats) total += c.second;
    for (const auto& [name, bytes] : cats) {
      at_peak.push_back(object{{"name", name}, {"bytes", FormatBytes(bytes)},
                               {"share", FormatPct(total > 0 ? bytes / double(total) : 0)}});
    }
    d.set("has_at_peak", data(!cats.empty()));
  } else {
    d.set("has_at_peak", data(false));
  }
  d.set("at_peak", at_peak);
  return d;
}

data SlowData(const analysis::Cluster& c, const Findings& f) {
  list slow;
  for (size_t i = 0; i < f.slow_groups.size() && i < 32; ++i) {
    const OutlierGroup& g = f.slow_groups[i];
    slow.push_back(object{{"rank", OutlierRanks(g)}, {"metric", g.metric},
                          {"value", FormatDuration(g.value)}, {"mean", FormatDuration(g.mean)},
                          {"deviation", OutlierDeviation(g)}});
  }
  list waited;
  for (int i = 0; i < c.waited_for_size() && i < 10; ++i) {
    const auto& w = c.waited_for(i);
    waited.push_back(object{{"rank", std::to_string(w.rank())}, {"caused", FormatDuration(w.caused_wait_ns())},
                            {"collectives", std::to_string(w.collectives())}});
  }
  list waits;
  for (int i = 0; i < c.collective_waits_size() && i < 10; ++i) {
    const auto& w = c.collective_waits(i);
    waits.push_back(object{{"name", w.name()}, {"group", w.group()}, {"last_rank", std::to_string(w.last_rank())},
                           {"mean_wait", FormatDuration(w.mean_wait_ns())}, {"description", w.description()}});
  }
  data d = object{{"slow_ranks", slow}, {"waited_for", waited}, {"waits", waits}};
  d.set("has_slow_ranks", data(!f.slow_ranks.empty()));
  d.set("has_minor", data(f.minor_slow_ranks > 0 || f.slow_groups.size() > 32));
  std::string minor;
  if (f.slow_groups.size() > 32) minor = fmt::format("{} more lines not shown. ", f.slow_groups.size() - 32);
  if (f.minor_slow_ranks > 0) {
    minor += fmt::format("{} smaller deviation{} (under 1 % of the step) in cluster.slow_ranks of analyze --json.",
                         f.minor_slow_ranks, f.minor_slow_ranks == 1 ? "" : "s");
  }
  d.set("minor", minor);
  d.set("has_waited_for", data(c.waited_for_size() > 0));
  d.set("has_waits", data(c.collective_waits_size() > 0));
  return d;
}

// msprof-analyze's cluster output: the profiler's per-rank breakdown and
// the slowest links.
data ClusterOutputData(const ClusterOutputRows& rows) {
  list header;
  for (const char* h : ClusterOutputRows::kRankHeader) header.push_back(object{{"text", h}});
  list ranks;
  for (size_t i = 0; i < rows.ranks.size(); ++i) {
    list cells;
    for (size_t k = 1; k < rows.ranks[i].size(); ++k) cells.push_back(object{{"text", rows.ranks[i][k]}});
    data row = object{{"who", rows.ranks[i][0]}, {"cells", cells}};
    row.set("slowest", data(rows.slowest[i]));
    ranks.push_back(row);
  }
  list link_header;
  for (const char* h : ClusterOutputRows::kLinkHeader) link_header.push_back(object{{"text", h}});
  list links;
  for (const auto& l : rows.links) {
    list cells;
    for (const std::string& c : l) cells.push_back(object{{"text", c}});
    links.push_back(object{{"cells", cells}});
  }
  list groups;
  for (const std::string& g : rows.groups) groups.push_back(object{{"text", g}});
  data d = object{{"source", rows.source}, {"header", header}, {"ranks", ranks}, {"slowest_rank", rows.slowest_rank},
                  {"link_header", link_header}, {"links", links}, {"groups", groups}};
  d.set("has_links", data(!rows.links.empty()));
  d.set("has_groups", data(!rows.groups.empty()));
  return d;
}

// RL post-training: the job figures, the phase timeline per role, a
// table per iteration.
data RlData(const analysis::Rl& rl) {
  const RlRows rows = BuildRlRows(rl, 16);
  list figures;
  for (const RlFigure& f : rows.figures) {
    figures.push_back(object{{"label", f.label}, {"value", f.value}, {"detail", f.detail}});
  }
  list header;
  for (const char* h : RlIterationRows::kHeader) header.push_back(object{{"text", h}});
  list iterations;
  for (const RlIterationRows& it : rows.iterations) {
    list phases;
    for (const auto& p : it.phases) {
      list cells;
      for (size_t k = 2; k < p.size(); ++k) cells.push_back(object{{"text", p[k]}});
      phases.push_back(object{{"task", p[0]}, {"role", p[1]}, {"cells", cells}});
    }
    iterations.push_back(object{{"n", std::to_string(it.iteration)}, {"summary", it.summary}, {"phases", phases}});
  }
  data d = object{{"figures", figures}, {"header", header}, {"iterations", iterations}};
  d.set("has_more", data(rows.more_iterations > 0));
  d.set("more", fmt::format("{} more iterations in rl.iterations of analyze --json.", rows.more_iterations));

  const RlTimeline t = BuildRlTimeline(rl, 64);
  if (!t.lanes.empty()) {
    list lanes;
    for (const RlLane& l : t.lanes) {
      list boxes;
      for (const RlBox& b : l.boxes) {
        data box = object{{"x", Num(b.x)}, {"y", Num(l.y)}, {"w", Num(b.w)}, {"cls", b.cls}, {"fill", b.fill},
                          {"title", b.title}};
        box.set("idle", data(b.cls == "rl-idle"));
        boxes.push_back(box);
      }
      lanes.push_back(object{{"role", l.role}, {"y", Num(l.y)}, {"ty", Num(l.y + 14)}, {"boxes", boxes}});
    }
    list marks;
    for (const RlMark& m : t.marks) {
      marks.push_back(object{{"x", Num(m.x)}, {"tx", Num(m.x + 2)}, {"label", m.label}});
    }
    list legend;
    for (const RlLegendItem& l : t.legend) legend.push_back(object{{"cls", l.cls}, {"fill", l.fill}, {"task", l.task}});
    const double axis_y = t.height - 16;
    data g = object{{"lanes", lanes}, {"marks", marks}, {"legend", legend}, {"height", Num(t.height)},
                    {"axis_y", Num(axis_y)}, {"label_y", Num(axis_y + 12)}, {"duration", t.duration},
                    {"more", fmt::format("The first 64 iterations drawn; {} more not shown.", t.more_iterations)}};
    g.set("has_more", data(t.more_iterations > 0));
    d.set("timeline", g);
  } else {
    d.set("timeline", data(false));
  }
  return d;
}

// The operator view: class shares with a bar, the top operators, the
// dispatch cost per type. Every cell is text from the trace or a figure.
data OpsData(const OpsRows& rows) {
  auto header = [](const auto& h, size_t from) {
    list l;
    for (size_t k = from; k < h.size(); ++k) l.push_back(object{{"text", h[k]}});
    return l;
  };
  auto table = [](const auto& in, bool bar, const std::vector<double>& share) {
    list out;
    for (size_t i = 0; i < in.size(); ++i) {
      list cells;
      for (size_t k = 1; k < in[i].size(); ++k) cells.push_back(object{{"text", in[i][k]}});
      data row = object{{"name", in[i][0]}, {"cells", cells}};
      if (bar) row.set("w", Num(200 * share[i]));
      out.push_back(row);
    }
    return out;
  };
  list class_header = header(OpsRows::kClassHeader, 0);
  data d = object{{"note", rows.note},
                  {"class_header", class_header},
                  {"classes", table(rows.classes, true, rows.class_share)},
                  {"top_header", header(OpsRows::kTopHeader, 0)},
                  {"top", table(rows.top, false, {})},
                  {"dispatch_header", header(OpsRows::kDispatchHeader, 0)},
                  {"dispatch", table(rows.dispatch, false, {})}};
  d.set("has_dispatch", data(!rows.dispatch.empty()));
  return d;
}

}  // namespace

std::string RenderHtmlReport(const ReportData& rd) {
  const analysis::Analysis& a = rd.analysis;
  const Findings f = BuildFindings(a);
  data root = object{{"title", f.title}};
  list sections;

  list headlines;
  for (const Headline& h : f.headlines) {
    headlines.push_back(object{{"label", h.label}, {"value", h.value}, {"detail", h.detail},
                               {"verdict", std::string(VerdictName(h.verdict))}});
  }
  root.set("headlines", headlines);
  root.set("has_headlines", data(!f.headlines.empty()));

  // The proposals come first: what to change, with its predicted gain.
  list proposals;
  for (size_t i = 0; i < rd.proposals.size(); ++i) {
    const advise::Proposal& p = rd.proposals[i];
    data row = object{{"n", std::to_string(i + 1)}, {"title", p.title}, {"knob", p.knob}, {"detail", p.detail},
                      {"gain", p.predicted ? fmt::format("{:+.1f} %", -100 * p.gain) : std::string("not predicted")},
                      {"step", p.predicted ? fmt::format("{} \u2192 {}", FormatDuration(p.step_before_ns),
                                                         FormatDuration(p.step_after_ns))
                                           : std::string()},
                      {"fixes", p.predicted && !p.fixes.empty()
                                    ? fmt::format("{}: {} \u2192 {}", advise::MetricLabel(p.fixes),
                                                  advise::MetricValue(p.fixes, p.fixes_before),
                                                  advise::MetricValue(p.fixes, p.fixes_after))
                                    : std::string("-")},
                      {"confidence", fmt::format("{:.0f} %", 100 * p.confidence)}};
    row.set("has_detail", data(!p.detail.empty()));
    proposals.push_back(row);
  }
  root.set("proposals", proposals);
  root.set("has_proposals", data(!rd.proposals.empty()));
  list dropped;
  for (const advise::Proposal& p : rd.not_proposed) {
    dropped.push_back(object{{"title", p.title}, {"why", p.not_proposed}});
  }
  root.set("not_proposed", dropped);
  root.set("has_not_proposed", data(!rd.not_proposed.empty()));
  root.set("advice_note", rd.advice_note);
  root.set("has_advice_note", data(!rd.advice_note.empty()));
  const bool advice_section = rd.advised || !rd.proposals.empty() || !rd.advice_note.empty();
  root.set("advised", data(advice_section));
  if (advice_section) sections.push_back(Section("advice", "Proposals"));
  if (!f.headlines.empty()) sections.push_back(Section("headline", "Headline"));

  // RL comes right after the headline: for an RL job, where an iteration's
  // time goes is the headline.
  if (a.rl().present()) {
    root.set("rl", RlData(a.rl()));
    sections.push_back(Section("rl", "RL post-training"));
  } else {
    root.set("rl", data(false));
  }

  if (!f.bars.empty()) {
    root.set("breakdown", BreakdownData(f));
    sections.push_back(Section("breakdown", "Step breakdown"));
  } else {
    root.set("breakdown", data(false));
  }

  list classes;
  double max_total = 0;
  for (const ClassRow& c : f.classes) max_total = std::max(max_total, c.total_ns);
  for (const ClassRow& c : f.classes) {
    classes.push_back(object{{"name", c.name}, {"total", FormatDuration(c.total_ns)}, {"exposed", FormatDuration(c.exposed_ns)},
                             {"unmasked", FormatPct(c.unmasked)},
                             {"w", Num(max_total > 0 ? c.exposed_ns / max_total * 200 : 0)}});
  }
  root.set("classes", classes);
  root.set("has_classes", data(!f.classes.empty()));
  if (!f.classes.empty()) sections.push_back(Section("comm", "Communication"));

  const OpsRows ops = BuildOpsRows(a, 20, 10);
  if (!ops.classes.empty()) {
    root.set("ops", OpsData(ops));
    sections.push_back(Section("operators", "Operators"));
  } else {
    root.set("ops", data(false));
  }

  if (rd.timeline) {
    root.set("timeline", TimelineData(*rd.timeline));
    sections.push_back(Section("timeline", "Timeline"));
  } else {
    root.set("timeline", data(false));
  }

  const auto& ei = a.cluster().expert_imbalance();
  if (ei.layers_size() > 0 || !rd.experts.tokens.empty()) {
    root.set("experts", ExpertData(ei, rd.experts));
    sections.push_back(Section("experts", "Expert load"));
  } else {
    root.set("experts", data(false));
  }

  if (a.cluster().memory().peak_bytes() > 0) {
    root.set("memory", MemoryData(a, rd.memory));
    sections.push_back(Section("memory", "Memory"));
  } else {
    root.set("memory", data(false));
  }

  const auto& c = a.cluster();
  if (!f.slow_ranks.empty() || c.waited_for_size() > 0 || c.collective_waits_size() > 0) {
    root.set("slow", SlowData(c, f));
    sections.push_back(Section("slow", "Outlier ranks"));
  } else {
    root.set("slow", data(false));
  }

  const ClusterOutputRows cluster_rows = BuildClusterOutputRows(a, 32);
  if (!cluster_rows.source.empty()) {
    root.set("cluster_output", ClusterOutputData(cluster_rows));
    sections.push_back(Section("cluster-output", "Cluster output"));
  } else {
    root.set("cluster_output", data(false));
  }

  list warnings;
  for (const std::string& w : f.warnings) warnings.push_back(object{{"text", w}});
  root.set("warnings", warnings);
  root.set("has_warnings", data(!f.warnings.empty()));
  if (!f.warnings.empty()) sections.push_back(Section("warnings", "Warnings"));

  root.set("sections", sections);
  mustache tmpl{ReportHtmlTemplate()};
  if (!tmpl.is_valid()) return "template error: " + tmpl.error_message();  // a bug, caught by the tests
  return tmpl.render(root);
}

}  // namespace moetrace
