#include "formats/ascend_db/db_context.h"

namespace moetrace {

bool DbContext::Table(std::string_view table) {
  if (db.HasTable(table)) return true;
  Stat("skipped.db.table_missing." + std::string(table));
  return false;
}

std::string DbContext::Col(std::string_view table, std::string_view column) {
  if (db.HasColumn(table, column)) return "\"" + std::string(column) + "\"";
  Stat("skipped.db.column_missing." + std::string(table) + "." + std::string(column));
  return "NULL";
}

std::string DbContext::DeviceFilter(std::string_view table, const char* column) {
  if (device < 0 || !db.HasColumn(table, column)) return "";
  return std::string(" WHERE \"") + column + "\" = " + std::to_string(device);
}

size_t TrackMap::Get(int64_t native_id) {
  if (native_id == last_id_) return last_;
  auto it = index_.find(native_id);
  if (it == index_.end()) {
    size_t i = rank_->tracks.size();
    rank_->AddTrack(kind_, role_, prefix_ + std::to_string(native_id), native_id);
    it = index_.emplace(native_id, i).first;
  }
  last_id_ = native_id;
  last_ = it->second;
  return last_;
}

}  // namespace moetrace
