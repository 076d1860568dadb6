// A Block message (mtrace.proto) parsed in place: its columns' data are
// views into the decompressed record, not copies (protobuf's parser copies
// every column's bytes into a std::string, ~10 bytes per event).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "formats/proto/mtrace.pb.h"

namespace moetrace::native {

// The fields of a Column message; accessors named as protobuf's.
struct ColumnView {
  uint32_t field_ = 0;
  ColumnEncoding encoding_ = CONSTANT;
  int64_t constant_ = 0;
  std::string_view data_;
  uint32_t width_ = 0;
  int64_t first_ = 0;

  uint32_t field() const { return field_; }
  ColumnEncoding encoding() const { return encoding_; }
  int64_t constant() const { return constant_; }
  std::string_view data() const { return data_; }
  uint32_t width() const { return width_; }
  int64_t first() const { return first_; }
};

// A view of a protobuf Column (for tests and cold paths).
ColumnView ViewOf(const Column& c);

struct BlockView {
  BlockKind kind_ = EVENTS;
  uint32_t count_ = 0;
  bool values_are_integers_ = false;
  std::vector<ColumnView> columns_;  // reused between blocks

  BlockKind kind() const { return kind_; }
  uint32_t count() const { return count_; }
  bool values_are_integers() const { return values_are_integers_; }
  const std::vector<ColumnView>& columns() const { return columns_; }
};

// Parses the serialized Block in [p, p + n) into `out` (which keeps
// pointing into those bytes). Follows protobuf's rules for what it keeps
// (last value of a scalar field wins, unknown fields and fields of an
// unexpected wire type are skipped, 32-bit fields keep the low bits of
// their varint). Returns false for bytes that are not a valid message
// (truncated varint or length, invalid tag or wire type).
bool ParseBlockView(const uint8_t* p, size_t n, BlockView* out);

}  // namespace moetrace::native
