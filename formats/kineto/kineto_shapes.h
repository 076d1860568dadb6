// Input shapes of a Kineto trace: `cpu_op`s record theirs ("Input Dims");
// device ops get them from the operator that launched them.
// Internal to formats/kineto (the builder calls it in Finish()).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "formats/trace.h"

namespace moetrace {

// "Input Dims" JSON text in one spelling whatever the file's indentation:
// no whitespace but one space after each comma, as the profiler writes it
// compactly ("[[4096, 1024], [1024]]"). Strings are copied as they are.
void NormalizeInputDims(std::string_view json, std::string* out);

struct ShapeLinks {
  int64_t linked = 0;      // device ops given their launching op's shapes
  int64_t no_launch = 0;   // device op whose correlation has no launch on a host thread
  int64_t no_op = 0;       // launch not inside any host op with shapes
  int64_t no_correlation = 0;  // device op with no correlation at all
};

// Gives each device op (kernel, collective, copy) with a correlation the
// shape of the innermost host op with a shape enclosing its launch (a
// kLaunch, or a blocking kSync copy, of the same correlation) on the
// launching thread. Host tracks must be sorted by time and launches
// categorized (kLaunch). Does nothing, and counts nothing, when no host
// op of the rank has a shape.
ShapeLinks LinkLaunchShapes(Rank* rank);

}  // namespace moetrace
