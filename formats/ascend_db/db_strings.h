// STRING_IDS: the DB's interned strings (every name column is an id into
// it). Loaded once per file; ids are interned into a rank's StringTable
// only when an event uses them, through a per-rank cache (no hashing or
// allocation per row once an id has been seen).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "formats/ascend_db/sqlite_db.h"
#include "formats/string_table.h"

namespace moetrace {

class DbStrings {
 public:
  // Reads STRING_IDS(id, value); a row with a NULL or non-integer id is
  // skipped and counted in bad_rows().
  explicit DbStrings(const SqliteDb& db);
  // The string of `id`; empty (and found = false) when absent.
  std::string_view Get(int64_t id, bool* found = nullptr) const;
  size_t size() const { return count_; }
  int64_t bad_rows() const { return bad_rows_; }

 private:
  // Dense ids (the usual case, 0..n) index a vector; others a hash map.
  std::vector<std::string> dense_;
  std::vector<uint8_t> present_;
  std::unordered_map<int64_t, std::string> sparse_;
  size_t count_ = 0;
  int64_t bad_rows_ = 0;
};

// A DB string id -> StringId of one rank, interned on first use.
class RankStrings {
 public:
  RankStrings(const DbStrings& db, StringTable* table) : db_(db), table_(table) {}
  // Unknown ids (not in STRING_IDS) intern as "" and count in missing().
  StringId Intern(int64_t id);
  StringId InternText(std::string_view s) { return table_->Intern(s); }
  std::string_view Get(int64_t id) const { return db_.Get(id); }
  int64_t missing() const { return missing_; }

 private:
  static constexpr StringId kUnset = UINT32_MAX;
  const DbStrings& db_;
  StringTable* table_;
  std::vector<StringId> cache_;  // by id, for ids < 1<<22
  std::unordered_map<int64_t, StringId> far_;
  int64_t missing_ = 0;
};

}  // namespace moetrace
