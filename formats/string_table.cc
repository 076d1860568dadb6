#include "formats/string_table.h"

#include "formats/export/utf8.h"

namespace moetrace {

StringTable::StringTable() { Intern(std::string_view()); }

StringTable::StringTable(const StringTable& other) { Rebuild(other); }

StringTable& StringTable::operator=(const StringTable& other) {
  if (this != &other) Rebuild(other);
  return *this;
}

void StringTable::Rebuild(const StringTable& other) {
  repaired_ = other.repaired_;
  storage_.clear();
  strings_.clear();
  index_.clear();
  for (std::string_view s : other.strings_) {
    storage_.emplace_back(s);
    strings_.push_back(storage_.back());
    index_.emplace(storage_.back(), static_cast<StringId>(strings_.size() - 1));
  }
}

StringId StringTable::Intern(std::string_view s) {
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  // A new string is checked once: the table holds valid UTF-8 only (the
  // native format's strings, JSON, HTML and Perfetto need it), whatever
  // bytes an importer met. A hit above is valid already.
  if (!IsValidUtf8(s)) [[unlikely]] {
    std::string fixed;
    repaired_ += AppendSanitizedUtf8(s, &fixed);
    return Intern(fixed);
  }
  storage_.emplace_back(s);
  std::string_view stored = storage_.back();
  StringId id = static_cast<StringId>(strings_.size());
  strings_.push_back(stored);
  index_.emplace(stored, id);
  return id;
}

int64_t StringTable::Assign(const std::vector<std::string_view>& list) {
  const size_t want = list.size() + 1;
  // Drop every entry that will not stay: the tail past the new size and
  // the ids whose string changes. What is left in the index is final, so
  // a new string found there repeats one of the list.
  while (strings_.size() > want) {
    index_.erase(strings_.back());
    strings_.pop_back();
    storage_.pop_back();
  }
  std::vector<size_t>& changed = changed_;
  changed.clear();
  for (size_t id = 1; id < strings_.size(); ++id) {
    if (strings_[id] != list[id - 1]) {
      index_.erase(strings_[id]);
      changed.push_back(id);
    }
  }
  for (size_t id : changed) {
    storage_[id].assign(list[id - 1]);
    strings_[id] = storage_[id];
    if (!index_.emplace(strings_[id], static_cast<StringId>(id)).second) {
      // A repeat (a corrupt file). Which copy is met first here depends on
      // what the table held before, so start again from an empty table: the
      // error names the same string whatever was read before (a rare path).
      storage_.clear();
      strings_.clear();
      index_.clear();
      Intern(std::string_view());
      for (size_t k = 1; k < want; ++k) {
        if (Intern(list[k - 1]) != static_cast<StringId>(k)) return static_cast<int64_t>(k) - 1;
      }
      return -1;
    }
  }
  for (size_t id = strings_.size(); id < want; ++id) {
    if (Intern(list[id - 1]) != static_cast<StringId>(id)) return static_cast<int64_t>(id) - 1;
  }
  return -1;
}

int64_t StringTable::Find(std::string_view s) const {
  auto it = index_.find(s);
  return it == index_.end() ? -1 : static_cast<int64_t>(it->second);
}

bool StringTable::operator==(const StringTable& other) const {
  return strings_ == other.strings_;
}

}  // namespace moetrace
