// A small streaming JSON writer with deterministic output: callers emit
// keys in the order they want (sorted, for stable documents), doubles are
// printed in their shortest round-trip form, strings are escaped by
// AppendJsonString (formats/json_text.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace moetrace {

class JsonWriter {
 public:
  explicit JsonWriter(bool pretty = true) : pretty_(pretty) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view s);
  JsonWriter& Int(int64_t v);
  JsonWriter& Uint(uint64_t v);
  JsonWriter& Double(double v);  // NaN and infinities become null
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  // Inserts an already-serialised JSON value (e.g. a config document).
  JsonWriter& Raw(std::string_view json);

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void BeforeValue();
  void Newline();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element yet
  bool after_key_ = false;
  bool pretty_;
};

}  // namespace moetrace
