#include "formats/ascend/csv_table.h"

#include <algorithm>

#include "formats/decimal.h"
#include "formats/errors.h"

namespace moetrace {
namespace {

// Characters that end or quote an unquoted run of a field.
struct SpecialChars {
  bool is[256] = {};
  SpecialChars() { is[static_cast<unsigned char>(',')] = is[static_cast<unsigned char>('\n')] =
                       is[static_cast<unsigned char>('\r')] = is[static_cast<unsigned char>('"')] = true; }
};
const SpecialChars kSpecial;

// Splits one record of `d` (the table's own copy of the file) starting at
// `pos` into fields, their spans appended to `spans`; returns false at end
// of text. Fields are rewritten in place: a field's text starts where the
// field starts in the file and is never longer than what it was read from,
// so a plain field is a span of the file as read (no copy), and a quoted
// one keeps its inner text with doubled quotes collapsed.
template <typename Span>
bool NextRecord(char* s, size_t n, size_t* pos, int64_t* line, std::vector<Span>* spans,
                const std::string& file) {
  size_t i = *pos;
  if (i >= n) return false;
  const int64_t start_line = *line;
  size_t start = i, w = i;  // the field's start and its write cursor
  bool was_quoted = false;
  auto end_field = [&] {
    if (w - start > Span::kMaxSize) {
      ThrowInputError(file, "line " + std::to_string(*line), "a field longer than 16 MiB");
    }
    spans->push_back(Span(start, w - start));
  };
  while (true) {
    if (w == i) {
      while (i < n && !kSpecial.is[static_cast<unsigned char>(s[i])]) ++i;
      w = i;
    } else {
      while (i < n && !kSpecial.is[static_cast<unsigned char>(s[i])]) s[w++] = s[i++];
    }
    if (i >= n) break;
    const char c = s[i];
    if (c == ',') {
      end_field();
      start = w = ++i;
      was_quoted = false;
    } else if (c == '\n') {
      break;
    } else if (c == '\r') {
      if (i + 1 < n && s[i + 1] == '\n') {
        ++i;  // CRLF: the '\n' ends the record
      } else {
        s[w++] = s[i++];
      }
    } else {  // '"': opens a quoted part when only blanks precede it
      bool blank = !was_quoted;
      for (size_t k = start; blank && k < w; ++k) blank = s[k] == ' ' || s[k] == '\t';
      ++i;
      if (!blank) {
        s[w++] = '"';
        continue;
      }
      w = start;
      was_quoted = true;
      bool closed = false;
      while (i < n) {
        char q = s[i];
        if (q == '"') {
          if (i + 1 < n && s[i + 1] == '"') {
            s[w++] = '"';
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        if (q == '\n') ++*line;
        s[w++] = q;
        ++i;
      }
      if (!closed) {
        ThrowInputError(file, "line " + std::to_string(start_line), "unterminated quoted field");
      }
    }
  }
  end_field();
  ++*line;
  *pos = i + 1;
  return true;
}

}  // namespace

CsvTable::Lists& CsvTable::KeptLists() {
  thread_local Lists lists;
  return lists;
}

CsvTable::~CsvTable() {
  // Kept when within the bound and larger than what the thread holds.
  Lists& kept = KeptLists();
  if (spans_.capacity() * sizeof(Span) <= kKeptBufferBytes &&
      spans_.capacity() > kept.spans.capacity()) {
    spans_.clear();
    kept.spans.swap(spans_);
  }
  if (rows_.capacity() * sizeof(Row) <= kKeptBufferBytes && rows_.capacity() > kept.rows.capacity()) {
    rows_.clear();
    kept.rows.swap(rows_);
  }
}

CsvTable CsvTable::Parse(std::string_view text, std::string file) {
  CsvTable t;
  t.data_ = KeptBuffer::Copy(KeptBuffer::kCsvText, text, 0);
  t.Split(std::move(file));
  return t;
}

CsvTable CsvTable::Load(const std::string& path) {
  CsvTable t;
  t.data_ = KeptBuffer::Load(KeptBuffer::kCsvText, path, 0);
  t.Split(path);
  return t;
}

void CsvTable::Split(std::string file) {
  CsvTable& t = *this;
  t.file_ = std::move(file);
  t.spans_.swap(KeptLists().spans);
  t.rows_.swap(KeptLists().rows);
  t.spans_.clear();
  t.rows_.clear();
  t.short_rows_ = 0;
  char* const d = t.data_.data();
  const size_t n = t.data_.size();
  size_t pos = 0;
  if (n >= 3 && static_cast<unsigned char>(d[0]) == 0xEF &&
      static_cast<unsigned char>(d[1]) == 0xBB && static_cast<unsigned char>(d[2]) == 0xBF) {
    pos = 3;  // UTF-8 BOM
  }
  int64_t line = 1;
  auto span_text = [d](const Span& s) { return TrimField(std::string_view(d + s.offset(), s.size())); };
  if (!NextRecord(d, n, &pos, &line, &t.spans_, t.file_) ||
      (t.spans_.size() == 1 && span_text(t.spans_[0]).empty())) {
    ThrowInputError(t.file_, "line 1", "expected a CSV header, found an empty file");
  }
  for (const Span& s : t.spans_) t.header_.emplace_back(span_text(s));
  t.spans_.clear();
  // Reserve once rather than grow (and copy, and fault in) the lists
  // log(n) times on a large file: a row per line, as many fields as the
  // header, and never more fields than bytes (each ends at a ',' or '\n').
  if (pos < n) {
    size_t lines = 1 + static_cast<size_t>(std::count(d + pos, d + n, '\n'));
    t.rows_.reserve(lines);
    t.spans_.reserve(std::min(lines * t.header_.size(), n - pos + 1));
  }
  while (true) {
    int64_t row_line = line;
    size_t first = t.spans_.size();
    if (!NextRecord(d, n, &pos, &line, &t.spans_, t.file_)) break;
    size_t count = t.spans_.size() - first;
    if (count == 1 && span_text(t.spans_[first]).empty()) {  // blank line
      t.spans_.resize(first);
      continue;
    }
    if (t.spans_.size() > UINT32_MAX) ThrowInputError(t.file_, "line " + std::to_string(row_line), "too many fields");
    if (count < t.header_.size()) {
      // A short last row with no line end is a file cut short, not a row
      // the writer left short: the rows before it are not all there either.
      if (pos >= n && d[n - 1] != '\n') {
        ThrowInputError(t.file_, "line " + std::to_string(row_line),
                        "the file ends inside a row (" + std::to_string(count) + " of " +
                            std::to_string(t.header_.size()) + " fields): truncated");
      }
      ++t.short_rows_;
    }
    t.rows_.push_back(Row{row_line, static_cast<uint32_t>(first), static_cast<uint32_t>(count)});
  }
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
  return TrimField(std::string_view(data_.data() + s.offset(), s.size()));
}

bool CsvTable::IsAbsent(size_t r, int c) const { return AbsentText(Field(r, c)); }

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

double CsvTable::Double(size_t r, int c) const { return DoubleOf(Field(r, c), r, c); }

double CsvTable::DoubleOf(std::string_view f, size_t r, int c) const {
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
