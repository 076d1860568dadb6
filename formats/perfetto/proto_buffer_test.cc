#include "formats/perfetto/proto_buffer.h"

#include <gtest/gtest.h>

#include <limits>

#include "proto/perfetto_trace.pb.h"

namespace moetrace {
namespace {

namespace pf = ::moetrace::perfetto;

// Encodes with ProtoBuffer, decodes with protoc's generated code.
TEST(ProtoBuffer, NestedMessagesOfEverySizeDecode) {
  for (size_t len : {0u, 1u, 120u, 127u, 128u, 300u, 16383u, 16384u, 70000u}) {
    const std::string name(len, 'x');
    ProtoBuffer b;
    size_t p = b.BeginNested(1);  // Trace.packet
    b.UintField(8, 1234567890123456789ull);
    b.UintField(10, 7);
    size_t d = b.BeginNested(12);  // interned_data
    size_t e = b.BeginNested(2);   // event_names
    b.UintField(1, 42);
    b.StringField(2, name);
    b.EndNested(e);
    b.EndNested(d);
    size_t te = b.BeginNested(11);  // track_event
    b.Fixed64Field(47, 0xFFFFFFFFFFFFFFFFull);
    b.DoubleField(44, -2.5);
    size_t a = b.BeginNested(4);
    b.UintField(1, 3);
    b.IntField(4, -5);
    b.EndNested(a);
    b.EndNested(te);
    b.EndNested(p);

    pf::Trace t;
    ASSERT_TRUE(t.ParseFromString(b.data())) << len;
    ASSERT_EQ(t.packet_size(), 1);
    const pf::TracePacket& pk = t.packet(0);
    EXPECT_EQ(pk.timestamp(), 1234567890123456789ull);
    EXPECT_EQ(pk.trusted_packet_sequence_id(), 7u);
    ASSERT_EQ(pk.interned_data().event_names_size(), 1);
    EXPECT_EQ(pk.interned_data().event_names(0).iid(), 42u);
    EXPECT_EQ(pk.interned_data().event_names(0).name(), name);
    ASSERT_EQ(pk.track_event().flow_ids_size(), 1);
    EXPECT_EQ(pk.track_event().flow_ids(0), 0xFFFFFFFFFFFFFFFFull);
    EXPECT_EQ(pk.track_event().double_counter_value(), -2.5);
    ASSERT_EQ(pk.track_event().debug_annotations_size(), 1);
    EXPECT_EQ(pk.track_event().debug_annotations(0).int_value(), -5);
    // Minimal length prefixes: protoc (which orders fields differently)
    // needs exactly as many bytes.
    EXPECT_EQ(t.ByteSizeLong(), b.size()) << len;
  }
}

TEST(ProtoBuffer, NegativeInt32IsSignExtendedLikeProtoc) {
  ProtoBuffer b;
  b.IntField(1, std::numeric_limits<int32_t>::min());
  pf::ProcessDescriptor pd;
  ASSERT_TRUE(pd.ParseFromString(b.data()));
  EXPECT_EQ(pd.pid(), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(pd.SerializeAsString(), b.data());
}

}  // namespace
}  // namespace moetrace
