// Reads Kineto JSON files into the rows Holistic Trace Analysis works on
// (hta-compat.md §1-§2): file position, ts/dur after the timestamp-mode
// rule, stream, correlation and the few facts about name/cat the four HTA
// figures use. Strings are classified while parsing and not kept.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "formats/kineto/kineto_event_observer.h"

namespace moetrace::hta {

// Kernel class of hta-compat.md §6.2.
enum class KernelClass : uint8_t { kComm = 0, kMemory = 1, kOther = 2, kCompute = 3 };
KernelClass ClassifyKernelName(std::string_view name);

enum RowBit : uint8_t {
  kRowGpuSyncName = 1 << 0,   // name is "Event Sync" or "Context Sync"
  kRowLaunchName = 1 << 1,    // name is one of HTA's launch calls (§10)
  kRowIdleCat = 1 << 2,       // cat is one of the §9 kernel categories
  kRowStepName = 1 << 3,      // name starts with ProfilerStep#<digit>
};

// The retained rows of one rank file, column by column, in file order.
struct RankRows {
  std::string file;
  int64_t rank = 0;
  bool fractional = false;
  std::vector<int64_t> idx;
  std::vector<int64_t> ts;  // aligned by the caller (§4)
  std::vector<double> dur;
  std::vector<int64_t> stream;
  std::vector<int64_t> correlation;
  std::vector<KernelClass> kclass;  // kOther unless the row has a stream
  std::vector<uint8_t> bits;
  // Distinct name/cat strings starting with ProfilerStep#<digit> (§5.1).
  std::set<std::string> step_strings;
  // A name starting with "ProfilerStep" that HTA refuses (§5.1), or "".
  std::string bad_step_name;
  size_t size() const { return idx.size(); }
  bool IsGpu(size_t i) const {
    return (stream[i] >= 0 && correlation[i] >= 0) || (bits[i] & kRowGpuSyncName);
  }
};

// ts or dur of one event as written.
struct RowNum {
  enum Kind : uint8_t { kAbsent, kInt, kOther, kNonNumber } kind = kAbsent;
  int64_t i = 0;
  double d = 0;
};

// Builds one file's rows from the facts of its events (§2), whether they
// come from HTA's own reader (ParseKinetoRows) or from the importer's pass.
class RowsBuilder {
 public:
  explicit RowsBuilder(std::string file);
  void Restart();       // a "traceEvents" array starts: the last one wins
  void AddNonObject();  // an element that is not an object
  // String values in `facts` must be unescaped (escaped = false).
  void Add(const KinetoEventFacts& facts);
  // Appends the rows `part` built from the events after those seen here
  // (a file read on two threads), its indices shifted by `first_index`.
  void Append(RowsBuilder& part, int64_t first_index);
  // The rows, in the file's timestamp mode (§2.2). Leaves the builder empty.
  RankRows Finish(int64_t rank);

 private:
  RankRows rows_;
  std::vector<RowNum> ts_raw_;
  std::vector<double> dur_raw_;
  bool fractional_ = false;
};

// Decompressed text of `path` ("...gz" names are gunzipped). Throws InputError.
std::string ReadMaybeGzip(const std::string& path);
// Rank of a file per §1.2 (first `"rank":\s+(\d+)` of any line, else 0).
int64_t FindRank(std::string_view text);
// Parses one file's text. Throws InputError naming `file` on malformed JSON.
RankRows ParseKinetoRows(const std::string& file, std::string text);
// The same on text that is followed by at least SIMDJSON_PADDING readable
// bytes (`padded_size` >= text.size() + SIMDJSON_PADDING), without a copy.
RankRows ParseKinetoRows(const std::string& file, std::string_view text, size_t padded_size);

// The trace files of a set (§1.1): a directory's *.gz / *.json entries in
// directory-listing order, or the file itself.
std::vector<std::string> ListTraceFiles(const std::string& path);

}  // namespace moetrace::hta
