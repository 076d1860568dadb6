#include "formats/ascend/csv_table.h"

#include <fstream>
#include <sstream>

#include "formats/decimal.h"
#include "formats/errors.h"

namespace moetrace {
namespace {

// Splits one record starting at `pos` into fields appended to `data`
// (their spans to `spans`); returns false at end of text. Quoted fields
// keep their inner text with doubled quotes collapsed.
template <typename Span>
bool NextRecord(std::string_view text, size_t* pos, int64_t* line, std::string* data,
                std::vector<Span>* spans, const std::string& file) {
  if (*pos >= text.size()) return false;
  int64_t start_line = *line;
  size_t field_start = data->size();
  auto field_size = [&] { return data->size() - field_start; };
  auto end_field = [&] {
    spans->push_back(Span{field_start, static_cast<uint32_t>(field_size())});
    field_start = data->size();
  };
  std::string& field = *data;
  bool in_quotes = false;
  bool was_quoted = false;
  size_t i = *pos;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++*line;
        field.push_back(c);
      }
      continue;
    }
    if (c == '"' && !was_quoted &&
        std::string_view(*data).substr(field_start).find_first_not_of(" \t") ==
            std::string_view::npos) {
      data->resize(field_start);
      in_quotes = true;
      was_quoted = true;
    } else if (c == ',') {
      end_field();
      was_quoted = false;
    } else if (c == '\n') {
      break;
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      // CRLF: the '\n' ends the record.
    } else {
      field.push_back(c);
    }
  }
  if (in_quotes) {
    ThrowInputError(file, "line " + std::to_string(start_line),
                    "unterminated quoted field");
  }
  end_field();
  ++*line;
  *pos = i + 1;
  return true;
}

}  // namespace

CsvTable CsvTable::Parse(std::string_view text, std::string file) {
  CsvTable t;
  t.file_ = std::move(file);
  if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF &&
      static_cast<unsigned char>(text[1]) == 0xBB && static_cast<unsigned char>(text[2]) == 0xBF) {
    text.remove_prefix(3);  // UTF-8 BOM
  }
  size_t pos = 0;
  int64_t line = 1;
  t.data_.reserve(text.size());
  auto span_text = [&t](const Span& s) {
    return TrimField(std::string_view(t.data_).substr(s.offset, s.size));
  };
  if (!NextRecord(text, &pos, &line, &t.data_, &t.spans_, t.file_) ||
      (t.spans_.size() == 1 && span_text(t.spans_[0]).empty())) {
    ThrowInputError(t.file_, "line 1", "expected a CSV header, found an empty file");
  }
  for (const Span& s : t.spans_) t.header_.emplace_back(span_text(s));
  t.spans_.clear();
  t.data_.clear();
  while (true) {
    int64_t row_line = line;
    size_t first = t.spans_.size();
    size_t data_mark = t.data_.size();
    if (!NextRecord(text, &pos, &line, &t.data_, &t.spans_, t.file_)) break;
    size_t count = t.spans_.size() - first;
    if (count == 1 && span_text(t.spans_[first]).empty()) {  // blank line
      t.spans_.resize(first);
      t.data_.resize(data_mark);
      continue;
    }
    if (t.spans_.size() > UINT32_MAX) ThrowInputError(t.file_, "line " + std::to_string(row_line), "too many fields");
    t.rows_.push_back(Row{row_line, static_cast<uint32_t>(first), static_cast<uint32_t>(count)});
  }
  return t;
}

CsvTable CsvTable::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ThrowInputError(path, "", "cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return Parse(ss.str(), path);
}

int CsvTable::Find(std::string_view name) const {
  for (size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return static_cast<int>(i);
  }
  return -1;
}

int CsvTable::Require(std::string_view name) const {
  int c = Find(name);
  if (c < 0) {
    ThrowInputError(file_, "line 1", "missing column '" + std::string(name) + "' in the header");
  }
  return c;
}

std::string_view CsvTable::Field(size_t r, int c) const {
  const Row& row = rows_[r];
  if (c < 0 || static_cast<uint32_t>(c) >= row.count) return {};
  const Span& s = spans_[row.first + c];
  return TrimField(std::string_view(data_).substr(s.offset, s.size));
}

bool CsvTable::IsAbsent(size_t r, int c) const {
  std::string_view f = Field(r, c);
  return f.empty() || f == "N/A" || f == "NA";
}

void CsvTable::Fail(size_t r, int c, std::string_view what) const {
  std::string col = c >= 0 && static_cast<size_t>(c) < header_.size() ? header_[c] : "?";
  ThrowInputError(file_, "line " + std::to_string(rows_[r].line),
                  "column '" + col + "': " + std::string(what));
}

int64_t CsvTable::Scaled(size_t r, int c, int scale) const {
  std::string_view f = Field(r, c);
  int64_t v = 0;
  if (!ParseScaledDecimal(f, scale, &v)) {
    std::string shown(f.substr(0, 40));
    Fail(r, c, "expected a number, got '" + shown + "'");
  }
  return v;
}

int64_t CsvTable::Int(size_t r, int c) const { return Scaled(r, c, 0); }

double CsvTable::Double(size_t r, int c) const {
  std::string_view f = Field(r, c);
  // Exact to 1e-9 of the unit, which is far below what the profiler prints.
  int64_t v = 0;
  if (ParseScaledDecimal(f, 9, &v)) return static_cast<double>(v) / 1e9;
  int64_t big = 0;
  if (ParseScaledDecimal(f, 0, &big)) return static_cast<double>(big);
  std::string shown(f.substr(0, 40));
  Fail(r, c, "expected a number, got '" + shown + "'");
}

bool CsvHeaderHas(std::string_view text, std::string_view name) {
  size_t end = text.find('\n');
  std::string_view first = text.substr(0, end == std::string_view::npos ? text.size() : end);
  size_t p = first.find(name);
  if (p == std::string_view::npos) return false;
  // Must be a whole field.
  bool left = p == 0 || first[p - 1] == ',' || first[p - 1] == '"' ||
              static_cast<unsigned char>(first[p - 1]) == 0xBF;
  size_t q = p + name.size();
  bool right = q == first.size() || first[q] == ',' || first[q] == '"' || first[q] == '\r';
  return left && right;
}

}  // namespace moetrace
