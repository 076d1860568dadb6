#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "formats/errors.h"
#include "formats/native/native_test_util.h"
#include "formats/sample_trace.h"

namespace moetrace {
namespace {

using testing_native::Decode;
using testing_native::Encode;
using testing_native::ReadFileBytes;
using testing_native::TempPath;
using testing_native::WriteTrace;

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int32_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();

// Compares rank by rank first so a failure says where the difference is.
void ExpectSameTrace(const Trace& want, const Trace& got) {
  EXPECT_TRUE(want.metadata == got.metadata);
  ASSERT_EQ(want.ranks.size(), got.ranks.size());
  for (size_t r = 0; r < want.ranks.size(); ++r) {
    const Rank& a = want.ranks[r];
    const Rank& b = got.ranks[r];
    EXPECT_EQ(a.rank, b.rank);
    EXPECT_TRUE(a.strings == b.strings) << "rank " << r;
    ASSERT_EQ(a.tracks.size(), b.tracks.size()) << "rank " << r;
    for (size_t i = 0; i < a.tracks.size(); ++i) {
      EXPECT_TRUE(a.tracks[i].events == b.tracks[i].events) << "rank " << r << " track " << i;
      EXPECT_EQ(a.tracks[i].comms.size(), b.tracks[i].comms.size()) << "rank " << r;
      EXPECT_TRUE(a.tracks[i] == b.tracks[i]) << "rank " << r << " track " << i;
    }
    EXPECT_TRUE(a.routing == b.routing) << "rank " << r;
    EXPECT_TRUE(a.import_stats == b.import_stats) << "rank " << r;
    EXPECT_TRUE(a == b) << "rank " << r;
  }
  EXPECT_TRUE(want == got);
}

TEST(NativeRoundTrip, SampleTraceThroughAFile) {
  Trace t = MakeSampleTrace(4, 64, 7);
  std::string path = TempPath("sample.mtrace");
  WriteTrace(t, path);
  EXPECT_TRUE(LooksLikeNative(path));
  auto src = OpenNative(path);
  EXPECT_EQ(src->rank_count(), 4u);
  EXPECT_EQ(src->metadata().source, "sample");
  ExpectSameTrace(t, ReadAll(*src));
  std::remove(path.c_str());
}

TEST(NativeRoundTrip, EveryZstdLevelAndBlockSize) {
  Trace t = MakeSampleTrace(2, 50, 3);
  for (int level : {-5, 1, 3, 9}) {
    for (uint32_t rows : {1u, 7u, 64u, 65536u}) {
      ExpectSameTrace(t, Decode(Encode(t, {level, rows})));
    }
  }
}

TEST(NativeRoundTrip, EmptyTrace) {
  Trace t;
  std::string bytes = Encode(t);
  Trace back = Decode(bytes);
  EXPECT_TRUE(back == t);
  EXPECT_EQ(back.ranks.size(), 0u);
}

TEST(NativeRoundTrip, RankWithoutTracksAndTrackWithoutEvents) {
  Trace t;
  t.metadata.source = "";
  Rank& empty = t.ranks.emplace_back();
  empty.rank = 5;
  Rank& r = t.ranks.emplace_back();
  r.rank = -3;
  r.device_id = kNone;
  r.pid = kI64Min;
  r.host = "";
  r.AddTrack(TrackKind::kHostThread, TrackRole::kHostOther, "");
  r.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "no samples").counter =
      CounterKind::kMemComm;
  Track& cut = r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceOther, "comms only", kI64Max);
  cut.comms.push_back(CommRecord{});
  cut.prior_end = -7;  // a stream cut by steps (trace_selection.h)
  cut.after_start = 0;
  cut.after_launch = -1;
  cut.after_sync = kI64Min + 1;
  cut.after_name = r.strings.Intern("next op");
  r.import_stats = {{"", 0}, {"read.x", kI64Min}};
  ExpectSameTrace(t, Decode(Encode(t)));
}

// Protobuf string fields must hold UTF-8 to be read back: a host name or a
// metadata string that is not (read from a database, a file name) is
// written repaired, so the file always reads back.
TEST(NativeRoundTrip, StringsThatAreNotUtf8AreWrittenRepaired) {
  Trace t;
  t.metadata.device = "Ascend\xff";
  t.metadata.attributes.emplace_back("ascend.db.\xfe.db", "v\xff");
  Rank& r = t.ranks.emplace_back();
  r.host = "node\xff";
  r.import_stats = {{"read.\xff", 1}};
  const Trace back = Decode(Encode(t));
  ASSERT_EQ(back.ranks.size(), 1u);
  EXPECT_EQ(back.ranks[0].host, "node\xEF\xBF\xBD");
  EXPECT_EQ(back.ranks[0].import_stats[0].first, "read.\xEF\xBF\xBD");
  EXPECT_EQ(back.metadata.device, "Ascend\xEF\xBF\xBD");
  bool found = false;
  for (const auto& [k, v] : back.metadata.attributes)
    found |= k == "ascend.db.\xEF\xBF\xBD.db" && v == "v\xEF\xBF\xBD";
  EXPECT_TRUE(found);
}

// One track with many events: several blocks, unsorted times, every field
// at its extremes, and every column encoding exercised.
TEST(NativeRoundTrip, ManyEventsExtremeValuesSeveralBlocks) {
  Trace t;
  Rank& r = t.ranks.emplace_back();
  Track& tr = r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "s0", 0);
  StringId names[3] = {r.strings.Intern("a"), r.strings.Intern("bb"), r.strings.Intern("")};
  tr.comms.resize(3);
  tr.comms[1].group_ranks = tr.AddRanks(std::vector<int32_t>{kI32Min, 0, kI32Max});
  tr.comms[2].send_splits = tr.AddSplits(std::vector<uint64_t>{0, UINT64_MAX});
  tr.comms[2].recv_splits = tr.AddSplits(std::vector<uint64_t>{1});
  const size_t n = 150'000;  // 3 blocks
  uint64_t x = 12345;
  for (size_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    Event e;
    switch (i % 5) {
      case 0: e.ts = static_cast<int64_t>(i) * 1000; break;                  // sorted
      case 1: e.ts = static_cast<int64_t>(i) * 1000 - 5'000'000; break;      // backwards
      case 2: e.ts = i % 2 ? kI64Max : kI64Min; break;                        // extremes
      case 3: e.ts = static_cast<int64_t>(x); break;                          // random
      default: e.ts = -static_cast<int64_t>(i); break;
    }
    e.dur = i % 7 == 0 ? kI64Max : i % 11 == 0 ? -5 : static_cast<int64_t>(x % 100000);
    e.name = names[i % 3];
    e.category = static_cast<Category>(i % kCategoryCount);
    e.phase = static_cast<Phase>((i / 1000) % 5);
    e.flags = static_cast<uint16_t>(i % 13 == 0 ? 0xffff : 0);
    e.correlation = i % 17 == 0 ? kI64Min : static_cast<int64_t>(i);
    e.step = i < 70000 ? kI32Min : kI32Max;
    e.micro_batch = static_cast<int32_t>(i / 9000);
    e.layer = static_cast<int32_t>(x >> 40) - (1 << 23);
    e.comm = static_cast<int32_t>(i % 4) - 1;
    e.flops = i % 3 == 0 ? std::numeric_limits<uint64_t>::max() : x;
    e.bytes = i % 2 ? 0 : (1ull << 63);
    tr.events.Append(e);
  }
  Trace back = Decode(Encode(t));
  ExpectSameTrace(t, back);
}

TEST(NativeRoundTrip, CommRecordsAndRoutingEveryShape) {
  Trace t;
  Rank& r = t.ranks.emplace_back();
  r.rank = 1;
  Track& s = r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "hccl", 1);
  static constexpr char kGroup[] = "group \xe2\x9c\x93 with unicode and \0 nul";
  StringId g = r.strings.Intern(std::string_view(kGroup, sizeof kGroup - 1));
  for (int i = 0; i < 200; ++i) {
    CommRecord c;
    c.kind = static_cast<CollectiveKind>(i % 12);
    c.comm_class = static_cast<CommClass>(i % kCommClassCount);
    c.group = i % 2 ? g : 0;
    c.sequence = i % 50 == 0 ? kI64Max : i;
    c.group_size = i % 9;
    c.peer = i % 3 == 0 ? kNone : i;
    c.bytes = static_cast<uint64_t>(i) << 40;
    std::vector<int32_t> members;
    std::vector<uint64_t> send, recv;
    for (int k = 0; k < i % 5; ++k) members.push_back(k * i);
    if (i % 4 == 0) {
      for (int k = 0; k < 8; ++k) {
        send.push_back(static_cast<uint64_t>(k + i));
        recv.push_back(static_cast<uint64_t>(i - k) * 3);
      }
    }
    // Recv splits before send splits: the reader lays them out otherwise,
    // and a track compares equal by content.
    c.recv_splits = s.AddSplits(recv);
    c.send_splits = s.AddSplits(send);
    c.group_ranks = s.AddRanks(members);
    Event e;
    e.ts = i * 100;
    e.dur = 50;
    e.category = Category::kCollective;
    e.comm = static_cast<int32_t>(s.comms.size());
    s.comms.push_back(std::move(c));
    s.events.Append(e);
  }
  RoutingRecord plain;
  plain.tokens_per_expert = {1, 2, 3};
  RoutingRecord placed;
  placed.ts = kI64Min;
  placed.step = 3;
  placed.micro_batch = kI32Max;
  placed.layer = 60;
  placed.ep_size = 8;
  placed.tokens_per_expert = {kI64Max, 0, -1};
  placed.expert_to_ep_rank = {7, 0, kI32Min};
  // Redundant expert copies, at the limits a well-formed list allows (the
  // reader drops a malformed one: routing_copies_test.cc): expert 0's
  // kI64Max tokens all go to copies.
  placed.copy_expert = {0, 0, 1};
  placed.copy_ep_rank = {3, 5, 7};
  placed.copy_tokens = {kI64Max - 1, 1, 0};
  r.routing = {plain, placed, RoutingRecord{}};
  ExpectSameTrace(t, Decode(Encode(t)));
  ExpectSameTrace(t, Decode(Encode(t, {1, 7})));
}

TEST(NativeRoundTrip, CounterValuesKeepTheirBits) {
  Trace t;
  Rank& r = t.ranks.emplace_back();
  Track& ints = r.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "ints");
  ints.counter = CounterKind::kMemReserved;
  for (int i = 0; i < 1000; ++i) {
    ints.sample_ts.push_back(1'000'000 + i * 37);
    ints.sample_value.push_back(static_cast<double>(int64_t{1} << 40) + i * 4096.0);
  }
  Track& odd = r.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "odd");
  const double specials[] = {-0.0, 0.5, std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::denorm_min(), 1e300,
                             9223372036854775808.0, -9223372036854775808.0};
  for (double d : specials) {
    odd.sample_ts.push_back(kI64Min);
    odd.sample_value.push_back(d);
  }
  Track& zeros = r.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "zeros");
  zeros.sample_ts = {0, 0};
  zeros.sample_value = {0.0, 0.0};
  Trace back = Decode(Encode(t, {1, 3}));
  ExpectSameTrace(t, back);
  const auto& got = back.ranks[0].tracks[1].sample_value;
  ASSERT_EQ(got.size(), std::size(specials));
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(std::memcmp(&got[i], &specials[i], sizeof(double)), 0) << i;
  }
  EXPECT_TRUE(std::signbit(got[0]));
}

TEST(NativeRoundTrip, MetadataEveryField) {
  Trace t;
  Metadata& m = t.metadata;
  m.source = "kineto";
  m.origin = "/path/with spaces/trace.json";
  m.producer = "moetrace 0.1";
  m.layout = {1024, 8, 4, 8, 2, 16, 1, 16};
  m.device = "Ascend 910B";
  m.device_peak_flops = -0.0;
  m.device_memory_bytes = std::numeric_limits<uint64_t>::max();
  m.model_flops_per_step = 1.25e18;
  m.tokens_per_step = kI64Min;
  m.config_json = std::string("{\"a\": \"\0\"}", 11);
  m.ground_truth = {{0, kNone, "breakdown.comm_exposed_ns", 1.5}, {kI32Max, kI32Min, "", -0.0}};
  m.reference = {{3, 4, "overlap_analysis.free_us", 9481.67}};
  m.attributes = {{"", ""}, {"k", "v"}, {"k", "again"}};
  Trace back = Decode(Encode(t));
  EXPECT_TRUE(back == t);
  EXPECT_TRUE(std::signbit(back.metadata.device_peak_flops));
  EXPECT_TRUE(std::signbit(back.metadata.ground_truth[1].value));
  EXPECT_EQ(back.metadata.config_json.size(), 11u);
}

TEST(NativeDeterminism, RewritingGivesIdenticalBytes) {
  Trace t = MakeSampleTrace(3, 40, 11);
  std::string a = Encode(t);
  EXPECT_EQ(a, Encode(t));
  // .mtrace -> .mtrace through the streaming interfaces.
  std::string in = TempPath("det_in.mtrace"), out = TempPath("det_out.mtrace");
  WriteTrace(t, in);
  {
    auto src = OpenNative(in);
    auto sink = CreateNativeSink(out);
    Copy(*src, *sink);
  }
  EXPECT_EQ(ReadFileBytes(in), a);
  EXPECT_EQ(ReadFileBytes(out), a);
  std::remove(in.c_str());
  std::remove(out.c_str());
  // Other options give other bytes but the same trace.
  std::string b = Encode(t, {9, 100});
  EXPECT_NE(a, b);
  EXPECT_EQ(Encode(Decode(b), {9, 100}), b);
}

TEST(NativeReader, ConcurrentReadRankMatchesSerial) {
  Trace t = MakeSampleTrace(6, 30, 5);
  std::string path = TempPath("concurrent.mtrace");
  WriteTrace(t, path);
  auto src = OpenNative(path);
  std::vector<Rank> got(src->rank_count());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&, i] { got[i] = src->ReadRank(i); });
  }
  for (auto& th : threads) th.join();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i] == t.ranks[i]) << i;
  std::remove(path.c_str());
}

// Pieces of 16 KiB and more are written with plain stores when the rank
// fits in cache (8 MiB) and with non-temporal ones above: both give the
// rank written, into one reused Rank, a large rank after a small one and
// back.
TEST(NativeReader, SmallAndLargeRanksDecodeAlikeThroughBothStorePaths) {
  const Trace small = MakeSampleTrace(1, 3'000, 3);     // ~15 k events: plain stores
  const Trace large = MakeSampleTrace(1, 30'000, 4);    // ~150 k events, > 8 MiB: streamed
  ASSERT_GT(large.ranks[0].EventCount(), 140'000u);
  auto small_src = OpenNativeBuffer(Encode(small), "small");
  auto large_src = OpenNativeBuffer(Encode(large), "large");
  Rank r;
  small_src->ReadRankInto(0, &r);
  EXPECT_TRUE(r == small.ranks[0]);
  large_src->ReadRankInto(0, &r);
  EXPECT_TRUE(r == large.ranks[0]);
  small_src->ReadRankInto(0, &r);
  EXPECT_TRUE(r == small.ranks[0]);
}

// ReadRankInto decodes into a Rank that holds another rank: every value of
// that rank (absent columns included, which hold defaults) must be
// overwritten, whatever the shapes of the two ranks.
TEST(NativeReader, ReadRankIntoOverwritesAnEarlierRank) {
  Trace t = MakeSampleTrace(3, 40, 7);
  // Rank 1: fewer, mostly default rows, so its columns are absent from the
  // file while the Rank still holds rank 0's values; rank 2: one more
  // track and vector lengths that differ from rank 0's.
  Rank& sparse = t.ranks[1];
  sparse.tracks.resize(2);
  for (Track& tr : sparse.tracks) {
    EventTable e;
    for (int i = 0; i < 3; ++i) {
      Event ev;
      ev.ts = 100 * i;
      e.Append(ev);
    }
    tr.events = e;
    tr.comms.clear();
    tr.sample_ts.clear();
    tr.sample_value.clear();
  }
  sparse.routing.clear();
  sparse.import_stats.clear();
  Rank& wide = t.ranks[2];
  // Same tracks as rank 0, but every comm and event field at its default
  // except the comm indices: rank 0's values must not survive.
  size_t comms = 0;
  for (Track& tr : wide.tracks) {
    for (CommRecord& rec : tr.comms) rec = CommRecord{};
    comms += tr.comms.size();
    EventTable e;
    for (size_t i = 0; i < tr.events.size(); ++i) {
      Event ev;
      ev.ts = tr.events.ts[i];
      ev.comm = tr.events.comm[i];
      e.Append(ev);
    }
    tr.events = e;
    for (double& v : tr.sample_value) v = 0;
  }
  ASSERT_GT(comms, 0u);
  Track& extra = wide.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "extra", 9);
  CommRecord c;
  c.kind = CollectiveKind::kAllToAllV;
  c.group_ranks = extra.AddRanks(std::vector<int32_t>{0, 1, 2, 3, 4});
  c.send_splits = extra.AddSplits(std::vector<uint64_t>{1, 2, 3});
  extra.comms.push_back(c);
  c.group_ranks = {};
  c.recv_splits = extra.AddSplits(std::vector<uint64_t>{7});
  extra.comms.push_back(c);
  Event ev;
  ev.category = Category::kCollective;
  ev.comm = 1;
  extra.events.Append(ev);
  extra.sample_ts = {5, 6};
  extra.sample_value = {0.5, -1.25};
  const std::string bytes = Encode(t);
  auto src = OpenNativeBuffer(bytes, "into.mtrace");
  Rank into;
  for (size_t i : {0, 2, 1, 2, 0, 1, 1, 0}) {
    src->ReadRankInto(i, &into);
    EXPECT_TRUE(into == t.ranks[i]) << "rank " << i;
  }
  // The default implementation (a MemorySource) gives the same.
  MemorySource mem(t);
  mem.ReadRankInto(2, &into);
  EXPECT_TRUE(into == t.ranks[2]);
}

// The fields SkipColumnsAnalyzeIgnores leaves unspecified, zeroed; returns
// how many held something else (so a test can show it had values to lose).
size_t BlankSkipped(Rank* r) {
  size_t nonzero = 0;
  for (Track& t : r->tracks) {
    for (size_t i = 0; i < t.events.size(); ++i) {
      nonzero += t.events.micro_batch[i] != 0 || t.events.flops[i] != 0 || t.events.bytes[i] != 0;
      t.events.micro_batch[i] = 0;
      t.events.flops[i] = 0;
      t.events.bytes[i] = 0;
    }
    for (int32_t& x : t.comm_ranks) {
      nonzero += x != 0;
      x = 0;
    }
    for (const CommRecord& c : t.comms) {
      for (uint64_t& x : t.Splits(c.send_splits)) {
        nonzero += x != 0;
        x = 0;
      }
    }
  }
  return nonzero;
}

TEST(NativeReader, SkipColumnsAnalyzeIgnoresReadsEveryOtherFieldAndIsScoped) {
  Trace t = MakeSampleTrace(3, 64, 7);
  const std::string bytes = Encode(t);
  auto src = OpenNativeBuffer(bytes, "skip.mtrace");
  Rank into;
  {
    SkipColumnsAnalyzeIgnores skip;
    for (size_t i : {0, 1, 2, 1}) {
      src->ReadRankInto(i, &into);  // fresh columns at first, then in place
      Rank want = t.ranks[i];
      EXPECT_GT(BlankSkipped(&want), 100u) << "rank " << i;
      Rank got = into;
      BlankSkipped(&got);
      EXPECT_TRUE(got == want) << "rank " << i;
      // Sized as usual.
      for (size_t k = 0; k < want.tracks.size(); ++k) {
        EXPECT_EQ(into.tracks[k].events.flops.size(), want.tracks[k].events.size());
        EXPECT_EQ(into.tracks[k].comm_ranks.size(), t.ranks[i].tracks[k].comm_ranks.size());
      }
    }
  }
  // Out of the scope every column is read again, into the same Rank.
  for (size_t i : {1, 0}) {
    src->ReadRankInto(i, &into);
    EXPECT_TRUE(into == t.ranks[i]) << "rank " << i;
  }
}

TEST(NativeWriter, RejectsBrokenRanksAndLeavesNothing) {
  std::string path = TempPath("broken.mtrace");
  Rank good;
  good.rank = 0;
  Rank r;
  r.rank = 1;
  Track& tr = r.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "t");
  Event e;
  e.name = 99;  // not in the string table
  tr.events.Append(e);
  auto expect_rejected = [&](const Rank& bad) {
    {
      auto sink = CreateNativeSink(path);
      sink->AddRank(good);
      EXPECT_THROW(sink->AddRank(bad), std::invalid_argument);
      // The half-written rank poisons the sink: it cannot be finished.
      EXPECT_THROW(sink->Finish(Metadata{}), std::invalid_argument);
    }
    EXPECT_FALSE(LooksLikeNative(path));
    EXPECT_TRUE(ReadFileBytes(path).empty());
  };
  expect_rejected(r);
  tr.events.name[0] = 0;
  tr.events.comm[0] = 0;  // no comm record 0
  expect_rejected(r);
  tr.events.comm[0] = kNone;
  tr.events.flags.pop_back();  // unequal columns
  expect_rejected(r);
  tr.events.flags.push_back(0);
  tr.events.category[0] = static_cast<Category>(9);
  expect_rejected(r);
  tr.events.category[0] = Category::kCompute;
  // Fixed, the same rank is written.
  {
    auto sink = CreateNativeSink(path);
    sink->AddRank(r);
    sink->Finish(Metadata{});
  }
  EXPECT_TRUE(OpenNative(path)->ReadRank(0) == r);
  std::remove(path.c_str());
}

TEST(NativeReader, LooksLikeNativeChecksTheMagic) {
  std::string path = TempPath("looks.mtrace");
  WriteTrace(MakeSampleTrace(1, 2), path);
  EXPECT_TRUE(LooksLikeNative(path));
  std::string text = TempPath("looks.json");
  {
    std::ofstream(text) << "{\"traceEvents\": []}";
  }
  EXPECT_FALSE(LooksLikeNative(text));
  EXPECT_FALSE(LooksLikeNative(::testing::TempDir()));
  EXPECT_FALSE(LooksLikeNative(TempPath("missing")));
  std::remove(path.c_str());
  std::remove(text.c_str());
}

}  // namespace
}  // namespace moetrace

namespace moetrace {
namespace {

TEST(NativeReader, RejectsDirectoriesFifosAndMissingFiles) {
  EXPECT_THROW(OpenNative(::testing::TempDir()), InputError);
  EXPECT_THROW(OpenNative(testing_native::TempPath("does_not_exist.mtrace")), InputError);
  std::string fifo = testing_native::TempPath("fifo.mtrace");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(LooksLikeNative(fifo));  // returns instead of blocking
  EXPECT_THROW(OpenNative(fifo), InputError);
  std::remove(fifo.c_str());
}

}  // namespace
}  // namespace moetrace
