// The HTML report's mustache template. {{x}} is HTML-escaped by the
// renderer; the template has no {{{x}}} (unescaped) tag at all, so no text
// from a trace can reach the page unescaped. Colours and coordinates are
// computed in html_report.cc. The page loads nothing: the CSP forbids every
// source except inline styles and data: images, and there is no script.
#include "reports/report_template.h"

#include <string>

namespace moetrace {

const char kReportCss[] = R"CSS(:root { --good:#1a7f37; --warn:#b35900; --bad:#c62828; --info:#455a64; --ink:#1f2328; --muted:#57606a; --line:#d0d7de; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); margin: 0; background: #f6f8fa; }
main { max-width: 1120px; margin: 0 auto; padding: 24px; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
.sub { color: var(--muted); margin: 0 0 12px; }
nav { margin: 8px 0 16px; }
nav a { margin-right: 14px; color: #0969da; text-decoration: none; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 10px; }
.card { border: 1px solid var(--line); border-left: 6px solid var(--info); border-radius: 6px; padding: 8px 10px; }
.card.good { border-left-color: var(--good); } .card.warn { border-left-color: var(--warn); } .card.bad { border-left-color: var(--bad); }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
.card .value { font-size: 22px; font-weight: 600; }
.card.good .value { color: var(--good); } .card.warn .value { color: var(--warn); } .card.bad .value { color: var(--bad); }
.card .detail { color: var(--muted); font-size: 12px; }
table { border-collapse: collapse; margin: 6px 0; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; }
td.num { text-align: right; white-space: nowrap; }
th { background: #f6f8fa; }
svg { display: block; max-width: 100%; height: auto; }
svg text { font: 11px system-ui, sans-serif; fill: var(--ink); }
.legend span { display: inline-block; margin-right: 14px; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; }
.c-compute { fill: #4e79a7; } .c-comm { fill: #e15759; } .c-copy { fill: #f28e2b; } .c-host { fill: #b07aa1; } .c-free { fill: #d5d0cc; }
i.c-compute { background: #4e79a7; } i.c-comm { background: #e15759; } i.c-copy { background: #f28e2b; } i.c-host { background: #b07aa1; } i.c-free { background: #d5d0cc; }
.outlier { fill: var(--bad); font-weight: 600; }
.note { color: var(--muted); font-size: 12px; }
.pre { white-space: pre-line; }
ul.warn li { color: var(--warn); }
@media print {
  body { background: #fff; } main { max-width: none; padding: 0; } nav { display: none; }
  section { break-inside: avoid; } h2 { break-after: avoid; }
}
)CSS";

namespace {

const char kHead[] = R"MUSTACHE(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>moetrace report: {{title}}</title>
<style>
)MUSTACHE";

const char kBody[] = R"MUSTACHE(</style>
</head>
<body>
<main>
<h1>moetrace report</h1>
<p class="sub">{{title}}</p>
<nav>{{#sections}}<a href="#{{id}}">{{name}}</a>{{/sections}}</nav>
{{^sections}}<p class="note">Nothing to report: the analysis found no step with device activity.</p>{{/sections}}

{{#advised}}
<section id="advice">
<h2>Top proposals</h2>
{{#has_proposals}}
<p class="note">From <code>moetrace advise</code>, best predicted gain first; each effect is predicted by replaying the trace under the change (regenerated for tracegen traces).</p>
<table><tr><th>#</th><th>predicted step time</th><th>proposal</th><th>setting</th><th>its metric</th><th>confidence</th></tr>
{{#proposals}}<tr><td>{{n}}</td><td class="num"><b>{{gain}}</b><br><span class="note">{{step}}</span></td><td>{{title}}{{#has_detail}}<br><span class="note pre">{{detail}}</span>{{/has_detail}}</td><td><code>{{knob}}</code></td><td>{{fixes}}</td><td class="num">{{confidence}}</td></tr>
{{/proposals}}
</table>
{{/has_proposals}}
{{#has_not_proposed}}<p class="note">Tried and not proposed, with the numbers of their replay:</p>
<ul class="note">{{#not_proposed}}<li>{{title}}: {{why}}</li>
{{/not_proposed}}</ul>
{{/has_not_proposed}}
{{#has_advice_note}}<p class="note">{{advice_note}}</p>{{/has_advice_note}}
{{^has_proposals}}{{^has_advice_note}}<p>The advisor found nothing to propose: no rule found its evidence, or no change it tried was predicted to help.</p>{{/has_advice_note}}{{/has_proposals}}
</section>
{{/advised}}

{{#has_headlines}}
<section id="headline">
<h2>Headline</h2>
<div class="cards">
{{#headlines}}<div class="card {{verdict}}"><div class="label">{{label}}</div><div class="value">{{value}}</div><div class="detail">{{detail}}</div></div>
{{/headlines}}
</div>
</section>
{{/has_headlines}}

{{#rl}}
<section id="rl">
<h2>RL post-training</h2>
<div class="cards">
{{#figures}}<div class="card info"><div class="label">{{label}}</div><div class="value">{{value}}</div><div class="detail">{{detail}}</div></div>
{{/figures}}
</div>
{{#timeline}}
<p class="note">Phases per role, iterations side by side ({{duration}} in all; dashed lines: iteration windows). A box spans the role's first card's start to its last card's end; the dashed box at the end of a rollout is its long-tail idle, the mean per rollout card.</p>
<p class="legend">{{#legend}}<span><i class="{{cls}}" style="background: {{fill}}"></i>{{task}}</span>{{/legend}}<span><i class="rl-idle" style="background: #fff; border: 1px dashed #57606a"></i>long-tail idle</span></p>
<svg viewBox="0 0 1080 {{height}}" width="1080" role="img" aria-label="RL phase timeline">
{{#lanes}}<text x="0" y="{{ty}}">{{role}}</text><rect x="110" y="{{y}}" width="960" height="20" fill="#f6f8fa"/>
{{#boxes}}<rect x="{{x}}" y="{{y}}" width="{{w}}" height="20" class="{{cls}}" fill="{{fill}}"{{#idle}} fill-opacity="0.65" stroke="#57606a" stroke-dasharray="3 2"{{/idle}}><title>{{title}}</title></rect>{{/boxes}}
{{/lanes}}
{{#marks}}<line x1="{{x}}" y1="0" x2="{{x}}" y2="{{axis_y}}" stroke="#57606a" stroke-dasharray="2 2"/><text x="{{tx}}" y="{{label_y}}">{{label}}</text>{{/marks}}
</svg>
{{#has_more}}<p class="note">{{more}}</p>{{/has_more}}
{{/timeline}}
{{#iterations}}
<h3>Iteration {{n}}</h3>
<p class="note">{{summary}}</p>
<table><tr>{{#header}}<th>{{text}}</th>{{/header}}</tr>
{{#phases}}<tr><td>{{task}}</td><td>{{role}}</td>{{#cells}}<td class="num">{{text}}</td>{{/cells}}</tr>
{{/phases}}
</table>
{{/iterations}}
{{#has_more}}<p class="note">{{more}}</p>{{/has_more}}
</section>
{{/rl}}
{{#breakdown}}
<section id="breakdown">
<h2>Step breakdown {{#grouped}}(rank groups; outlier ranks on their own, in red){{/grouped}}</h2>
<p class="note">Mean step per {{#grouped}}rank group{{/grouped}}{{^grouped}}rank{{/grouped}}; the parts add up to the step span. Host-bound is the part of free time where the device waited for the host.</p>
<p class="legend"><span><i class="c-compute"></i>compute</span><span><i class="c-comm"></i>exposed communication</span><span><i class="c-copy"></i>exposed copy</span><span><i class="c-host"></i>host-bound</span><span><i class="c-free"></i>other free</span></p>
<svg viewBox="0 0 1080 {{height}}" width="1080" role="img" aria-label="step breakdown per rank">
{{#bars}}<text x="0" y="{{ty}}"{{#outlier}} class="outlier"{{/outlier}}>{{label}}</text>
{{#segments}}<rect x="{{x}}" y="{{y}}" width="{{w}}" height="14" class="{{cls}}"><title>{{title}}</title></rect>{{/segments}}
<text x="{{tx}}" y="{{ty}}">{{total}}</text>
{{/bars}}
</svg>
</section>
{{/breakdown}}

{{#has_classes}}
<section id="comm">
<h2>Exposed communication by class</h2>
<table><tr><th>class</th><th>total / step</th><th>exposed / step</th><th>unmasked</th><th></th></tr>
{{#classes}}<tr><td>{{name}}</td><td class="num">{{total}}</td><td class="num">{{exposed}}</td><td class="num">{{unmasked}}</td><td><svg viewBox="0 0 200 12" width="200"><rect x="0" y="0" width="200" height="12" class="c-free"/><rect x="0" y="0" width="{{w}}" height="12" class="c-comm"/></svg></td></tr>
{{/classes}}
</table>
</section>
{{/has_classes}}

{{#ops}}
<section id="operators">
<h2>Operators: where device time goes</h2>
<p class="note">{{note}}</p>
<table><tr>{{#class_header}}<th>{{text}}</th>{{/class_header}}<th></th></tr>
{{#classes}}<tr><td>{{name}}</td>{{#cells}}<td class="num">{{text}}</td>{{/cells}}<td><svg viewBox="0 0 200 12" width="200"><rect x="0" y="0" width="200" height="12" class="c-free"/><rect x="0" y="0" width="{{w}}" height="12" class="c-compute"/></svg></td></tr>
{{/classes}}
</table>
<h3>Top operators by device time</h3>
<table><tr>{{#top_header}}<th>{{text}}</th>{{/top_header}}</tr>
{{#top}}<tr><td>{{name}}</td>{{#cells}}<td class="num">{{text}}</td>{{/cells}}</tr>
{{/top}}
</table>
{{#has_dispatch}}
<h3>Host dispatch by operator type</h3>
<p class="note">Launches joined to their device ops; "small": device time under the launch's host time; host-bound wait: the wait ended by this type's late launch.</p>
<table><tr>{{#dispatch_header}}<th>{{text}}</th>{{/dispatch_header}}</tr>
{{#dispatch}}<tr><td>{{name}}</td>{{#cells}}<td class="num">{{text}}</td>{{/cells}}</tr>
{{/dispatch}}
</table>
{{/has_dispatch}}
</section>
{{/ops}}

{{#timeline}}
<section id="timeline">
<h2>Timeline: worst step on the slowest rank</h2>
<p class="note">Rank {{rank}}, step {{step}}, {{duration}}. Hover a block for the longest op it covers.</p>
<svg viewBox="0 0 1080 {{height}}" width="1080" role="img" aria-label="timeline">
{{#lanes}}<text x="0" y="{{ty}}">{{name}}</text><rect x="110" y="{{y}}" width="960" height="20" fill="#f6f8fa"/>
{{#blocks}}<rect x="{{x}}" y="{{y}}" width="{{w}}" height="20" class="{{cls}}"><title>{{title}}</title></rect>{{/blocks}}
{{/lanes}}
{{#ticks}}<text x="{{x}}" y="{{y}}" text-anchor="{{anchor}}">{{label}}</text>{{/ticks}}
</svg>
</section>
{{/timeline}}

{{#experts}}
<section id="experts">
<h2>Expert load</h2>
<p class="note">Source: {{source}}. MaxVio = max load / mean load − 1.</p>
{{#heatmap}}
<p class="note">Tokens per expert (columns) and MoE layer (rows), summed over ranks and steps; colour = load / layer mean (blue below, red above).</p>
<svg viewBox="0 0 {{width}} {{height}}" width="{{width}}" role="img" aria-label="expert load heat map">
{{#rows}}{{#labelled}}<text x="0" y="{{ty}}">layer {{layer}}</text>{{/labelled}}{{#cells}}<rect x="{{x}}" y="{{y}}" width="{{w}}" height="{{h}}" fill="{{fill}}"><title>{{title}}</title></rect>{{/cells}}
{{/rows}}
</svg>
{{/heatmap}}
<table><tr><th>layer</th><th>MaxVio</th><th>MaxVio over EP ranks</th><th>CV</th><th>hot experts (tokens)</th></tr>
{{#layers}}<tr><td>{{layer}}</td><td class="num">{{max_vio}}</td><td class="num">{{ep_max_vio}}</td><td class="num">{{cv}}</td><td>{{hot}}</td></tr>
{{/layers}}
</table>
{{#has_more_layers}}<p class="note">{{more_layers}}</p>{{/has_more_layers}}
</section>
{{/experts}}

{{#memory}}
<section id="memory">
<h2>Memory</h2>
<p>Peak {{peak}} on rank {{rank}}{{#has_headroom}}, headroom {{headroom}}{{/has_headroom}}.</p>
{{#chart}}
<p class="legend"><span><i class="c-compute"></i>allocated</span><span><i class="c-copy"></i>reserved</span></p>
<svg viewBox="0 0 1080 240" width="1080" role="img" aria-label="memory over time">
<rect x="60" y="10" width="1010" height="200" fill="#f6f8fa"/>
{{#has_reserved}}<polyline points="{{reserved}}" fill="none" stroke="#f28e2b" stroke-width="1.5"/>{{/has_reserved}}
{{#has_allocated}}<polyline points="{{allocated}}" fill="none" stroke="#4e79a7" stroke-width="1.5"/>{{/has_allocated}}
<circle cx="{{peak_x}}" cy="{{peak_y}}" r="4" fill="#c62828"/><text x="{{peak_tx}}" y="{{peak_ty}}">peak {{peak}}</text>
<text x="0" y="16">{{ymax}}</text><text x="0" y="210">0</text>
<text x="60" y="230">{{t0}}</text><text x="1070" y="230" text-anchor="end">{{t1}}</text>
</svg>
{{/chart}}
{{#has_at_peak}}
<table><tr><th>category at peak</th><th>bytes</th><th>share</th></tr>
{{#at_peak}}<tr><td>{{name}}</td><td class="num">{{bytes}}</td><td class="num">{{share}}</td></tr>
{{/at_peak}}
</table>
{{/has_at_peak}}
</section>
{{/memory}}

{{#slow}}
<section id="slow">
<h2>Outlier ranks</h2>
{{#has_slow_ranks}}
<table><tr><th>ranks</th><th>metric</th><th>value / step (their mean)</th><th>mean over ranks</th><th>deviation</th></tr>
{{#slow_ranks}}<tr><td>{{rank}}</td><td>{{metric}}</td><td class="num">{{value}}</td><td class="num">{{mean}}</td><td class="num">{{deviation}}</td></tr>
{{/slow_ranks}}
</table>
{{/has_slow_ranks}}
<p class="note">Ranks more than 5 % from the mean and at least 1 % of the step away from it, ranks with close deviations on one line, largest time away from the mean first (the terminal summary's rule).{{#has_minor}} {{minor}}{{/has_minor}}</p>
{{#has_waited_for}}
<p>Ranks the others waited for in collectives:</p>
<table><tr><th>rank</th><th>wait it caused</th><th>collectives where it arrived last</th></tr>
{{#waited_for}}<tr><td>{{rank}}</td><td class="num">{{caused}}</td><td class="num">{{collectives}}</td></tr>
{{/waited_for}}
</table>
{{/has_waited_for}}
{{#has_waits}}
<p>Collectives with the longest waits:</p>
<table><tr><th>collective</th><th>group</th><th>last rank</th><th>mean wait</th><th>what happened</th></tr>
{{#waits}}<tr><td>{{name}}</td><td>{{group}}</td><td>{{last_rank}}</td><td class="num">{{mean_wait}}</td><td>{{description}}</td></tr>
{{/waits}}
</table>
{{/has_waits}}
</section>
{{/slow}}

{{#cluster_output}}
<section id="cluster-output">
<h2>Cluster output (msprof-analyze)</h2>
<p class="note">The profiler's figures from {{source}} (cluster_step_trace_time.csv, mean per step; Free holds exposed copies too), slowest first. The slowest rank, percentiles and link shares are moetrace's.</p>
<table><tr>{{#header}}<th>{{text}}</th>{{/header}}</tr>
{{#ranks}}<tr><td{{#slowest}} class="outlier"{{/slowest}}>{{who}}{{#slowest}} (slowest){{/slowest}}</td>{{#cells}}<td class="num">{{text}}</td>{{/cells}}</tr>
{{/ranks}}
</table>
<p>{{slowest_rank}}</p>
{{#has_links}}
<p>Slowest links (the profiler's transit size and time; share of the nominal link of the Atlas 800T A2 calibration):</p>
<table><tr>{{#link_header}}<th>{{text}}</th>{{/link_header}}</tr>
{{#links}}<tr>{{#cells}}<td>{{text}}</td>{{/cells}}</tr>
{{/links}}
</table>
{{/has_links}}
{{#has_groups}}<p class="note">Parallel groups: {{#groups}}{{text}}; {{/groups}}</p>{{/has_groups}}
</section>
{{/cluster_output}}

{{#has_warnings}}
<section id="warnings">
<h2>Warnings</h2>
<ul class="warn">{{#warnings}}<li>{{text}}</li>{{/warnings}}</ul>
</section>
{{/has_warnings}}

<p class="note">Generated by moetrace. Metric definitions: shared/docs/METRICS.md.</p>
</main>
</body>
</html>
)MUSTACHE";

}  // namespace

std::string ReportHtmlTemplate() { return std::string(kHead) + kReportCss + kBody; }

}  // namespace moetrace
