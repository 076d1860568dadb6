#include "formats/perfetto/perfetto_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "formats/errors.h"
#include "formats/native/native_writer.h"
#include "formats/ordered_ranks.h"
#include "formats/export/track_labels.h"
#include "formats/sample_trace.h"
#include "formats/proto/perfetto_trace.pb.h"
#include "formats/formats_test_util.h"

namespace moetrace {
namespace {

namespace pf = ::moetrace::perfetto;
namespace fs = std::filesystem;

std::string PfTempPath(const std::string& name) {
  return (fs::temp_directory_path() /
          ("moetrace_pf_" + std::to_string(getpid()) + "_" + name)).string();
}

// A slice or instant reconstructed from the decoded packets.
struct Slice {
  std::string name;
  int64_t ts;
  int64_t dur;  // -1 for instants
  bool operator<(const Slice& o) const {
    return std::tie(ts, dur, name) < std::tie(o.ts, o.dur, o.name);
  }
  bool operator==(const Slice& o) const = default;
};

// Everything the tests check, decoded with our own perfetto_trace.proto.
struct Decoded {
  std::map<uint64_t, pf::TrackDescriptor> tracks;  // by uuid
  std::map<uint64_t, std::vector<Slice>> slices;   // by track uuid
  std::map<uint64_t, std::vector<std::pair<int64_t, double>>> counters;
  std::map<uint64_t, int> flow_starts, flow_ends;  // flow id -> count
  std::map<uint64_t, uint64_t> flow_start_track, flow_end_track;
  std::map<uint64_t, int64_t> flow_start_corr, flow_end_corr;
  std::map<uint32_t, int> sequences;               // seq id -> packets
  std::map<uint64_t, std::vector<std::string>> string_args;  // instants: "key=value"
  std::map<uint64_t, std::vector<std::string>> slice_string_args;  // slices: "name:key=value"
  int unbalanced = 0;
  int time_went_back = 0;
  int unresolved_names = 0;
  int bad_first_packet = 0;
};

Decoded DecodePerfetto(const std::string& bytes) {
  pf::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(bytes));
  Decoded d;
  std::map<uint32_t, std::map<uint64_t, std::string>> names, cats, arg_names;
  std::map<uint64_t, std::vector<std::tuple<std::string, int64_t>>> open;  // uuid -> stack
  std::map<uint64_t, int64_t> last_ts;
  for (const pf::TracePacket& p : trace.packet()) {
    const uint32_t seq = p.trusted_packet_sequence_id();
    if (d.sequences[seq]++ == 0) {
      if (!(p.sequence_flags() & pf::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) ||
          !p.first_packet_on_sequence()) {
        ++d.bad_first_packet;
      }
    }
    for (const auto& e : p.interned_data().event_names()) names[seq][e.iid()] = e.name();
    for (const auto& e : p.interned_data().event_categories()) cats[seq][e.iid()] = e.name();
    for (const auto& e : p.interned_data().debug_annotation_names()) {
      arg_names[seq][e.iid()] = e.name();
    }
    if (p.has_track_descriptor()) {
      d.tracks[p.track_descriptor().uuid()] = p.track_descriptor();
      continue;
    }
    if (!p.has_track_event()) continue;
    const pf::TrackEvent& e = p.track_event();
    const uint64_t uuid = e.track_uuid();
    const int64_t ts = static_cast<int64_t>(p.timestamp());
    if (e.type() != pf::TrackEvent::TYPE_COUNTER) {  // samples keep the model's order
      if (last_ts.count(uuid) && ts < last_ts[uuid]) ++d.time_went_back;
      last_ts[uuid] = ts;
    }
    auto resolve = [&](uint64_t iid) -> std::string {
      auto it = names[seq].find(iid);
      if (it == names[seq].end()) {
        ++d.unresolved_names;
        return "?";
      }
      return it->second;
    };
    int64_t corr = -1;
    for (const auto& a : e.debug_annotations()) {
      if (arg_names[seq][a.name_iid()] == "correlation") corr = a.int_value();
    }
    for (uint64_t f : e.flow_ids()) {
      ++d.flow_starts[f];
      d.flow_start_track[f] = uuid;
      d.flow_start_corr[f] = corr;
    }
    for (uint64_t f : e.terminating_flow_ids()) {
      ++d.flow_ends[f];
      d.flow_end_track[f] = uuid;
      d.flow_end_corr[f] = corr;
    }
    switch (e.type()) {
      case pf::TrackEvent::TYPE_SLICE_BEGIN:
        open[uuid].emplace_back(resolve(e.name_iid()), ts);
        for (const auto& a : e.debug_annotations()) {
          if (a.has_string_value()) {
            d.slice_string_args[uuid].push_back(resolve(e.name_iid()) + ":" +
                                                arg_names[seq][a.name_iid()] + "=" +
                                                a.string_value());
          }
        }
        break;
      case pf::TrackEvent::TYPE_SLICE_END: {
        auto& stack = open[uuid];
        if (stack.empty()) {
          ++d.unbalanced;
          break;
        }
        auto [name, begin] = stack.back();
        stack.pop_back();
        d.slices[uuid].push_back({name, begin, ts - begin});
        break;
      }
      case pf::TrackEvent::TYPE_INSTANT:
        d.slices[uuid].push_back({e.has_name() ? e.name() : resolve(e.name_iid()), ts, -1});
        for (const auto& a : e.debug_annotations()) {
          if (a.has_string_value()) {
            d.string_args[uuid].push_back(arg_names[seq][a.name_iid()] + "=" + a.string_value());
          }
        }
        break;
      case pf::TrackEvent::TYPE_COUNTER:
        d.counters[uuid].emplace_back(ts, e.double_counter_value());
        break;
      default:
        ADD_FAILURE() << "unexpected event type " << e.type();
    }
  }
  for (auto& [uuid, stack] : open) d.unbalanced += static_cast<int>(stack.size());
  return d;
}

std::vector<Slice> ModelSlices(const Rank& rank, const Track& track) {
  std::vector<Slice> out;
  const EventTable& ev = track.events;
  for (size_t i = 0; i < ev.size(); ++i) {
    bool instant = ev.dur[i] <= 0 || (ev.flags[i] & kFlagInstant);
    out.push_back({std::string(rank.strings.Get(ev.name[i])), ev.ts[i], instant ? -1 : ev.dur[i]});
  }
  std::sort(out.begin(), out.end());
  return out;
}

void WritePerfetto(const Trace& t, const std::string& path) {
  auto sink = CreatePerfettoSink(path);
  for (const Rank& r : t.ranks) sink->AddRank(r);
  sink->Finish(t.metadata);
}

class PerfettoSampleTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    trace_ = new Trace(MakeSampleTrace(4, 64, 7));
    path_ = new std::string(PfTempPath("sample.pftrace"));
    WritePerfetto(*trace_, *path_);
    decoded_ = new Decoded(DecodePerfetto(testing_formats::FileBytes(*path_)));
  }
  static void TearDownTestSuite() {
    fs::remove(*path_);
    delete trace_;
    delete path_;
    delete decoded_;
  }
  // Thread track uuid of model track `t` of `rank` (matched by pid + name).
  static uint64_t ThreadUuid(int32_t pid, const std::string& name) {
    for (const auto& [uuid, td] : decoded_->tracks) {
      if (td.has_thread() && td.thread().pid() == pid && td.thread().thread_name() == name) {
        return uuid;
      }
    }
    return 0;
  }
  static Trace* trace_;
  static std::string* path_;
  static Decoded* decoded_;
};
Trace* PerfettoSampleTest::trace_ = nullptr;
std::string* PerfettoSampleTest::path_ = nullptr;
Decoded* PerfettoSampleTest::decoded_ = nullptr;

TEST_F(PerfettoSampleTest, OneSequencePerRankStartingWithClearedState) {
  const Decoded& d = *decoded_;
  EXPECT_EQ(d.sequences.size(), 4u);
  EXPECT_EQ(d.sequences.count(0), 0u);
  EXPECT_EQ(d.bad_first_packet, 0);
  EXPECT_EQ(d.unresolved_names, 0);
}

TEST_F(PerfettoSampleTest, ProcessThreadAndCounterTracks) {
  const Decoded& d = *decoded_;
  std::map<int32_t, std::string> processes;
  std::map<int32_t, std::set<std::string>> threads;
  std::set<int32_t> tids;
  std::map<int32_t, std::vector<std::string>> counters;  // by pid of parent
  std::map<uint64_t, int32_t> process_of_uuid;
  for (const auto& [uuid, td] : d.tracks) {
    if (td.has_process()) {
      processes[td.process().pid()] = td.process().process_name();
      process_of_uuid[uuid] = td.process().pid();
    }
  }
  for (const auto& [uuid, td] : d.tracks) {
    if (td.has_thread()) {
      threads[td.thread().pid()].insert(td.thread().thread_name());
      EXPECT_TRUE(tids.insert(td.thread().tid()).second) << "duplicate tid " << td.thread().tid();
    }
    if (td.has_counter()) {
      ASSERT_TRUE(process_of_uuid.count(td.parent_uuid()));
      counters[process_of_uuid[td.parent_uuid()]].push_back(td.name());
      EXPECT_EQ(td.counter().unit(), pf::CounterDescriptor::UNIT_SIZE_BYTES);
    }
  }
  ASSERT_EQ(processes.size(), 4u);
  EXPECT_EQ(processes.count(0), 0u) << "pid 0 is trace processor's idle process";
  for (int r = 0; r < 4; ++r) {
    const int32_t pid = ExportPid(r);
    EXPECT_EQ(pid, r + 1);
    EXPECT_EQ(processes[pid], "rank " + std::to_string(r) + " (node0)");
    EXPECT_EQ(threads[pid], (std::set<std::string>{"python", "dequeue", "NPU stream 0 (compute)",
                                                 "NPU stream 1 (comm: hccl)",
                                                 "NPU stream 2 (copy)"}));
    EXPECT_EQ(counters[pid], (std::vector<std::string>{"mem.allocated", "mem.activations"}));
  }
  // Host threads keep their real tid; streams get synthetic ones.
  EXPECT_EQ(d.tracks.at(ThreadUuid(ExportPid(2), "python")).thread().tid(), 1002);
  EXPECT_GE(d.tracks.at(ThreadUuid(ExportPid(2), "NPU stream 0 (compute)")).thread().tid(), 1 << 30);
  // 4 ranks x (process + 5 threads + 2 counters + MoE routing); no overlap,
  // so no lane tracks.
  EXPECT_EQ(d.tracks.size(), 4u * 9u);
}

TEST_F(PerfettoSampleTest, SlicesMatchTheModelPerTrack) {
  const Decoded& d = *decoded_;
  EXPECT_EQ(d.unbalanced, 0);
  EXPECT_EQ(d.time_went_back, 0);
  size_t total = 0;
  for (const Rank& rank : trace_->ranks) {
    for (size_t t = 0; t < rank.tracks.size(); ++t) {
      const Track& track = rank.tracks[t];
      if (track.kind == TrackKind::kCounter) continue;
      std::string label = track.kind == TrackKind::kHostThread
                              ? std::string(rank.strings.Get(track.name))
                              : t == 2 ? "NPU stream 0 (compute)"
                              : t == 3 ? "NPU stream 1 (comm: hccl)"
                                       : "NPU stream 2 (copy)";
      uint64_t uuid = ThreadUuid(ExportPid(rank.rank), label);
      ASSERT_NE(uuid, 0u) << label;
      std::vector<Slice> got = d.slices.count(uuid) ? d.slices.at(uuid) : std::vector<Slice>{};
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got.size(), track.events.size()) << label;
      EXPECT_EQ(got, ModelSlices(rank, track)) << label;
      total += got.size();
    }
  }
  EXPECT_EQ(total, 4u * (64 * 3 * 3 + 1 + (64 * 3 + 6) / 7));
}

TEST_F(PerfettoSampleTest, CounterValuesEqualSamples) {
  const Decoded& d = *decoded_;
  int checked = 0;
  for (const auto& [uuid, td] : d.tracks) {
    if (!td.has_counter()) continue;
    int32_t pid = d.tracks.at(td.parent_uuid()).process().pid();
    const Rank& rank = trace_->ranks[pid - 1];
    const Track& track = rank.tracks[td.name() == "mem.allocated" ? 5 : 6];
    std::vector<std::pair<int64_t, double>> want;
    for (size_t i = 0; i < track.sample_ts.size(); ++i) {
      want.emplace_back(track.sample_ts[i], track.sample_value[i]);
    }
    ASSERT_TRUE(d.counters.count(uuid));
    EXPECT_EQ(d.counters.at(uuid), want);
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

TEST_F(PerfettoSampleTest, RoutingRecordsAreInstantsOnTheirOwnTrack) {
  const Decoded& d = *decoded_;
  int tracks = 0;
  for (const auto& [uuid, td] : d.tracks) {
    if (td.name() != "MoE routing") continue;
    ++tracks;
    const Rank& rank = trace_->ranks[d.tracks.at(td.parent_uuid()).process().pid() - 1];
    ASSERT_EQ(d.slices.at(uuid).size(), rank.routing.size());
    for (size_t i = 0; i < rank.routing.size(); ++i) {
      const RoutingRecord& rr = rank.routing[i];
      EXPECT_EQ(d.slices.at(uuid)[i], (Slice{"routing layer " + std::to_string(rr.layer), rr.ts, -1}));
    }
    std::string tokens = "tokens_per_expert=[";
    for (size_t e = 0; e < rank.routing[0].tokens_per_expert.size(); ++e) {
      tokens += (e ? ", " : "") + std::to_string(rank.routing[0].tokens_per_expert[e]);
    }
    tokens += "]";
    EXPECT_EQ(d.string_args.at(uuid)[0], tokens);
  }
  EXPECT_EQ(tracks, 4);
}

TEST_F(PerfettoSampleTest, EachLaunchFlowStartsOnceAndEndsOnce) {
  const Decoded& d = *decoded_;
  // Every device op has a correlated launch: 3 streams x 64 ops x 4 ranks.
  EXPECT_EQ(d.flow_starts.size(), 4u * 3 * 64);
  EXPECT_EQ(d.flow_ends.size(), d.flow_starts.size());
  for (const auto& [id, n] : d.flow_starts) {
    EXPECT_EQ(n, 1) << id;
    ASSERT_EQ(d.flow_ends.count(id), 1u) << id;
    EXPECT_EQ(d.flow_ends.at(id), 1) << id;
    // The last kLaunch of the correlation is the dequeue on the dispatch
    // thread; the flow ends on a device stream, both with the same correlation.
    EXPECT_EQ(d.tracks.at(d.flow_start_track.at(id)).thread().thread_name(), "dequeue");
    EXPECT_EQ(d.tracks.at(d.flow_end_track.at(id)).thread().thread_name().rfind("NPU stream", 0),
              0u);
    EXPECT_EQ(d.flow_start_corr.at(id), d.flow_end_corr.at(id));
    EXPECT_GE(d.flow_start_corr.at(id), 0);
  }
}

Rank OverlapRank() {
  Rank rank;
  rank.rank = 5;
  rank.host = "h";
  Track& s = rank.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "stream 9", 9);
  StringId a = rank.strings.Intern("A");
  StringId b = rank.strings.Intern("B");
  StringId c = rank.strings.Intern("C");
  s.events.Append({.ts = 1000, .dur = 100, .name = a, .category = Category::kCollective});
  s.events.Append({.ts = 1010, .dur = 10, .name = c, .category = Category::kCollective});
  s.events.Append({.ts = 1050, .dur = 100, .name = b, .category = Category::kCollective});
  return rank;
}

TEST(PerfettoWriter, OverlappingEventsGoToAChildTrack) {
  const std::string path = PfTempPath("overlap.pftrace");
  Trace t;
  t.ranks.push_back(OverlapRank());
  WritePerfetto(t, path);
  Decoded d = DecodePerfetto(testing_formats::FileBytes(path));
  fs::remove(path);
  EXPECT_EQ(d.unbalanced, 0);
  uint64_t thread = 0, child = 0;
  for (const auto& [uuid, td] : d.tracks) {
    if (td.has_thread()) thread = uuid;
  }
  for (const auto& [uuid, td] : d.tracks) {
    if (td.parent_uuid() == thread && !td.has_counter()) child = uuid;
  }
  ASSERT_NE(thread, 0u);
  ASSERT_NE(child, 0u);
  EXPECT_EQ(d.tracks.at(thread).thread().thread_name(), "NPU stream 9 (comm)");
  EXPECT_EQ(d.tracks.at(child).name(), "NPU stream 9 (comm) (overlap 1)");
  EXPECT_EQ(d.slices.at(thread), (std::vector<Slice>{{"C", 1010, 10}, {"A", 1000, 100}}));
  EXPECT_EQ(d.slices.at(child), (std::vector<Slice>{{"B", 1050, 100}}));
}

TEST(PerfettoWriter, InputShapesAreAStringArgOfTheSlice) {
  Trace t;
  Rank& r = t.ranks.emplace_back();
  Track& h = r.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "main", 1);
  h.events.Append({.ts = 100, .dur = 10, .name = r.strings.Intern("aten::mm"),
                   .category = Category::kHostOp, .shape = r.strings.Intern("[[8, 4], [4, 2]]")});
  h.events.Append({.ts = 200, .dur = 10, .name = r.strings.Intern("aten::relu"),
                   .category = Category::kHostOp});
  const std::string path = PfTempPath("shapes.pftrace");
  WritePerfetto(t, path);
  const Decoded d = DecodePerfetto(testing_formats::FileBytes(path));
  fs::remove(path);
  std::vector<std::string> args;
  for (const auto& [uuid, v] : d.slice_string_args) {
    for (const std::string& a : v) {
      if (a.find("input_shapes") != std::string::npos) args.push_back(a);
    }
  }
  EXPECT_EQ(args, (std::vector<std::string>{"aten::mm:input_shapes=[[8, 4], [4, 2]]"}));
}

TEST(PerfettoWriter, InvalidUtf8NamesAreReplaced) {
  const std::string path = PfTempPath("utf8.pftrace");
  Trace t;
  Rank& rank = t.ranks.emplace_back();
  Track& h = rank.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "py\xff", 7);
  h.events.Append({.ts = 5, .dur = 0, .name = rank.strings.Intern("bad\xc3\x28"),
                   .category = Category::kMarker});
  WritePerfetto(t, path);
  Decoded d = DecodePerfetto(testing_formats::FileBytes(path));
  fs::remove(path);
  ASSERT_EQ(d.slices.size(), 1u);
  EXPECT_EQ(d.slices.begin()->second,
            (std::vector<Slice>{{"bad\xEF\xBF\xBD(", 5, -1}}));
  bool found = false;
  for (const auto& [uuid, td] : d.tracks) {
    if (td.has_thread()) found = td.thread().thread_name() == "py\xEF\xBF\xBD";
  }
  EXPECT_TRUE(found);
}

// Corrupt in-memory ranks (ids out of range, mismatched counter columns,
// negative durations) still give a well-formed trace.
TEST(PerfettoWriter, SurvivesInconsistentRanks) {
  const std::string path = PfTempPath("corrupt.pftrace");
  Trace t;
  Rank& r = t.ranks.emplace_back();
  Track& s = r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "stream 1", 1);
  s.events.Append({.ts = 10, .dur = -5, .name = 999, .category = Category::kCollective,
                   .comm = 7});
  s.events.Append({.ts = 20, .dur = 5, .name = 1000, .category = Category::kCollective});
  Track& c = r.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "mem");
  c.sample_ts = {1, 2, 3};
  c.sample_value = {4.5, 5.5};
  WritePerfetto(t, path);
  Decoded d = DecodePerfetto(testing_formats::FileBytes(path));
  fs::remove(path);
  EXPECT_EQ(d.unbalanced, 0);
  EXPECT_EQ(d.unresolved_names, 0);
  size_t slices = 0;
  for (const auto& [uuid, v] : d.slices) slices += v.size();
  EXPECT_EQ(slices, 2u);
  ASSERT_EQ(d.counters.size(), 1u);
  EXPECT_EQ(d.counters.begin()->second.size(), 2u);
}

// convert's path: ranks written on workers (holes for the thread
// descriptors), appended in order, give AddRank's bytes for any thread
// count. The ranks share host thread ids, so the tids handed out in order
// matter; the big ranks pass the 1 MB drain in AddRank, so its holes are
// filled mid-rank there and all at once from an encoder.
TEST(PerfettoWriter, WriteRanksInOrderSameBytesAsAddRank) {
  Trace t = MakeSampleTrace(7, 6000, 3);
  for (Rank& r : t.ranks) {
    for (Track& tr : r.tracks) {
      if (tr.kind == TrackKind::kHostThread) tr.native_id = 4242;
    }
  }
  const std::string ref_path = PfTempPath("order_ref.pftrace");
  WritePerfetto(t, ref_path);
  const std::string ref = testing_formats::FileBytes(ref_path);
  fs::remove(ref_path);
  ASSERT_GT(ref.size(), size_t{3} << 20);  // some ranks pass the drain
  const Decoded d = DecodePerfetto(ref);
  std::set<int64_t> tids;
  size_t threads_seen = 0;
  for (const auto& [uuid, td] : d.tracks) {
    if (!td.has_thread()) continue;
    ++threads_seen;
    tids.insert(td.thread().tid());
  }
  EXPECT_EQ(tids.size(), threads_seen);  // unique across ranks
  EXPECT_EQ(tids.count(4242), 1u);       // the first rank's keeps its own

  for (size_t threads : {1, 2, 4}) {
    const std::string path = PfTempPath("order_" + std::to_string(threads) + ".pftrace");
    auto sink = CreatePerfettoSink(path);
    // Two batches, as convert appends two inputs: the second's encoders
    // number their ranks after the first's.
    MemorySource first(Trace{t.metadata, {t.ranks[0], t.ranks[1], t.ranks[2]}});
    MemorySource rest(Trace{t.metadata, std::vector<Rank>(t.ranks.begin() + 3, t.ranks.end())});
    WriteRanksInOrder(first, threads, 3, *sink, [](size_t, const Rank&) {});
    WriteRanksInOrder(rest, threads, 3, *sink, [](size_t, const Rank&) {});
    sink->Finish(t.metadata);
    const std::string got = testing_formats::FileBytes(path);
    fs::remove(path);
    EXPECT_TRUE(got == ref) << threads << " threads: " << got.size() << " vs " << ref.size();
  }
}

TEST(PerfettoWriter, EncodedRanksOutOfOrderOrForeignAreRefused) {
  const Trace t = MakeSampleTrace(2, 8);
  const std::string path = PfTempPath("enc_order.pftrace");
  auto sink = CreatePerfettoSink(path);
  auto encoder = sink->CreateEncoder();
  ASSERT_NE(encoder, nullptr);
  auto second = encoder->Encode(t.ranks[1], 1);
  EXPECT_THROW(sink->AddEncoded(std::move(second)), std::logic_error);
  struct Other : EncodedRank {};
  EXPECT_THROW(sink->AddEncoded(std::make_unique<Other>()), std::invalid_argument);
  sink->AddEncoded(encoder->Encode(t.ranks[0], 0));
  sink->Finish(t.metadata);
  EXPECT_THROW(sink->AddRank(t.ranks[0]), std::logic_error);
  fs::remove(path);
}

// generate keeps this many encoded ranks per thread in flight: a Perfetto
// rank of the 718B preset is ~3.3 MB, a native one ~0.25 MB (16 in flight).
TEST(PerfettoWriter, FewerEncodedRanksInFlightThanTheNativeSink) {
  const std::string path = PfTempPath("in_flight.pftrace");
  auto sink = CreatePerfettoSink(path);
  EXPECT_EQ(sink->EncodedRanksPerThread(), 4u);
  auto native = CreateNativeSink(PfTempPath("in_flight.mtrace"));
  EXPECT_EQ(native->EncodedRanksPerThread(), 16u);
}

TEST(PerfettoWriter, NothingIsLeftOnDiskWithoutFinish) {
  const std::string path = PfTempPath("abandoned.pftrace");
  {
    auto sink = CreatePerfettoSink(path);
    sink->AddRank(MakeSampleTrace(1, 4).ranks[0]);
  }
  EXPECT_FALSE(fs::exists(path));
  for (const auto& entry : fs::directory_iterator(fs::path(path).parent_path())) {
    EXPECT_EQ(entry.path().filename().string().rfind("moetrace_pf_" + std::to_string(getpid()) +
                                                         "_abandoned", 0),
              std::string::npos)
        << entry.path();
  }
}

TEST(PerfettoWriter, UnwritablePathThrowsInputError) {
  EXPECT_THROW(CreatePerfettoSink("/nonexistent-dir/x.pftrace"), InputError);
}

}  // namespace
}  // namespace moetrace
