#include "formats/ascend_db/sqlite_db.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "formats/errors.h"

namespace moetrace {
namespace {

// SQLite URIs need '%', '?' and '#' escaped in the path.
std::string FileUri(const std::string& path) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      static const char kHex[] = "0123456789ABCDEF";
      uri += '%';
      uri += kHex[(static_cast<unsigned char>(c) >> 4) & 15];
      uri += kHex[static_cast<unsigned char>(c) & 15];
    } else {
      uri += c;
    }
  }
  // immutable: the file is a finished export; SQLite then takes no lock and
  // never looks for a journal or WAL beside it (read-only media work too).
  return uri + "?mode=ro&immutable=1";
}

}  // namespace

bool HasSqliteMagic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[16] = {};
  in.read(head, sizeof head);
  return in.gcount() == 16 && std::memcmp(head, "SQLite format 3\0", 16) == 0;
}

SqliteDb::SqliteDb(const std::string& path) : path_(path) {
  // NOMUTEX: a connection is used by one thread (each ReadRank opens its
  // own), and the serialized mode's lock per column call cost 13% of a read.
  int rc = sqlite3_open_v2(FileUri(path).c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    std::string what = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    ThrowInputError(path, "", "SQLite: " + what + " (while opening)");
  }
  // Pages mapped, not copied through read(): the file is immutable. A
  // failure here only loses speed.
  sqlite3_exec(db_, "PRAGMA mmap_size=4294967296; PRAGMA cache_size=-65536", nullptr, nullptr,
               nullptr);
  // Reading the schema is the first access to the file: a file that is not
  // a database, or is truncated in its first pages, fails here.
  try {
    SqliteStmt s(*this, "SELECT name FROM sqlite_master WHERE type='table'");
    while (s.Step()) tables_.emplace_back(s.Text(0));
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

SqliteDb::~SqliteDb() { sqlite3_close(db_); }

void SqliteDb::Fail(const std::string& context) const {
  ThrowInputError(path_, "", std::string("SQLite: ") + (db_ ? sqlite3_errmsg(db_) : "closed") +
                                 " (while " + context + ")");
}

bool SqliteDb::HasTable(std::string_view name) const {
  return std::find(tables_.begin(), tables_.end(), name) != tables_.end();
}

std::vector<std::string> SqliteDb::Columns(std::string_view table) const {
  std::vector<std::string> out;
  if (!HasTable(table)) return out;
  // Table names come from sqlite_master, never from the user: quoting is
  // still done so that a name holding '"' cannot break the pragma.
  std::string quoted = "\"";
  for (char c : table) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  SqliteStmt s(*this, "PRAGMA table_info(" + quoted + "\")");
  while (s.Step()) out.emplace_back(s.Text(1));
  return out;
}

bool SqliteDb::HasColumn(std::string_view table, std::string_view column) const {
  for (const std::string& c : Columns(table)) {
    if (c == column) return true;
  }
  return false;
}

SqliteStmt::SqliteStmt(const SqliteDb& db, const std::string& sql) : db_(db), sql_(sql) {
  if (sqlite3_prepare_v2(db.handle(), sql.c_str(), static_cast<int>(sql.size()), &stmt_,
                         nullptr) != SQLITE_OK) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
    db.Fail("preparing \"" + sql + "\"");
  }
}

SqliteStmt::~SqliteStmt() { sqlite3_finalize(stmt_); }

void SqliteStmt::Bind(int index, int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) db_.Fail("binding \"" + sql_ + "\"");
}

bool SqliteStmt::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.Fail("reading \"" + sql_ + "\"");
}

void SqliteStmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool SqliteStmt::IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

bool SqliteStmt::Int(int col, int64_t* out) const {
  // One column lookup (sqlite3_column_value), then the value's type and
  // integer: the hot path of every reader, called per value.
  sqlite3_value* v = sqlite3_column_value(stmt_, col);
  int t = sqlite3_value_type(v);
  if (t == SQLITE_INTEGER) {
    *out = sqlite3_value_int64(v);
    return true;
  }
  if (t == SQLITE_FLOAT) {
    // A whole number stored as REAL is a number; 1.5 where an id belongs is not.
    double d = sqlite3_value_double(v);
    if (d >= -9.2e18 && d <= 9.2e18 && static_cast<double>(static_cast<int64_t>(d)) == d) {
      *out = static_cast<int64_t>(d);
      return true;
    }
  }
  return false;
}

bool SqliteStmt::Real(int col, double* out) const {
  int t = sqlite3_column_type(stmt_, col);
  if (t == SQLITE_INTEGER || t == SQLITE_FLOAT) {
    *out = t == SQLITE_INTEGER ? static_cast<double>(sqlite3_column_int64(stmt_, col))
                               : sqlite3_column_double(stmt_, col);
    return true;
  }
  return false;
}

std::string_view SqliteStmt::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (!p) return {};
  return {reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
}

}  // namespace moetrace
