// Opens any supported input and creates any supported output.
#pragma once

#include <memory>
#include <string>

#include "formats/trace_io.h"

namespace moetrace {

// kAscendDb: an Ascend / msprof SQLite export (preferred to the text files
// when a rank directory holds both); its Metadata::source is "ascend" too.
enum class TraceFormat { kUnknown, kNative, kKineto, kAscend, kAscendDb };
const char* TraceFormatName(TraceFormat f);

// Detects the format of `path` (file or directory) from its content.
TraceFormat DetectFormat(const std::string& path);
// Opens `path`; throws InputError naming the file when it cannot.
std::unique_ptr<TraceSource> OpenTrace(const std::string& path);
// Creates a sink whose type follows the extension of `path`:
// .mtrace (native), .pftrace (Perfetto), .json (Chrome JSON).
std::unique_ptr<TraceSink> CreateSink(const std::string& path);

}  // namespace moetrace
