#include "formats/ascend_db/db_strings.h"

namespace moetrace {

DbStrings::DbStrings(const SqliteDb& db) {
  if (!db.HasTable("STRING_IDS")) return;
  SqliteStmt s(db, "SELECT id, value FROM STRING_IDS");
  std::vector<std::pair<int64_t, std::string>> rows;
  int64_t max_id = -1;
  while (s.Step()) {
    int64_t id = 0;
    if (!s.Int(0, &id)) {
      ++bad_rows_;
      continue;
    }
    rows.emplace_back(id, std::string(s.Text(1)));
    if (id > max_id) max_id = id;
  }
  count_ = rows.size();
  bool dense = max_id >= 0 && max_id < static_cast<int64_t>(2 * rows.size() + 1024);
  if (dense) {
    dense_.resize(static_cast<size_t>(max_id) + 1);
    present_.assign(static_cast<size_t>(max_id) + 1, 0);
  }
  for (auto& [id, v] : rows) {
    if (dense && id >= 0) {
      dense_[static_cast<size_t>(id)] = std::move(v);
      present_[static_cast<size_t>(id)] = 1;
    } else {
      sparse_[id] = std::move(v);
    }
  }
}

std::string_view DbStrings::Get(int64_t id, bool* found) const {
  if (id >= 0 && static_cast<uint64_t>(id) < present_.size() && present_[static_cast<size_t>(id)]) {
    if (found) *found = true;
    return dense_[static_cast<size_t>(id)];
  }
  auto it = sparse_.find(id);
  if (found) *found = it != sparse_.end();
  return it == sparse_.end() ? std::string_view() : std::string_view(it->second);
}

StringId RankStrings::Intern(int64_t id) {
  constexpr int64_t kDenseLimit = int64_t{1} << 22;
  if (id >= 0 && id < kDenseLimit) {
    size_t i = static_cast<size_t>(id);
    if (i < cache_.size() && cache_[i] != kUnset) return cache_[i];
    if (i >= cache_.size()) cache_.resize(std::max(i + 1, cache_.size() * 2), kUnset);
  } else {
    auto it = far_.find(id);
    if (it != far_.end()) return it->second;
  }
  bool found = false;
  std::string_view s = db_.Get(id, &found);
  if (!found) ++missing_;
  StringId sid = table_->Intern(s);
  if (id >= 0 && id < kDenseLimit) {
    cache_[static_cast<size_t>(id)] = sid;
  } else {
    far_[id] = sid;
  }
  return sid;
}

}  // namespace moetrace
