// Encoding and decoding of one integer column of a block (FORMAT.md,
// "Columns"). Every column is handled as int64 values; narrower fields are
// widened by the writer and range-checked by the reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "formats/proto/mtrace.pb.h"

namespace moetrace::native {

// Encodes `n` values (n >= 1) into `col` with whichever of CONSTANT /
// VARINT / DELTA / RLE (and GAP when `dur` is given: the values are start
// times and `dur` their durations) is smallest. Returns false, leaving `col`
// untouched, when every value equals `default_value` (if given): such a
// column is simply omitted from its block.
bool EncodeColumn(const int64_t* values, size_t n, std::optional<int64_t> default_value,
                  const int64_t* dur, Column* col);

// Decodes a column of `n` values into `out`. `dur` must hold the decoded
// durations for GAP (may be null otherwise). Returns nullptr on success or
// a description of what is wrong (the data is untrusted).
const char* DecodeColumn(ColumnEncoding encoding, int64_t constant,
                         const std::string& data, size_t n, const int64_t* dur,
                         int64_t* out);

}  // namespace moetrace::native
