#include "formats/native/routing_parse.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "formats/native/simd_level.h"
#include "formats/native/varint_decode_avx2.h"
#include "formats/native/varint_decode_avx512.h"
#include "formats/proto/mtrace.pb.h"

namespace moetrace::native {
namespace {

std::vector<uint8_t> Bytes(const std::string& s) { return {s.begin(), s.end()}; }

// A header as the writer makes it: strings and tracks, then routing, then
// import stats.
RankHeader Header() {
  RankHeader h;
  h.set_rank(-7);
  h.set_host("node-3");
  h.add_strings("HcomAllToAllV");
  h.add_tracks()->set_event_count(12);
  RoutingRecord* r = h.add_routing();
  r->set_ts(std::numeric_limits<int64_t>::min());
  r->set_step(2);
  r->set_micro_batch(-1);
  r->set_layer(60);
  r->set_ep_size(64);
  for (int64_t t : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{63}, int64_t{64}, int64_t{300000},
                    std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}) {
    r->add_tokens_per_expert(t);
  }
  for (int32_t e : {0, 5, -3, std::numeric_limits<int32_t>::min()}) r->add_expert_to_ep_rank(e);
  r->add_copy_expert(3);
  r->add_copy_expert(-7);
  r->add_copy_ep_rank(12);
  r->add_copy_ep_rank(63);
  r->add_copy_tokens(150000);
  r->add_copy_tokens(-2);
  RoutingRecord* empty = h.add_routing();  // every field at its default
  (void)empty;
  h.add_import_stats()->set_key("rows");
  h.mutable_import_stats(0)->set_value(-5);
  return h;
}

TEST(SplitRankHeader, RoutingAsProtobufReadsItAndTheRestUntouched) {
  const RankHeader h = Header();
  const std::vector<uint8_t> bytes = Bytes(h.SerializeAsString());
  std::vector<uint8_t> rest;
  std::vector<moetrace::RoutingRecord> routing(5);  // reused: shrunk to 2
  routing[0].tokens_per_expert = {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9};
  ASSERT_TRUE(SplitRankHeader(bytes.data(), bytes.size(), &rest, &routing));
  ASSERT_EQ(routing.size(), 2u);
  EXPECT_EQ(routing[0].ts, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(routing[0].step, 2);
  EXPECT_EQ(routing[0].micro_batch, -1);
  EXPECT_EQ(routing[0].layer, 60);
  EXPECT_EQ(routing[0].ep_size, 64);
  EXPECT_EQ(routing[0].tokens_per_expert,
            (std::vector<int64_t>{0, 1, -1, 63, 64, 300000, std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ(routing[0].expert_to_ep_rank,
            (std::vector<int32_t>{0, 5, -3, std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(routing[0].copy_expert, (std::vector<int32_t>{3, -7}));
  EXPECT_EQ(routing[0].copy_ep_rank, (std::vector<int32_t>{12, 63}));
  EXPECT_EQ(routing[0].copy_tokens, (std::vector<int64_t>{150000, -2}));
  EXPECT_EQ(routing[1], (moetrace::RoutingRecord{0, 0, 0, 0, 0, {}, {}, {}, {}, {}}));

  RankHeader expect = h;
  expect.clear_routing();
  RankHeader got;
  ASSERT_TRUE(got.ParseFromArray(rest.data(), static_cast<int>(rest.size())));
  EXPECT_EQ(got.SerializeAsString(), expect.SerializeAsString());
}

TEST(SplitRankHeader, UnpackedElementsAndUnknownFieldsAsProtobuf) {
  // tokens_per_expert as two unpacked elements (field 6, wire type 0:
  // zigzag 3 = -2, 4 = 2), then an unknown fixed32 field 9 in the record.
  const std::vector<uint8_t> record = {0x30, 0x03, 0x30, 0x04, 0x4d, 1, 2, 3, 4, 0x10, 0x06};
  std::vector<uint8_t> bytes = {0x3a, static_cast<uint8_t>(record.size())};
  bytes.insert(bytes.end(), record.begin(), record.end());
  RankHeader reference;
  ASSERT_TRUE(reference.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())));
  std::vector<uint8_t> rest;
  std::vector<moetrace::RoutingRecord> routing;
  ASSERT_TRUE(SplitRankHeader(bytes.data(), bytes.size(), &rest, &routing));
  ASSERT_EQ(routing.size(), 1u);
  EXPECT_EQ(routing[0].tokens_per_expert, (std::vector<int64_t>{-2, 2}));
  EXPECT_EQ(routing[0].step, 3);
  EXPECT_EQ(reference.routing(0).step(), 3);
  EXPECT_TRUE(rest.empty());
}

TEST(SplitRankHeader, LongRunsOfMixedLengthsAsProtobuf) {
  // Token counts as a 6,144-rank trace has them, one and two bytes mixed at
  // random, with some longer values (and negatives) among them: the four-
  // at-a-time, one-at-a-time and general paths must all agree with protobuf,
  // whatever the run's length (0..40 values around each 8-byte boundary,
  // and 5,000).
  uint64_t x = 12345;
  auto next = [&x] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x >> 33;
  };
  RankHeader h;
  for (int len : {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 40, 5000}) {
    RoutingRecord* r = h.add_routing();
    r->set_layer(len);
    for (int i = 0; i < len; ++i) {
      const uint64_t kind = next() % 100;
      const int64_t v = kind < 60   ? static_cast<int64_t>(next() % 64)
                        : kind < 93 ? static_cast<int64_t>(next() % 8192)
                        : kind < 97 ? -static_cast<int64_t>(next() % 5000)
                                    : static_cast<int64_t>(next()) << 20;
      r->add_tokens_per_expert(v);
      r->add_expert_to_ep_rank(static_cast<int32_t>(v));
    }
  }
  const std::vector<uint8_t> bytes = Bytes(h.SerializeAsString());
  std::vector<uint8_t> rest;
  std::vector<moetrace::RoutingRecord> routing;
  ASSERT_TRUE(SplitRankHeader(bytes.data(), bytes.size(), &rest, &routing));
  ASSERT_EQ(routing.size(), 15u);
  for (int k = 0; k < 15; ++k) {
    const RoutingRecord& want = h.routing(k);
    EXPECT_EQ(routing[k].layer, want.layer());
    EXPECT_EQ(routing[k].tokens_per_expert,
              std::vector<int64_t>(want.tokens_per_expert().begin(), want.tokens_per_expert().end()))
        << "run of " << want.layer();
    EXPECT_EQ(routing[k].expert_to_ep_rank,
              std::vector<int32_t>(want.expert_to_ep_rank().begin(), want.expert_to_ep_rank().end()))
        << "run of " << want.layer();
  }
  EXPECT_TRUE(rest.empty());
}

TEST(SplitRankHeader, ShortCountsTheSameOnEverySimdPath) {
  // 256 experts' counts of one or two bytes (as every record of the 718B
  // trace has them), a few of three: the AVX-512 windows, the AVX2 steps
  // (SIMD cap 1) and the scalar loops (cap 0), where the CPU has them, must
  // all give what protobuf reads.
  uint64_t x = 777;
  auto next = [&x] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x >> 33;
  };
  RankHeader h;
  for (int rec = 0; rec < 8; ++rec) {
    RoutingRecord* r = h.add_routing();
    for (int e = 0; e < 256; ++e) {
      const uint64_t kind = next() % 1000;
      r->add_tokens_per_expert(kind < 500   ? static_cast<int64_t>(next() % 64)
                               : kind < 998 ? static_cast<int64_t>(next() % 4096)
                                            : static_cast<int64_t>(next() % 1000000));
    }
  }
  const std::vector<uint8_t> bytes = Bytes(h.SerializeAsString());
  for (int cap : {-1, 1, 0}) {
    SetSimdLevelCapForTesting(cap);
    std::vector<uint8_t> rest;
    std::vector<moetrace::RoutingRecord> routing;
    ASSERT_TRUE(SplitRankHeader(bytes.data(), bytes.size(), &rest, &routing));
    ASSERT_EQ(routing.size(), 8u);
    for (int k = 0; k < 8; ++k) {
      EXPECT_EQ(routing[k].tokens_per_expert,
                std::vector<int64_t>(h.routing(k).tokens_per_expert().begin(),
                                     h.routing(k).tokens_per_expert().end()))
          << "record " << k << ", cap " << cap;
    }
  }
  SetSimdLevelCapForTesting(-1);
  if (!varint_avx512::Usable() && !varint_avx2::Usable()) GTEST_SKIP() << "no AVX2: scalar path only";
}

TEST(SplitRankHeader, MalformedIsLeftToProtobuf) {
  std::vector<uint8_t> rest;
  std::vector<moetrace::RoutingRecord> routing;
  // A routing record longer than the message.
  const std::vector<uint8_t> overlong = {0x3a, 0x05, 0x08, 0x01};
  EXPECT_FALSE(SplitRankHeader(overlong.data(), overlong.size(), &rest, &routing));
  // A packed run whose last varint does not end.
  const std::vector<uint8_t> unended = {0x3a, 0x04, 0x32, 0x02, 0x01, 0x81};
  EXPECT_FALSE(SplitRankHeader(unended.data(), unended.size(), &rest, &routing));
  // Field number 0.
  const std::vector<uint8_t> zero = {0x00, 0x01};
  EXPECT_FALSE(SplitRankHeader(zero.data(), zero.size(), &rest, &routing));
  RankHeader h;
  EXPECT_FALSE(h.ParseFromArray(overlong.data(), static_cast<int>(overlong.size())));
  EXPECT_FALSE(h.ParseFromArray(unended.data(), static_cast<int>(unended.size())));
}

}  // namespace
}  // namespace moetrace::native
