// Counts of event fields the Kineto reader could not take as written: a
// numeric string read as a number, a value of the wrong type skipped, an
// event dropped for its time or id, invalid UTF-8 repaired. A readable
// document is never rejected for one of these (Perfetto's way: count and
// go on); the counts land in Rank::import_stats.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace moetrace {

enum class FieldFix : uint8_t {
  kCoercedArg,    // coerced.arg.<key>: "13248" read as 13248
  kSkippedArg,    // skipped.arg.<key>: args value of a type the key cannot take
  kSkippedField,  // skipped.field.<key>: the event is kept without it
  kSkippedEvent,  // skipped.event.<key>: the event is dropped (no usable ts, pid, tid)
  kRepaired,      // repaired.<key>: e.g. repaired.utf8, invalid sequences -> U+FFFD
};

class KinetoFieldStats {
 public:
  // The set of keys is small (the keys the reader uses): a linear search
  // beats hashing, and the last hit is checked first (a trace repeats one).
  void Count(FieldFix fix, std::string_view key, int64_t n = 1) {
    if (last_ < counts_.size() && counts_[last_].fix == fix && counts_[last_].key == key) {
      counts_[last_].n += n;
      return;
    }
    for (size_t i = 0; i < counts_.size(); ++i) {
      if (counts_[i].fix == fix && counts_[i].key == key) {
        counts_[i].n += n;
        last_ = i;
        return;
      }
    }
    last_ = counts_.size();
    counts_.push_back({fix, std::string(key), n});
  }
  struct Entry {
    FieldFix fix;
    std::string key;
    int64_t n;
  };
  const std::vector<Entry>& entries() const { return counts_; }
  // "coerced.arg.bytes" and so on.
  static std::string StatName(const Entry& e) {
    static const char* const kPrefix[] = {"coerced.arg.", "skipped.arg.", "skipped.field.",
                                          "skipped.event.", "repaired."};
    return kPrefix[int(e.fix)] + e.key;
  }

 private:
  std::vector<Entry> counts_;
  size_t last_ = 0;
};

}  // namespace moetrace
