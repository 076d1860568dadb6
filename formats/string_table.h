// Interned strings of one rank. Id 0 is always the empty string.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace moetrace {

using StringId = uint32_t;

class StringTable {
 public:
  StringTable();
  StringTable(const StringTable& other);
  StringTable& operator=(const StringTable& other);
  StringTable(StringTable&&) noexcept = default;
  StringTable& operator=(StringTable&&) noexcept = default;

  // Returns the id of `s`, adding it when new. Bytes of `s` that are not
  // well-formed UTF-8 are replaced by U+FFFD first (counted in repaired()):
  // the table holds valid UTF-8 only.
  StringId Intern(std::string_view s);
  // Bytes Intern has replaced so far (an importer's repaired.utf8).
  int64_t repaired() const { return repaired_; }
  // Returns the id of `s` or -1 when absent, without adding it.
  int64_t Find(std::string_view s) const;
  std::string_view Get(StringId id) const { return strings_[id]; }
  bool Contains(StringId id) const { return id < strings_.size(); }
  size_t size() const { return strings_.size(); }
  const std::vector<std::string_view>& all() const { return strings_; }

  bool operator==(const StringTable& other) const;

  // Makes the table {"", list[0], list[1], ...} (ids 0, 1, 2, ...), reusing
  // what it already holds: an entry equal to the new one at the same id is
  // kept as it is. Readers of many ranks call it per rank, and ranks of one
  // trace share most of their strings at the same ids (162 of 168 on the
  // 718B trace), where a fresh table allocated and hashed every string.
  // Returns the index in `list` of the first string that repeats an earlier
  // one (the table then holds the strings before it), or -1.
  int64_t Assign(const std::vector<std::string_view>& list);

 private:
  void Rebuild(const StringTable& other);
  std::deque<std::string> storage_;         // stable addresses
  std::vector<std::string_view> strings_;   // by id
  std::unordered_map<std::string_view, StringId> index_;
  std::vector<size_t> changed_;  // Assign's scratch
  int64_t repaired_ = 0;
};

}  // namespace moetrace
