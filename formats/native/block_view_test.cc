#include "formats/native/block_view.h"

#include <limits>
#include <string>

#include <gtest/gtest.h>

namespace moetrace::native {
namespace {

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

TEST(BlockView, ReadsWhatProtobufWrote) {
  Block b;
  b.set_kind(SAMPLES);
  b.set_count(65536);
  b.set_values_are_integers(true);
  Column* c = b.add_columns();
  c->set_field(2);
  c->set_encoding(DELTA);
  c->set_constant(-5);
  c->set_first(std::numeric_limits<int64_t>::min());
  c->set_width(3);
  c->set_data(std::string("\x01\x00\x02", 3));
  b.add_columns()->set_field(1);  // all defaults but the field
  std::string bytes = b.SerializeAsString();
  BlockView v;
  ASSERT_TRUE(ParseBlockView(Bytes(bytes), bytes.size(), &v));
  EXPECT_EQ(v.kind(), SAMPLES);
  EXPECT_EQ(v.count(), 65536u);
  EXPECT_TRUE(v.values_are_integers());
  ASSERT_EQ(v.columns().size(), 2u);
  const ColumnView& a = v.columns()[0];
  EXPECT_EQ(a.field(), 2u);
  EXPECT_EQ(a.encoding(), DELTA);
  EXPECT_EQ(a.constant(), -5);
  EXPECT_EQ(a.first(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(a.width(), 3u);
  EXPECT_EQ(a.data(), std::string_view("\x01\x00\x02", 3));
  EXPECT_EQ(a.data().data(), bytes.data() + bytes.find(std::string("\x01\x00\x02", 3)));
  EXPECT_EQ(v.columns()[1].field(), 1u);
  EXPECT_EQ(v.columns()[1].encoding(), CONSTANT);
  EXPECT_TRUE(v.columns()[1].data().empty());
  // Parsing again reuses the view: nothing of the last block remains.
  std::string empty;
  ASSERT_TRUE(ParseBlockView(Bytes(empty), 0, &v));
  EXPECT_EQ(v.count(), 0u);
  EXPECT_TRUE(v.columns().empty());
}

TEST(BlockView, SkipsUnknownFieldsAndRejectsBrokenBytes) {
  Block b;
  b.set_count(7);
  std::string bytes = b.SerializeAsString();
  // Unknown fields of every wire type, and a known field (count) with an
  // unexpected wire type: skipped, as protobuf does.
  bytes += std::string("\x48\x05", 2);                   // field 9 varint
  bytes += std::string("\x51", 1) + std::string(8, 'x');  // field 10 fixed64
  bytes += std::string("\x5d", 1) + std::string(4, 'y');  // field 11 fixed32
  bytes += std::string("\x62\x02zz", 4);                 // field 12 bytes
  bytes += std::string("\x12\x01q", 3);                  // field 2 as bytes
  BlockView v;
  ASSERT_TRUE(ParseBlockView(Bytes(bytes), bytes.size(), &v));
  EXPECT_EQ(v.count(), 7u);
  Block ref;
  ASSERT_TRUE(ref.ParseFromString(bytes));
  EXPECT_EQ(ref.count(), 7u);
  // Truncated varint, length past the end, field number 0, group.
  for (std::string bad : {std::string("\x10\x80", 2), std::string("\x1a\x05\x08", 3),
                          std::string("\x00\x01", 2), std::string("\x1b", 1)}) {
    EXPECT_FALSE(ParseBlockView(Bytes(bad), bad.size(), &v)) << bad.size();
  }
  // Too many (empty) columns for a block: bounded before allocating.
  std::string many;
  for (int i = 0; i < 1000; ++i) many += std::string("\x1a\x00", 2);
  EXPECT_FALSE(ParseBlockView(Bytes(many), many.size(), &v));
}

}  // namespace
}  // namespace moetrace::native
