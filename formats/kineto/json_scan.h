// A small structural scanner for the outer layers of a Kineto file: it walks
// the top-level object and splits the traceEvents array into its elements,
// so each event is parsed by simdjson on-demand as its own small document.
// That keeps simdjson's structural index bounded by one event instead of
// growing with the file (it costs 4 bytes per JSON token).
#pragma once

#include <cstddef>
#include <string_view>

namespace moetrace {

class JsonScanner {
 public:
  JsonScanner(const char* begin, const char* end) : begin_(begin), p_(begin), end_(end) {}

  const char* pos() const { return p_; }
  void set_pos(const char* p) { p_ = p; }
  size_t offset() const { return size_t(p_ - begin_); }
  bool at_end() const { return p_ >= end_; }
  const char* end() const { return end_; }

  void SkipWhitespace() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  // Skips a UTF-8 byte order mark at the current position.
  void SkipBom();
  // Consumes `c` (after whitespace); false when the next byte is not `c`.
  bool Consume(char c);
  char Peek() { SkipWhitespace(); return p_ < end_ ? *p_ : '\0'; }

  // Reads a string at the current position; `out` gets its raw content
  // (escapes left as written). False when unterminated or not a string.
  bool ReadString(std::string_view* out);
  // Skips one JSON value (string, number, literal, object, array) and
  // returns its start; nullptr when the input ends inside it. Only nesting
  // and strings are checked: the content is validated when parsed.
  const char* SkipValue();

 private:
  const char* SkipStringFrom(const char* p);  // p at the opening quote
  const char* SkipContainerFrom(const char* p);  // p at '{' or '['
  const char* begin_;
  const char* p_;
  const char* end_;
};

}  // namespace moetrace
