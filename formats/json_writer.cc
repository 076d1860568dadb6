#include "formats/json_writer.h"

#include <fmt/format.h>

#include <cmath>

#include "formats/json_text.h"

namespace moetrace {
void JsonWriter::Newline() {
  if (!pretty_) return;
  out_.push_back('\n');
  out_.append(first_.size() * 2, ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (first_.empty()) return;
  if (!first_.back()) out_.push_back(',');
  first_.back() = false;
  Newline();
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_.push_back('{');
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  bool empty = first_.back();
  first_.pop_back();
  if (!empty) Newline();
  out_.push_back('}');
  if (first_.empty() && pretty_) out_.push_back('\n');
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_.push_back('[');
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  bool empty = first_.back();
  first_.pop_back();
  if (!empty) Newline();
  out_.push_back(']');
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  BeforeValue();
  AppendJsonString(key, &out_);
  out_.append(pretty_ ? ": " : ":");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view s) {
  BeforeValue();
  AppendJsonString(s, &out_);
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t v) {
  BeforeValue();
  fmt::format_to(std::back_inserter(out_), "{}", v);
  return *this;
}

JsonWriter& JsonWriter::Uint(uint64_t v) {
  BeforeValue();
  fmt::format_to(std::back_inserter(out_), "{}", v);
  return *this;
}

JsonWriter& JsonWriter::Double(double v) {
  BeforeValue();
  if (!std::isfinite(v)) {
    out_.append("null");
  } else if (v == std::floor(v) && std::fabs(v) < 9.0e15) {
    fmt::format_to(std::back_inserter(out_), "{}", static_cast<int64_t>(v));
  } else {
    fmt::format_to(std::back_inserter(out_), "{}", v);
  }
  return *this;
}

JsonWriter& JsonWriter::Bool(bool v) {
  BeforeValue();
  out_.append(v ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_.append("null");
  return *this;
}

JsonWriter& JsonWriter::Raw(std::string_view json) {
  BeforeValue();
  out_.append(json);
  return *this;
}

}  // namespace moetrace
