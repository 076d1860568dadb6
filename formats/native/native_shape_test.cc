// The optional shape column of EVENTS blocks (EV_SHAPE, FORMAT.md): shapes
// round-trip, a track without shapes reads back with an empty column, and a
// trace without shapes is written exactly as before the column existed.
#include <gtest/gtest.h>

#include "formats/native/native_test_util.h"
#include "formats/sample_trace.h"

namespace moetrace {
namespace {

using testing_native::Decode;
using testing_native::Encode;

// Two ranks of the sample trace; on rank 0, track 0, every third event gets
// one of two shapes except rows 16..23, so that with blocks of 4 rows most
// blocks hold the column and two (rows 16..19, 20..23) do not.
Trace WithShapes() {
  Trace t = MakeSampleTrace(2, 40, 11);
  Rank& r = t.ranks[0];
  EventTable& e = r.tracks[0].events;
  const StringId a = r.strings.Intern("[[4096, 1024], [1024]]");
  const StringId b = r.strings.Intern("81920,4096;8192,512");
  e.shape.assign(e.size(), 0);
  for (size_t i = 0; i < e.size(); ++i) {
    // Rows 16..23 stay without shapes: two whole blocks of 4 with no column.
    if (i % 3 == 0 && (i < 16 || i >= 24)) e.shape[i] = i % 2 == 0 ? a : b;
  }
  return t;
}

TEST(NativeShape, RoundTripsWithBlocksWithAndWithoutTheColumn) {
  const Trace t = WithShapes();
  ASSERT_GE(t.ranks[0].tracks[0].events.size(), 30u);
  for (uint32_t rows : {4u, 65536u}) {
    const Trace back = Decode(Encode(t, {-1, rows}));
    EXPECT_TRUE(back == t) << rows << " rows per block";
    const Rank& r = back.ranks[0];
    const EventTable& e = r.tracks[0].events;
    ASSERT_EQ(e.shape.size(), e.size());
    EXPECT_EQ(r.strings.Get(e.ShapeAt(0)), "[[4096, 1024], [1024]]");
    EXPECT_EQ(r.strings.Get(e.ShapeAt(3)), "81920,4096;8192,512");
    EXPECT_EQ(e.ShapeAt(1), 0u);
    EXPECT_EQ(e.ShapeAt(18), 0u);
    EXPECT_EQ(r.strings.Get(e.ShapeAt(24)), "[[4096, 1024], [1024]]");
    // Tracks that record no shapes pay nothing and read back empty.
    EXPECT_TRUE(r.tracks[1].events.shape.empty());
    EXPECT_TRUE(back.ranks[1].tracks[0].events.shape.empty());
  }
}

TEST(NativeShape, TwiceThroughTheFormatIsByteIdentical) {
  // convert a -> b.mtrace -> c.mtrace: the second file equals the first.
  const std::string b = Encode(WithShapes(), {-1, 4});
  const std::string c = Encode(Decode(b), {-1, 4});
  EXPECT_EQ(b, c);
}

TEST(NativeShape, NoShapesMeansNoColumnAndTheSameBytes) {
  Trace plain = MakeSampleTrace(2, 40, 11);
  Trace zeros = plain;
  // A column of zeros is "no shapes": it is not written at all.
  zeros.ranks[0].tracks[0].events.shape.assign(zeros.ranks[0].tracks[0].events.size(), 0);
  const std::string bytes = Encode(plain);
  EXPECT_EQ(Encode(zeros), bytes);
  const Trace back = Decode(bytes);
  EXPECT_TRUE(back == plain);
  for (const Rank& r : back.ranks) {
    for (const Track& tr : r.tracks) EXPECT_TRUE(tr.events.shape.empty());
  }
}

TEST(NativeShape, AReusedRankDropsTheShapesOfTheRankBefore) {
  // Rank 0 has shapes, rank 1 (same track sizes: decoded in place) none.
  Trace t = WithShapes();
  t.ranks[1] = t.ranks[0];
  t.ranks[1].rank = 1;
  t.ranks[1].tracks[0].events.shape.clear();
  auto src = OpenNativeBuffer(Encode(t, {-1, 4}), "mem.mtrace");
  Rank r;
  src->ReadRankInto(0, &r);
  EXPECT_EQ(r.tracks[0].events.shape.size(), r.tracks[0].events.size());
  src->ReadRankInto(1, &r);
  EXPECT_TRUE(r.tracks[0].events.shape.empty());
  EXPECT_TRUE(r == t.ranks[1]);
  src->ReadRankInto(0, &r);
  EXPECT_TRUE(r == t.ranks[0]);
}

TEST(NativeShape, AShapeIdOutsideTheStringTableIsRejected) {
  Trace t = WithShapes();
  t.ranks[0].tracks[0].events.shape[0] = StringId(t.ranks[0].strings.size());
  EXPECT_ANY_THROW(Encode(t));
}

}  // namespace
}  // namespace moetrace
