// `moetrace diff --html`: the diff's tables (analyzer/diff/diff_text.h
// DiffSections) as one self-contained page in the report's style: inline
// CSS, no script, a CSP that forbids every network load; every string from a
// trace (operator names, shapes, file names) HTML-escaped by mustache.
#pragma once

#include <string>

#include "analyzer/proto/diff.pb.h"

namespace moetrace {

std::string RenderDiffHtml(const analysis::Diff& diff);

}  // namespace moetrace
