#include "formats/ascend/communication_json.h"

#include <gtest/gtest.h>

#include <string>

#include "formats/errors.h"

namespace moetrace {
namespace {

// Two steps, two ops (a collective and a p2p send), two transports each.
// The all-reduce's HCCS entry is all zero (omitted); the send's SDMA entry is
// the sum of its HCCS part (msprof), so transit_bytes counts it once.
// "6.4e-05" is how Python prints a 64-byte packet size in MB.
constexpr const char* kTwoSteps = R"J({
 "step1": {"collective": {
   "hcom_allReduce__123_0@999": {
     "Communication Time Info": {"Start Timestamp(us)": 1000.5, "Elapse Time(ms)": 1.25,
       "Transit Time(ms)": 0.5, "Wait Time(ms)": 0.625, "Synchronization Time(ms)": 0.125,
       "Idle Time(ms)": 0.125, "Wait Time Ratio": 0.5556, "Synchronization Time Ratio": 0.2},
     "Communication Bandwidth Info": {
       "RDMA": {"Transit Size(MB)": 4, "Transit Time(ms)": 0.5, "Bandwidth(GB/s)": 8,
                "Large Packet Ratio": 1, "Size Distribution": {"2": [2, 0.5]}},
       "HCCS": {"Transit Size(MB)": 0, "Transit Time(ms)": 0, "Bandwidth(GB/s)": 0,
                "Large Packet Ratio": 0, "Size Distribution": {}}}},
   "Total Op Info": {
     "Communication Time Info": {"Elapse Time(ms)": 1.25},
     "Communication Bandwidth Info": {"RDMA": {"Transit Size(MB)": 4, "Transit Time(ms)": 0.5}}}},
  "p2p": {}},
 "step2": {"collective": {}, "p2p": {
   "hcom_send__123_1@999": {
     "Communication Time Info": {"Elapse Time(ms)": 0.1, "Transit Time(ms)": 0.002,
                                 "Wait Time(ms)": 0.098},
     "Communication Bandwidth Info": {
       "HCCS": {"Transit Size(MB)": 0.003136, "Transit Time(ms)": 0.0016, "Bandwidth(GB/s)": 1.96,
                "Large Packet Ratio": 0.0,
                "Size Distribution": {"0.003072": [1, 0.002], "6.4e-05": [1, 0.001]}},
       "SDMA": {"Transit Size(MB)": 0.003136, "Transit Time(ms)": 0.0016, "Bandwidth(GB/s)": 1.96,
                "Large Packet Ratio": 0, "Size Distribution": {}}}}}}
})J";

const LabeledValue* Find(const std::vector<LabeledValue>& v, int32_t step, std::string_view key) {
  for (const auto& x : v) {
    if (x.step == step && x.key == key) return &x;
  }
  return nullptr;
}

TEST(CommunicationJson, KeepsEveryOpFigurePerStepSorted) {
  CommunicationFigures f = ReadCommunicationJson(kTwoSteps, "communication.json", 3);
  std::vector<LabeledValue> per_op;
  for (const auto& x : f.reference) {
    if (x.key.rfind("communication.op.", 0) == 0) per_op.push_back(x);
  }
  const std::string p1 = "communication.op.hcom_allReduce__123_0@999.";
  const std::string p2 = "communication.op.hcom_send__123_1@999.";
  std::vector<LabeledValue> expected = {
      {3, 1, p1 + "elapse_time_ms", 1.25},
      {3, 1, p1 + "idle_time_ms", 0.125},
      {3, 1, p1 + "rdma.bandwidth_gb_s", 8},
      {3, 1, p1 + "rdma.large_packet_ratio", 1},
      {3, 1, p1 + "rdma.size_2000000.count", 2},
      {3, 1, p1 + "rdma.size_2000000.time_ms", 0.5},
      {3, 1, p1 + "rdma.transit_size_mb", 4},
      {3, 1, p1 + "rdma.transit_time_ms", 0.5},
      {3, 1, p1 + "start_timestamp_us", 1000.5},
      {3, 1, p1 + "synchronization_time_ms", 0.125},
      {3, 1, p1 + "synchronization_time_ratio", 0.2},
      {3, 1, p1 + "transit_bytes", 4000000},
      {3, 1, p1 + "transit_time_ms", 0.5},
      {3, 1, p1 + "wait_time_ms", 0.625},
      {3, 1, p1 + "wait_time_ratio", 0.5556},
      {3, 2, p2 + "elapse_time_ms", 0.1},
      {3, 2, p2 + "hccs.bandwidth_gb_s", 1.96},
      {3, 2, p2 + "hccs.large_packet_ratio", 0},
      {3, 2, p2 + "hccs.size_3072.count", 1},
      {3, 2, p2 + "hccs.size_3072.time_ms", 0.002},
      {3, 2, p2 + "hccs.size_64.count", 1},
      {3, 2, p2 + "hccs.size_64.time_ms", 0.001},
      {3, 2, p2 + "hccs.transit_size_mb", 0.003136},
      {3, 2, p2 + "hccs.transit_time_ms", 0.0016},
      {3, 2, p2 + "sdma.bandwidth_gb_s", 1.96},
      {3, 2, p2 + "sdma.large_packet_ratio", 0},
      {3, 2, p2 + "sdma.transit_size_mb", 0.003136},
      {3, 2, p2 + "sdma.transit_time_ms", 0.0016},
      {3, 2, p2 + "transit_bytes", 3136},
      {3, 2, p2 + "transit_time_ms", 0.002},
      {3, 2, p2 + "wait_time_ms", 0.098},
  };
  EXPECT_EQ(per_op, expected);

  // Rank totals (step kNone), "Total Op Info" not counted; MB = 1e6 bytes.
  const auto& ref = f.reference;
  EXPECT_EQ(Find(ref, kNone, "communication.op_count")->value, 2);
  EXPECT_DOUBLE_EQ(Find(ref, kNone, "communication.elapse_time_us")->value, 1350);
  EXPECT_EQ(Find(ref, kNone, "communication.rdma.transit_size_bytes")->value, 4e6);
  EXPECT_EQ(Find(ref, kNone, "communication.rdma.bandwidth_gb_s")->value, 8);
  EXPECT_DOUBLE_EQ(Find(ref, kNone, "communication.hccs.transit_size_bytes")->value, 3136);
  for (const auto& x : ref) EXPECT_EQ(x.rank, 3);

  ASSERT_EQ(f.op_bytes.size(), 1u);
  OpBytes expected_bytes = {{"hcom_allReduce__123_0", 4000000}, {"hcom_send__123_1", 3136}};
  EXPECT_EQ(f.op_bytes.at(3), expected_bytes);
}

TEST(CommunicationJson, BareStepKeyAndSameNameTwice) {
  // A bare "step" key: step kNone. The same op name (without the group hash)
  // with two sizes is ambiguous and does not fill CommRecord::bytes.
  CommunicationFigures f = ReadCommunicationJson(R"J({"step": {"collective": {
      "hcom_broadcast__1_0@5": {"Communication Bandwidth Info": {"RDMA": {"Transit Size(MB)": 1}}},
      "hcom_broadcast__1_0@6": {"Communication Bandwidth Info": {"RDMA": {"Transit Size(MB)": 2}}},
      "hcom_broadcast__1_1@5": {"Communication Bandwidth Info": {"RDMA": {"Transit Size(MB)": 1.5}}}}}})J",
                                                 "c.json", 0);
  EXPECT_EQ(Find(f.reference, kNone, "communication.op.hcom_broadcast__1_0@6.rdma.transit_size_mb")->value, 2);
  OpBytes expected = {{"hcom_broadcast__1_1", 1500000}};
  EXPECT_EQ(f.op_bytes.at(0), expected);
}

TEST(CommunicationJson, ClusterLayoutIsKeyedByRank) {
  CommunicationFigures f = ReadCommunicationJson(R"J({"(0, 1)": {"step7": {
      "hcom_allGather__9_2@1": {
        "0": {"Communication Time Info": {"Elapse Time(ms)": 2.5}},
        "1": {"Communication Time Info": {"Elapse Time(ms)": 0.75}}},
      "Total Op Info": {"0": {"Communication Time Info": {"Elapse Time(ms)": 2.5}}}}}})J",
                                                 "cluster_communication.json", -1);
  std::vector<LabeledValue> expected = {
      {0, kNone, "communication.op_count", 1},
      {0, kNone, "communication.elapse_time_us", 2500},
      {1, kNone, "communication.op_count", 1},
      {1, kNone, "communication.elapse_time_us", 750},
      {0, 7, "communication.op.hcom_allGather__9_2@1.elapse_time_ms", 2.5},
      {1, 7, "communication.op.hcom_allGather__9_2@1.elapse_time_ms", 0.75},
  };
  EXPECT_EQ(f.reference, expected);
  EXPECT_TRUE(f.op_bytes.empty());  // no bandwidth info: nothing to fill
}

std::string CommErrorOf(std::string_view json, int32_t rank = 0) {
  try {
    ReadCommunicationJson(json, "bad.json", rank);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CommunicationJson, BadInputNamesFileAndByte) {
  std::string s = R"J({"step": {"collective": {"hcom_x__1_0@2": {"Communication Time Info": )J"
                  R"J({"Elapse Time(ms)": "1.5"}}}}})J";
  size_t at = s.find("\"1.5\"");
  EXPECT_EQ(CommErrorOf(s), "bad.json: byte " + std::to_string(at) +
                            ": expected a number for \"Elapse Time(ms)\"");

  std::string t = R"J({"s": {"hcom_x__1_0@2": {"Communication Bandwidth Info": {"HCCS": )J"
                  R"J({"Transit Size(MB)": 1, "Size Distribution": {"0.5": [1, "x"]}}}}}})J";
  EXPECT_EQ(CommErrorOf(t), "bad.json: byte " + std::to_string(t.find("\"x\"")) +
                            ": expected [count, time ms] for packet size 0.5");

  std::string u = R"J({"s": {"hcom_x__1_0@2": {"Communication Bandwidth Info": {"HCCS": 7}}}})J";
  EXPECT_EQ(CommErrorOf(u), "bad.json: byte " + std::to_string(u.find("7}")) +
                            ": expected an object for transport \"HCCS\"");

  EXPECT_EQ(CommErrorOf("[1, 2]"), "bad.json: byte 0: expected a JSON object");
  std::string truncated = CommErrorOf(R"J({"step": {"collective": {"op": {"Communication Time Info": {"E)J");
  EXPECT_EQ(truncated.rfind("bad.json: byte ", 0), 0u) << truncated;
  EXPECT_NE(truncated.find("malformed JSON"), std::string::npos) << truncated;
}

TEST(CommunicationJson, FillsCommRecordBytesOfMatchingOps) {
  Rank rank;
  rank.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "main", 1);
  rank.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "HCCL", -1);
  Track& host = rank.tracks[0];
  Track& t = rank.tracks[1];
  auto add = [&](std::string_view name, Category cat, bool comm) {
    Event e;
    e.name = rank.strings.Intern(name);
    e.category = cat;
    if (comm) {
      e.comm = static_cast<int32_t>(t.comms.size());
      t.comms.push_back(CommRecord{});
    }
    t.events.Append(e);
  };
  add("hcom_allReduce__123_0", Category::kCollective, true);
  add("hcom_send__123_1", Category::kP2P, true);
  add("hcom_allReduce__123_9", Category::kCollective, true);  // not in the file
  add("hcom_allReduce__123_0", Category::kCompute, false);    // not a collective
  Event h;
  h.name = rank.strings.Intern("hcom_allReduce__123_0");
  host.events.Append(h);
  OpBytes bytes = {{"hcom_allReduce__123_0", 4000000}, {"hcom_send__123_1", 3136},
                   {"hcom_broadcast__1_0", 7}};
  EXPECT_EQ(FillCommBytes(bytes, &rank), 2);
  const Track& d = rank.tracks[1];
  EXPECT_EQ(d.comms[0].bytes, 4000000u);
  EXPECT_EQ(d.comms[1].bytes, 3136u);
  EXPECT_EQ(d.comms[2].bytes, 0u);
  EXPECT_EQ(d.events.bytes[0], 0u);  // only the CommRecord carries it
  auto stat = [&](std::string_view k) {
    for (const auto& [key, v] : rank.import_stats) {
      if (key == k) return v;
    }
    return int64_t{-1};
  };
  EXPECT_EQ(stat("read.communication_json.ops_matched"), 2);
  EXPECT_EQ(stat("read.communication_json.ops_unmatched"), 1);
}

}  // namespace
}  // namespace moetrace
