// Streaming writer of the native .mtrace format (FORMAT.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "formats/trace_io.h"

namespace moetrace {

struct NativeWriteOptions {
  // zstd level of every record. -1 skips Huffman coding of literals: the
  // packed columns are mostly literals, so reading is ~25% faster than at
  // level 1 for ~17% more bytes (bench/native_bench.cc: 5.80 vs 4.95 bytes
  // per event); higher levels trade write speed for size.
  int zstd_level = -1;
  // Rows per block, 1..65536. Smaller only for tests.
  uint32_t max_block_rows = 65536;
};

// Writes ranks as they arrive (memory bounded by one rank) into `path`
// through AtomicFile: nothing is left on disk unless Finish() succeeds.
// Same trace + same options -> byte-identical file.
// Throws InputError when the file cannot be written and
// std::invalid_argument for a Rank that breaks the model's invariants
// (columns of unequal length, name or comm ids out of range).
std::unique_ptr<TraceSink> CreateNativeSink(const std::string& path,
                                            NativeWriteOptions opts = {});

}  // namespace moetrace
