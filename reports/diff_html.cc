// kainjow::mustache renders the template below; like report_template.cc it
// has only {{x}} tags (HTML-escaped), never {{{x}}}, so nothing from a trace
// reaches the page unescaped.
#include "reports/diff_html.h"

#include <kainjow/mustache.hpp>

#include "analyzer/diff/diff_text.h"
#include "reports/report_template.h"

namespace moetrace {
namespace {

using kainjow::mustache::data;
using kainjow::mustache::list;
using kainjow::mustache::mustache;
using kainjow::mustache::object;

// The page around the report's stylesheet (kReportCss).
const char kDiffHead[] = R"MUSTACHE(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>moetrace diff: {{a}} vs {{b}}</title>
<style>
)MUSTACHE";

const char kDiffBody[] = R"MUSTACHE(</style>
</head>
<body>
<main>
<h1>moetrace diff</h1>
<p class="sub">{{header}}</p>
<div class="cards">
<div class="card"><div class="label">step time A</div><div class="value">{{step_a}}</div></div>
<div class="card"><div class="label">step time B</div><div class="value">{{step_b}}</div></div>
<div class="card {{verdict_class}}"><div class="label">change</div><div class="value">{{step_delta}}</div><div class="detail">{{verdict}}</div></div>
</div>
<p class="note">Times are per rank and step (the mean over each side's ranks and steps); every delta is B &minus; A; a share is the delta over the step-time change.</p>
{{#sections}}
<section>
<h2>{{title}}</h2>
<table><tr>{{#head}}<th>{{.}}</th>{{/head}}</tr>
{{#rows}}<tr>{{#cells}}<td{{#num}} class="num"{{/num}}>{{text}}</td>{{/cells}}</tr>
{{/rows}}</table>
{{#has_note}}<p class="note">{{note}}</p>{{/has_note}}
</section>
{{/sections}}
{{#has_notes}}<ul class="note">{{#notes}}<li>{{.}}</li>{{/notes}}</ul>{{/has_notes}}
</main>
</body>
</html>
)MUSTACHE";

}  // namespace

std::string RenderDiffHtml(const analysis::Diff& d) {
  data root = object{{"a", d.a()},
                     {"b", d.b()},
                     {"header", DiffHeader(d)},
                     {"step_a", DiffMs(d.step_ns_a())},
                     {"step_b", DiffMs(d.step_ns_b())},
                     {"step_delta", DiffSignedMs(d.step_change_ns())},
                     {"verdict", DiffVerdict(d)}};
  // Slower is bad, faster good; no change stays neutral.
  root.set("verdict_class", std::string(d.no_change() ? "" : d.step_change_ns() > 0 ? "bad" : "good"));
  list sections;
  for (const DiffSection& s : DiffSections(d)) {
    list head, rows;
    for (const std::string& h : s.rows[0]) head.push_back(h);
    for (size_t r = 1; r < s.rows.size(); ++r) {
      list cells;
      for (size_t i = 0; i < s.rows[r].size(); ++i) {
        cells.push_back(object{{"text", s.rows[r][i]}, {"num", data(s.Numeric(i))}});
      }
      rows.push_back(object{{"cells", cells}});
    }
    sections.push_back(object{{"title", s.title},
                              {"head", head},
                              {"rows", rows},
                              {"note", s.note},
                              {"has_note", data(!s.note.empty())}});
  }
  root.set("sections", sections);
  list notes;
  for (const std::string& n : d.notes()) notes.push_back(n);
  root.set("notes", notes);
  root.set("has_notes", data(!d.notes().empty()));
  mustache tmpl{std::string(kDiffHead) + kReportCss + kDiffBody};
  return tmpl.render(root);
}

}  // namespace moetrace
