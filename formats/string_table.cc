#include "formats/string_table.h"

namespace moetrace {

StringTable::StringTable() { Intern(std::string_view()); }

StringTable::StringTable(const StringTable& other) { Rebuild(other); }

StringTable& StringTable::operator=(const StringTable& other) {
  if (this != &other) Rebuild(other);
  return *this;
}

void StringTable::Rebuild(const StringTable& other) {
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
  storage_.emplace_back(s);
  std::string_view stored = storage_.back();
  StringId id = static_cast<StringId>(strings_.size());
  strings_.push_back(stored);
  index_.emplace(stored, id);
  return id;
}

int64_t StringTable::Find(std::string_view s) const {
  auto it = index_.find(s);
  return it == index_.end() ? -1 : static_cast<int64_t>(it->second);
}

bool StringTable::operator==(const StringTable& other) const {
  return strings_ == other.strings_;
}

}  // namespace moetrace
