// The input shapes of an Ascend op as the profiler writes them in
// kernel_details.csv, trace_view.json args and the DB's STRING_IDS:
// "81920,4096;8192,512" (tensors by ';', dims by ','), which msprof wraps in
// double quotes (`"81920,4096;8192,512"`) so that spreadsheets keep it text.
#pragma once

#include <string_view>

#include "formats/decimal.h"

namespace moetrace {

// The shapes without surrounding blanks and that one pair of quotes; empty
// for "N/A", "NULL" (what msprof's STRING_IDS holds) or nothing: the
// profiler's "no shapes".
inline std::string_view AscendShapeText(std::string_view s) {
  s = TrimField(s);  // blanks, then one pair of quotes, then blanks
  if (s == "N/A" || s == "NULL") return {};
  return s;
}

}  // namespace moetrace
