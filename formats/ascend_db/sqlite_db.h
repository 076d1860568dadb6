// A read-only SQLite database and its prepared statements, for the Ascend
// DB importer. Every SQLite failure becomes an InputError naming the file,
// so a malformed or truncated database never escapes as a crash.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace moetrace {

class SqliteDb;

// One prepared statement. Step() returns false at the end of the rows.
class SqliteStmt {
 public:
  SqliteStmt(const SqliteDb& db, const std::string& sql);
  ~SqliteStmt();
  SqliteStmt(const SqliteStmt&) = delete;
  SqliteStmt& operator=(const SqliteStmt&) = delete;

  void Bind(int index, int64_t value);  // 1-based, as in SQLite
  bool Step();
  void Reset();
  // Column kinds: NULL, a string where a number belongs, ... are reported,
  // not guessed: Int() returns false and leaves *out unchanged.
  bool IsNull(int col) const;
  bool Int(int col, int64_t* out) const;
  // A number stored as REAL (NUMERIC columns such as totalAllocate) or an
  // integer; false for NULL, text and blobs.
  bool Real(int col, double* out) const;
  std::string_view Text(int col) const;  // empty for NULL

 private:
  const SqliteDb& db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

class SqliteDb {
 public:
  // Opens `path` read-only and immutable (no locks, no journal, never
  // written); throws InputError when it is not an SQLite database.
  explicit SqliteDb(const std::string& path);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  const std::string& path() const { return path_; }
  bool HasTable(std::string_view name) const;
  // Column names of a table (empty when it is absent).
  std::vector<std::string> Columns(std::string_view table) const;
  bool HasColumn(std::string_view table, std::string_view column) const;
  // Throws InputError "PATH: SQLite: WHAT (while CONTEXT)".
  [[noreturn]] void Fail(const std::string& context) const;
  sqlite3* handle() const { return db_; }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
  std::vector<std::string> tables_;
};

// Whether the first 16 bytes of `path` are SQLite's magic "SQLite format 3\0".
bool HasSqliteMagic(const std::string& path);

}  // namespace moetrace
