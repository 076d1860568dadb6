// A minimal protobuf wire encoder (append-only, protozero style): the Perfetto
// exporter writes packets field by field into one reused buffer, with no
// message objects and no per-event allocation.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace moetrace {

class ProtoBuffer {
 public:
  enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2 };

  void Varint(uint64_t v) {
    char tmp[10];
    size_t n = 0;
    while (v >= 0x80) {
      tmp[n++] = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    tmp[n++] = static_cast<char>(v);
    data_.append(tmp, n);
  }
  void Tag(uint32_t field, WireType type) { Varint((uint64_t{field} << 3) | type); }

  void UintField(uint32_t field, uint64_t v) {
    Tag(field, kVarint);
    Varint(v);
  }
  // int32/int64: negative values are sign-extended to 10 bytes, like protoc.
  void IntField(uint32_t field, int64_t v) { UintField(field, static_cast<uint64_t>(v)); }
  void BoolField(uint32_t field, bool v) { UintField(field, v ? 1 : 0); }
  void Fixed64Field(uint32_t field, uint64_t v) {
    Tag(field, kFixed64);
    char tmp[8];
    for (int i = 0; i < 8; ++i) tmp[i] = static_cast<char>(v >> (8 * i));
    data_.append(tmp, 8);
  }
  void DoubleField(uint32_t field, double v) { Fixed64Field(field, std::bit_cast<uint64_t>(v)); }
  void StringField(uint32_t field, std::string_view s) {
    Tag(field, kLengthDelimited);
    Varint(s.size());
    data_.append(s.data(), s.size());
  }

  // Nested message: BeginNested reserves one length byte; EndNested fills it
  // in, shifting the body when the length needs more bytes (rare: bodies are
  // mostly short, and the shift is a memmove of the body only).
  size_t BeginNested(uint32_t field) {
    Tag(field, kLengthDelimited);
    data_.push_back('\0');
    return data_.size() - 1;
  }
  void EndNested(size_t length_pos) {
    const size_t body = length_pos + 1;
    const uint64_t len = data_.size() - body;
    if (len < 0x80) {
      data_[length_pos] = static_cast<char>(len);
      return;
    }
    char tmp[10];
    size_t n = 0;
    uint64_t v = len;
    while (v >= 0x80) {
      tmp[n++] = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    tmp[n++] = static_cast<char>(v);
    data_.insert(body, n - 1, '\0');
    std::memcpy(&data_[length_pos], tmp, n);
  }

  const std::string& data() const { return data_; }
  size_t size() const { return data_.size(); }
  void Clear() { data_.clear(); }

 private:
  std::string data_;
};

}  // namespace moetrace
