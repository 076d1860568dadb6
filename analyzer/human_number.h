// Numbers for people: "2.37 M" rather than "2365909". One formatter for the
// terminal summary (analyzer/summary.cc) and the reports (reports/), so both
// print a figure the same way.
#pragma once

#include <string>

namespace moetrace {

// Three significant digits with an SI prefix: 987, 12.3 k, 2.37 M, 1.05 G.
// Below 1,000 a whole number is printed as is ("42"), a fraction with three
// significant digits ("0.125").
std::string HumanCount(double v);

}  // namespace moetrace
