// Reads a whole trace file into one padded buffer as fast as the machine
// allows: a .json.gz is inflated in one call by libdeflate (when built with
// it) into a buffer sized from the gzip trailer; plain files are mmapped.
// Anything unusual (multi-member gzip, > 4 GiB, corrupt or truncated data)
// falls back to the streaming zlib reader, whose errors name the file and
// the compressed byte offset.
#pragma once

#include <string>

#include "formats/kineto/padded_input.h"

namespace moetrace {

struct WholeTraceFile {
  PaddedBuffer text;
  bool gzip = false;  // the file started with the gzip magic and was inflated
};

// Throws InputError naming the file.
WholeTraceFile ReadWholeTraceFile(const std::string& path);

}  // namespace moetrace
