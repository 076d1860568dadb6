#include "formats/native/column_codec.h"

#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace moetrace::native {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Encodes and decodes `v`; returns the chosen column.
Column RoundTrip(const std::vector<int64_t>& v, const std::vector<int64_t>* dur = nullptr) {
  ColumnEncoder enc;
  Column col;
  EXPECT_TRUE(enc.Encode(v.data(), v.size(), std::nullopt, dur ? dur->data() : nullptr, &col));
  std::vector<int64_t> back;
  EXPECT_EQ(DecodeColumn(col, v.size(), dur ? dur->data() : nullptr, kMin, kMax, back), nullptr);
  EXPECT_EQ(back, v);
  return col;
}

TEST(ColumnCodec, DefaultConstantIsOmittedOtherConstantIsFree) {
  ColumnEncoder enc;
  Column col;
  std::vector<int64_t> minus_one(1000, -1);
  EXPECT_FALSE(enc.Encode(minus_one.data(), minus_one.size(), -1, nullptr, &col));
  std::vector<int64_t> sevens(1000, 7);
  ASSERT_TRUE(enc.Encode(sevens.data(), sevens.size(), -1, nullptr, &col));
  EXPECT_EQ(col.encoding(), CONSTANT);
  EXPECT_EQ(col.constant(), 7);
  EXPECT_TRUE(col.data().empty());
}

TEST(ColumnCodec, PicksTheNarrowestTransform) {
  // Arithmetic sequence: DELTA of width 0.
  std::vector<int64_t> seq;
  for (int i = 0; i < 5000; ++i) seq.push_back(1'000'000'000'000 + 3 * i);
  Column c = RoundTrip(seq);
  EXPECT_EQ(c.encoding(), DELTA);
  EXPECT_EQ(c.width(), 0u);
  EXPECT_EQ(c.constant(), 3);
  // Small ids around a large base: PACKED of width 1.
  std::vector<int64_t> ids;
  for (int i = 0; i < 5000; ++i) ids.push_back(5'000'000 + (i * 7919) % 200);
  c = RoundTrip(ids);
  EXPECT_EQ(c.encoding(), PACKED);
  EXPECT_EQ(c.width(), 1u);
  EXPECT_EQ(c.data().size(), 5000u);
  // Back-to-back ops with long durations: GAP of width 1.
  std::vector<int64_t> ts, dur;
  int64_t t = 1'700'000'000'000'000'000;
  for (int i = 0; i < 5000; ++i) {
    ts.push_back(t);
    dur.push_back(10'000 + (i * 104729) % 90'000);
    t += dur.back() + i % 100;
  }
  c = RoundTrip(ts, &dur);
  EXPECT_EQ(c.encoding(), GAP);
  EXPECT_EQ(c.width(), 1u);
  // Long runs: RLE.
  std::vector<int64_t> layers;
  for (int i = 0; i < 5000; ++i) layers.push_back(i / 500 - 3);
  c = RoundTrip(layers);
  EXPECT_EQ(c.encoding(), RLE);
  EXPECT_LT(c.data().size(), 40u);
}

TEST(ColumnCodec, ExtremesWrapAround) {
  RoundTrip({kMin, kMax, 0, -1, kMax, kMin, 1});
  std::vector<int64_t> ts = {kMax, kMin, 0, kMax};
  std::vector<int64_t> dur = {kMax, -1, kMin, 5};
  RoundTrip(ts, &dur);
  // Every width 1..8 and a tail shorter than 8 bytes.
  for (int w = 1; w <= 8; ++w) {
    for (size_t n : {1u, 2u, 3u, 511u, 512u, 513u, 1500u}) {
      std::vector<int64_t> v;
      for (size_t i = 0; i < n; ++i) {
        const uint64_t range = w == 8 ? ~0ull : (1ull << (8 * w)) - 1;
        v.push_back(static_cast<int64_t>(i % 2 ? range : (i * 0x9E3779B97F4A7C15ull) & range));
      }
      v[0] = 0;
      if (n > 1) v[1] = static_cast<int64_t>(w == 8 ? ~0ull : (1ull << (8 * w)) - 1);
      Column c = RoundTrip(v);
      if (n > 2 && c.encoding() == PACKED) {
        EXPECT_EQ(c.width(), static_cast<uint32_t>(w)) << n;
      }
    }
  }
}

// ColumnReader decodes a column in pieces of any size: the same values as
// in one piece, for every encoding, with runs and deltas carried across
// pieces.
TEST(ColumnCodec, ReaderDecodesInPieces) {
  std::vector<std::vector<int64_t>> columns;
  std::vector<int64_t> runs, steps, wide, packed3;
  for (int i = 0; i < 3000; ++i) {
    runs.push_back(i / 700);
    steps.push_back(1'000'000 + 5 * i + (i * 7) % 3);
    wide.push_back(static_cast<int64_t>(i * 0x9E3779B97F4A7C15ull));
    packed3.push_back((i * 7919) % 70'000);
  }
  for (const auto& v : {runs, steps, wide, packed3}) {
    ColumnEncoder enc;
    Column col;
    ASSERT_TRUE(enc.Encode(v.data(), v.size(), std::nullopt, nullptr, &col));
    ColumnReader r;
    ASSERT_EQ(r.Init(col, v.size(), kMin, kMax), nullptr);
    std::vector<uint64_t> got(v.size());
    size_t at = 0;
    for (size_t piece = 1; at < v.size(); piece = piece * 3 + 1) {
      const size_t m = std::min(piece, v.size() - at);
      ASSERT_EQ(r.Next(m, got.data() + at), nullptr);
      at += m;
    }
    EXPECT_EQ(r.Finish(), nullptr);
    for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(static_cast<int64_t>(got[i]), v[i]) << i;
    EXPECT_STREQ(r.Next(1, got.data()), "more rows asked of a column than it holds");
  }
}

TEST(ColumnCodec, EndRangeSaturatesAndRangeOfIsExact) {
  int64_t lo = 0, hi = 0;
  // 40 rows so that the vectorized loop and its tail both run.
  std::vector<int64_t> ts(40, 100), dur(40, 5);
  ts[7] = -3, dur[7] = 4;
  ts[33] = 250, dur[33] = -1;
  EndRange(ts.data(), dur.data(), ts.size(), &lo, &hi);
  EXPECT_EQ(lo, -3);
  EXPECT_EQ(hi, 249);
  ts[38] = kMax - 5, dur[38] = 10;  // overflows upwards: the end saturates
  EndRange(ts.data(), dur.data(), ts.size(), &lo, &hi);
  EXPECT_EQ(lo, -3);
  EXPECT_EQ(hi, kMax);
  std::vector<int64_t> low = {kMin + 2, kMin + 9}, back = {-7, -10};  // both overflow downwards
  EndRange(low.data(), back.data(), low.size(), &lo, &hi);
  EXPECT_EQ(lo, kMin + 2);
  EXPECT_EQ(hi, kMin);
  RangeOf(ts.data(), ts.size(), &lo, &hi);
  EXPECT_EQ(lo, -3);
  EXPECT_EQ(hi, kMax - 5);
}

TEST(ColumnCodec, AllEqualFindsADifferenceAnywhere) {
  // 200 rows: whole 64-row steps and the tail both run.
  std::vector<uint16_t> v(200, 9);
  EXPECT_TRUE(AllEqual(v.data(), v.size()));
  EXPECT_TRUE(AllEqual(v.data(), 1));
  for (size_t at : {size_t{1}, size_t{64}, size_t{65}, size_t{150}, size_t{199}}) {
    v[at] = 10;
    EXPECT_FALSE(AllEqual(v.data(), v.size())) << at;
    EXPECT_TRUE(AllEqual(v.data(), at)) << at;
    v[at] = 9;
  }
  std::vector<uint64_t> w(100, ~uint64_t{0});
  w[99] = 0;
  EXPECT_FALSE(AllEqual(w.data(), w.size()));
  EXPECT_TRUE(AllEqual(w.data(), 99));
}

TEST(ColumnCodec, WidenCopiesAndFramesInOnePass) {
  std::vector<int32_t> v(70, 5);
  v[3] = -2'000'000'000, v[4] = -2'000'000'000, v[50] = 7, v[69] = 2'000'000'000;
  std::vector<int64_t> out(v.size());
  PlainStats s = Widen(v.data(), v.size(), out.data());
  EXPECT_EQ(std::vector<int64_t>(v.begin(), v.end()), out);
  EXPECT_EQ(s.lo, -2'000'000'000);
  EXPECT_EQ(s.hi, 2'000'000'000);
  EXPECT_EQ(s.changes, 5u);  // 5->-2e9, -2e9->5, 5->7, 7->5, 5->2e9
  std::vector<uint32_t> u = {4'000'000'000u, 1, 1};
  s = Widen(u.data(), u.size(), out.data());
  EXPECT_EQ(out[0], 4'000'000'000);
  EXPECT_EQ(s.lo, 1);
  EXPECT_EQ(s.hi, 4'000'000'000);
  EXPECT_EQ(s.changes, 1u);
}

TEST(ColumnCodec, DeferredDataIsTheSameBytes) {
  // PACKED width 3 (8-byte stores with slack), DELTA, GAP and RLE columns:
  // encoding with the data deferred gives the same column.
  std::vector<int64_t> packed, delta, runs, ts, dur;
  for (int i = 0; i < 3000; ++i) {
    packed.push_back((i * 7919) % 70000);
    delta.push_back(1'000'000'000 + 5 * i + i % 3);
    runs.push_back(i / 700);
    ts.push_back(i == 0 ? 100 : ts.back() + dur.back() + i % 5);
    dur.push_back(1000 + (i * 31) % 5000);
  }
  const ColumnEncoding expected[] = {PACKED, DELTA, RLE, GAP};
  int k = 0;
  for (const auto* v : {&packed, &delta, &runs, &ts}) {
    const int64_t* d = v == &ts ? dur.data() : nullptr;
    ColumnEncoder a, b;
    ColumnView whole, view;
    ASSERT_TRUE(a.Encode(v->data(), v->size(), std::nullopt, d, &whole));
    size_t deferred = 1;
    ASSERT_TRUE(b.Encode(v->data(), v->size(), std::nullopt, d, &view, nullptr, &deferred));
    EXPECT_EQ(whole.encoding(), expected[k++]);
    EXPECT_EQ(view.encoding(), whole.encoding());
    EXPECT_EQ(view.constant(), whole.constant());
    EXPECT_EQ(view.width(), whole.width());
    EXPECT_EQ(view.first(), whole.first());
    std::string data(view.data());
    if (deferred != 0) {
      EXPECT_TRUE(view.data().empty());
      std::string room(deferred + 8, '\0');
      b.WriteDeferred(reinterpret_cast<uint8_t*>(room.data()));
      data = room.substr(0, deferred);
    }
    EXPECT_EQ(data, std::string(whole.data()));
  }
}

TEST(ColumnCodec, EverySimdVariantWritesTheSameBytes) {
  // The writer's passes are compiled for AVX-512, AVX2 and the baseline
  // and picked by CPU; each variant must choose and write the same column.
  // (A variant this CPU lacks falls back to the next one down.)
  std::mt19937_64 rng(7);
  std::vector<std::vector<int64_t>> values;
  std::vector<std::vector<int64_t>> durs;
  for (size_t n : {size_t{1}, size_t{7}, size_t{33}, size_t{1023}, size_t{5001}}) {
    std::vector<int64_t> seq, ids, wide, runs, ts, dur;
    int64_t t = 1'700'000'000'000'000'000;
    for (size_t i = 0; i < n; ++i) {
      seq.push_back(1'000'000'000'000 + 3 * int64_t(i) + (i % 5 == 0 ? 1 : 0));
      ids.push_back(5'000'000 + int64_t(rng() % 200));
      wide.push_back(int64_t(rng()));
      runs.push_back(int64_t(i / 100) - 3);
      dur.push_back(10'000 + int64_t(rng() % 90'000));
      ts.push_back(t);
      t += dur.back() + int64_t(rng() % 100);
    }
    wide[0] = kMin;
    if (n > 1) wide[1] = kMax;
    for (auto* v : {&seq, &ids, &wide, &runs}) {
      values.push_back(*v);
      durs.emplace_back();
    }
    values.push_back(ts);
    durs.push_back(dur);
  }
  auto encode_all = [&] {
    std::vector<std::string> out;
    ColumnEncoder enc;
    for (size_t k = 0; k < values.size(); ++k) {
      Column col;
      EXPECT_TRUE(enc.Encode(values[k].data(), values[k].size(), std::nullopt,
                             durs[k].empty() ? nullptr : durs[k].data(), &col));
      out.push_back(col.SerializeAsString());
    }
    return out;
  };
  SetSimdLevelCapForTesting(-1);
  const std::vector<std::string> best = encode_all();
  for (int cap : {0, 1, 2}) {
    SetSimdLevelCapForTesting(cap);
    EXPECT_EQ(encode_all(), best) << "SIMD level " << cap;
  }
  SetSimdLevelCapForTesting(-1);
  for (size_t k = 0; k < values.size(); ++k) RoundTrip(values[k], durs[k].empty() ? nullptr : &durs[k]);
}

TEST(ColumnCodec, RejectsMalformedColumns) {
  std::vector<int32_t> out;
  Column c;
  c.set_encoding(PACKED);
  c.set_width(2);
  c.set_data(std::string(5, '\0'));
  EXPECT_STREQ(DecodeColumn(c, 3, nullptr, kMin, kMax, out),
               "packed column data is not row count x width bytes");
  c.set_width(9);
  EXPECT_STREQ(DecodeColumn(c, 3, nullptr, kMin, kMax, out), "packed width above 8 bytes");
  c.set_encoding(GAP);
  c.set_width(0);
  c.clear_data();
  EXPECT_STREQ(DecodeColumn(c, 3, nullptr, kMin, kMax, out),
               "GAP encoding on a column other than ts");
  c.set_encoding(PACKED);
  c.set_width(1);
  c.set_constant(100);
  c.set_data(std::string("\x01\x02\x03", 3));
  EXPECT_STREQ(DecodeColumn(c, 3, nullptr, 0, 102, out), "value out of range");
  c.set_encoding(RLE);
  c.set_data(std::string("\x02\x05", 2));  // one run of 5 for a block of 3
  EXPECT_STREQ(DecodeColumn(c, 3, nullptr, kMin, kMax, out),
               "RLE run length 0 or past the block's row count");
  c.set_data(std::string("\x02\x80", 2));
  EXPECT_STREQ(DecodeColumn(c, 3, nullptr, kMin, kMax, out), "RLE column ends inside a run length");
  c.set_encoding(static_cast<ColumnEncoding>(77));
  EXPECT_STREQ(DecodeColumn(c, 3, nullptr, kMin, kMax, out), "unknown column encoding");
}

}  // namespace
}  // namespace moetrace::native
