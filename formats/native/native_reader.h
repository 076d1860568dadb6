// Reader of the native .mtrace format (FORMAT.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "formats/trace_io.h"

namespace moetrace {

// Limits on what a file may make the reader allocate. The defaults admit
// any real trace; the fuzzer lowers them.
struct NativeReadOptions {
  // Largest decompressed record (rank header, block, footer).
  uint64_t max_record_bytes = 1ull << 30;
  // Largest rank: events + comm records + comm vector elements + samples.
  uint64_t max_rank_rows = 1ull << 32;
  // Largest rank in memory once decoded (a few KB of constant columns can
  // describe billions of rows). 0: 1024 x the file's size, at least 2 GiB.
  uint64_t max_rank_bytes = 0;
};

// Opens an .mtrace file: reads and validates the trailer, the footer index
// and the metadata. ReadRank(i) then decodes rank i with pread (safe to call
// concurrently for different ranks; memory bounded by one rank). Every
// problem throws InputError "PATH: byte N: what was expected".
// ReadRankInto(i, &rank) decodes in place into a Rank reused across calls:
// columns are written straight into its vectors (non-temporal stores for
// large blocks), and nothing is allocated once it has grown to the largest
// rank. This is the fast path (bench/native_bench.cc).
std::unique_ptr<TraceSource> OpenNative(const std::string& path, NativeReadOptions opts = {});

// While an object of this class lives, ReadRankInto / ReadRank on the
// same thread skip the columns `analyze` never reads: events' micro_batch,
// flops and bytes, and the elements of comm records' group_ranks and
// send_splits. Those hold unspecified values (sized as usual; a reused
// Rank keeps what it held) and their data is not range-checked (the
// record's CRC, sizes and every other column still are). On the 718B trace
// they are about a third of the values decoded. For the analysis workers
// only (analyzer/analyze.cc): nothing else may read those fields of a rank
// read in this scope. A source that looks at the ranks analyze reads through
// it (replay's RoleSignatureSource hashes micro_batch) opens a scope with
// `skip` false around its read, so that it sees every column.
class SkipColumnsAnalyzeIgnores {
 public:
  explicit SkipColumnsAnalyzeIgnores(bool skip = true);
  ~SkipColumnsAnalyzeIgnores();
  SkipColumnsAnalyzeIgnores(const SkipColumnsAnalyzeIgnores&) = delete;
  SkipColumnsAnalyzeIgnores& operator=(const SkipColumnsAnalyzeIgnores&) = delete;

 private:
  bool before_;
};

// The same over an in-memory copy of a file; `name` is used in messages.
std::unique_ptr<TraceSource> OpenNativeBuffer(std::string data, const std::string& name,
                                              NativeReadOptions opts = {});

// True when `path` is a regular file starting with the .mtrace magic.
bool LooksLikeNative(const std::string& path);

}  // namespace moetrace
