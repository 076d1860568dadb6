// Compares the analysis with the labelled figures a trace carries
// (Metadata::ground_truth from tracegen, Metadata::reference from a
// profiler), by JSON path below ranks[i] (METRICS.md).
#pragma once

#include "analyzer/proto/analysis.pb.h"
#include "formats/trace.h"

namespace moetrace {

// The value at dotted `path` below `message` (e.g. "comm_by_class.EP.exposed_ns");
// false when the path names no numeric field.
bool LookupNumber(const google::protobuf::Message& message, std::string_view path, double* out);

// Appends one LabelCheck per label to analysis->label_checks.
void CheckLabels(const Metadata& metadata, analysis::Analysis* analysis);

}  // namespace moetrace
