// A small RFC-4180 CSV reader for the profiler's CSV files.
//
// Fields may be quoted (with commas, doubled quotes and newlines inside);
// the header row names the columns and callers look columns up by name, so
// extra or reordered columns are fine. Errors name the file, the line and
// the column.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "formats/ascend/kept_buffer.h"

namespace moetrace {

class CsvTable {
 public:
  // Parses `text` (the whole file). `file` names it in error messages.
  // Throws InputError for an unterminated quote or an empty file.
  static CsvTable Parse(std::string_view text, std::string file);
  static CsvTable Load(const std::string& path);  // reads the file, then Parse

  CsvTable() = default;
  CsvTable(CsvTable&&) = default;
  CsvTable& operator=(CsvTable&&) = default;
  ~CsvTable();  // gives the span and row lists back to the thread

  const std::string& file() const { return file_; }
  const std::vector<std::string>& header() const { return header_; }
  size_t row_count() const { return rows_.size(); }
  // Rows with fewer fields than the header (their missing fields read as
  // absent), for the importers' import statistics.
  int64_t short_rows() const { return short_rows_; }
  // Line of the file where row `r` starts (header is line 1).
  int64_t line(size_t r) const { return rows_[r].line; }

  // Column index of `name` or -1.
  int Find(std::string_view name) const;
  // Column index of `name`; throws "FILE: line 1: missing column 'NAME'".
  int Require(std::string_view name) const;

  // Field of row r, column c ("" when the row is short or c < 0), with
  // surrounding quotes and whitespace trimmed.
  std::string_view Field(size_t r, int c) const;
  // Whether the field is empty or "N/A".
  bool IsAbsent(size_t r, int c) const;
  // Numeric fields: throw "FILE: line L: column 'NAME': expected a number, got 'X'".
  int64_t Int(size_t r, int c) const;
  int64_t Scaled(size_t r, int c, int scale) const;  // decimal * 10^scale
  int64_t MicrosNs(size_t r, int c) const { return Scaled(r, c, 3); }
  double Double(size_t r, int c) const;
  // Double of `field`, the text Field(r, c) gave (read once by a caller
  // that also tests it for absence: the trims were a fifth of the reader).
  double DoubleOf(std::string_view field, size_t r, int c) const;
  // Whether a field's text is "", "N/A" or "NA" (IsAbsent of its text).
  static bool AbsentText(std::string_view f) { return f.empty() || f == "N/A" || f == "NA"; }
  [[noreturn]] void Fail(size_t r, int c, std::string_view what) const;

 private:
  // All fields live in one buffer, the file's text rewritten in place (no
  // allocation per field or row, no copy of a field without quotes).
  // Offset and size of a field in 8 bytes: the span list is the table's
  // largest part (a span per field, ~as large as the text) and is read
  // once per field accessed, so its size is what the reads cost.
  struct Span {
    static constexpr int kSizeBits = 24;  // fields up to 16 MiB
    static constexpr uint64_t kMaxSize = (uint64_t{1} << kSizeBits) - 1;
    uint64_t bits = 0;
    Span() = default;
    Span(uint64_t offset, uint64_t size) : bits(offset << kSizeBits | size) {}
    uint64_t offset() const { return bits >> kSizeBits; }
    uint32_t size() const { return static_cast<uint32_t>(bits & kMaxSize); }
  };
  struct Row {
    int64_t line = 0;
    uint32_t first = 0;  // index into spans_
    uint32_t count = 0;
  };
  // Parses data_ (the table's copy of the file, written in place).
  void Split(std::string file);
  // The lists of the thread's last table, capacity kept (kept_buffer.h:
  // fresh lists fault their pages in, and were as large as the text).
  struct Lists {
    std::vector<Span> spans;
    std::vector<Row> rows;
  };
  static Lists& KeptLists();

  std::string file_;
  std::vector<std::string> header_;
  KeptBuffer data_;  // the text, in the thread's kept buffer when free
  std::vector<Span> spans_;
  std::vector<Row> rows_;
  int64_t short_rows_ = 0;
};

// Whether `text` starts with a CSV header containing column `name`.
bool CsvHeaderHas(std::string_view text, std::string_view name);

}  // namespace moetrace
