// Imports every real Kineto trace under $MOETRACE_REAL_TRACES/kineto (default
// ../shared/traces/kineto) and checks the model against counts made here,
// independently, from the raw file with a plain simdjson DOM pass.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "formats/kineto/kineto_importer.h"
#include "formats/kineto/read_text_for_test.h"
#include "formats/real_traces_dir.h"
#include "formats/formats_test_util.h"

namespace moetrace {
namespace {

namespace fs = std::filesystem;

std::string TracesDir() {
  return RealTracesRoot() + "/kineto";
}

std::vector<std::string> TraceFiles(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    if (n.size() > 5 && (n.ends_with(".json") || n.ends_with(".json.gz"))) {
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool In(std::string_view s, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

// What the raw file says, counted without the importer.
struct RawCounts {
  std::map<std::string, int64_t> by_cat;
  int64_t kernels = 0, comm_kernels = 0, copies = 0, host_slices = 0, host_instants = 0;
  int64_t device_markers = 0, device_syncs = 0, memory_samples = 0, reserved_samples = 0;
  int64_t linkable_launches = 0, device_ops_in_steps = 0;
  std::set<int64_t> steps;
  int64_t rank = -1;
};

int64_t IntArg(simdjson::dom::element args, const char* key) {
  if (!args.is_object()) return -1;
  auto v = args[key];
  if (v.error()) return -1;
  if (v.is_int64()) return v.get_int64().value();
  if (v.is_uint64()) return int64_t(v.get_uint64().value());
  if (v.is_double()) return int64_t(v.get_double().value());
  return -1;
}

double Num(simdjson::dom::element e, const char* key) {
  auto v = e[key];
  if (v.error()) return 0;
  if (v.is_double()) return v.get_double().value();
  if (v.is_int64()) return double(v.get_int64().value());
  return 0;
}

RawCounts CountRaw(const std::string& text) {
  RawCounts rc;
  simdjson::dom::parser parser;
  simdjson::padded_string json(text);
  simdjson::dom::element doc = parser.parse(json).value();
  auto di = doc["distributedInfo"]["rank"];
  if (!di.error()) rc.rank = di.get_int64().value();
  std::set<int64_t> runtime_corr, device_corr;
  std::map<int64_t, double> launch_ts;
  std::vector<std::pair<double, double>> step_windows;
  std::vector<int64_t> device_op_corr;
  simdjson::dom::array events = doc["traceEvents"].get_array().value();
  for (simdjson::dom::element e : events) {
    std::string_view cat = "(none)";
    auto c = e["cat"];
    if (!c.error() && c.is_string()) cat = c.get_string().value();
    ++rc.by_cat[std::string(cat)];
    std::string_view ph = e["ph"].get_string().value();
    std::string_view name;
    if (!e["name"].error()) name = e["name"].get_string().value();
    simdjson::dom::element args;
    bool has_args = !e["args"].get(args);
    if (ph == "i" && name == "[memory]") {
      ++rc.memory_samples;
      if (has_args && !args["Total Reserved"].error()) ++rc.reserved_samples;
      continue;
    }
    if (ph == "i" && cat == "cpu_instant_event") ++rc.host_instants;
    if (ph != "X") continue;
    int64_t corr = has_args ? IntArg(args, "correlation") : -1;
    int64_t stream = has_args ? IntArg(args, "stream") : -1;
    if (name.starts_with("ProfilerStep#") &&
        In(cat, {"cpu_op", "user_annotation", "python_function", "Operator"})) {
      rc.steps.insert(std::stoll(std::string(name.substr(13))));
      double ts = Num(e, "ts");
      step_windows.emplace_back(ts, ts + Num(e, "dur"));
    }
    if (In(cat, {"kernel", "Kernel", "mtia_ccp_events"})) {
      ++rc.kernels;
      std::string_view n = name.starts_with("void ") ? name.substr(5) : name;
      if (n.starts_with("nccl") || n.starts_with("rccl") ||
          n.find("ncclKernel") != std::string_view::npos || n.starts_with("hcom_")) {
        ++rc.comm_kernels;
      }
    }
    if (In(cat, {"gpu_memcpy", "gpu_memset", "Memcpy", "Memset"})) ++rc.copies;
    if (In(cat, {"kernel", "Kernel", "mtia_ccp_events", "gpu_memcpy", "gpu_memset", "Memcpy",
                 "Memset"})) {
      if (corr >= 0) device_corr.insert(corr);
      device_op_corr.push_back(corr);
    }
    if (In(cat, {"cuda_runtime", "cuda_driver", "Runtime", "privateuse1_runtime",
                 "privateuse1_driver", "mtia_runtime"})) {
      ++rc.host_slices;
      if (corr >= 0) {
        runtime_corr.insert(corr);
        launch_ts[corr] = Num(e, "ts");
      }
    }
    if (In(cat, {"cpu_op", "user_annotation", "python_function", "Operator"})) ++rc.host_slices;
    if (cat == "gpu_user_annotation") ++rc.device_markers;
    if (cat == "cuda_sync") {
      if (stream >= 0) {
        ++rc.device_syncs;
      } else {
        ++rc.host_slices;
      }
    }
  }
  for (int64_t c : device_corr) rc.linkable_launches += runtime_corr.count(c);
  for (int64_t c : device_op_corr) {
    auto it = launch_ts.find(c);
    if (it == launch_ts.end()) continue;
    for (auto [b, e] : step_windows) {
      if (it->second >= b && it->second < e) {
        ++rc.device_ops_in_steps;
        break;
      }
    }
  }
  return rc;
}

using testing_formats::Stat;

bool IsDeviceOp(Category c) {
  return c == Category::kCompute || c == Category::kCollective || c == Category::kP2P ||
         c == Category::kCopy;
}

void CheckFile(const std::string& path) {
  SCOPED_TRACE(path);
  RawCounts raw = CountRaw(ReadKinetoText(path));
  auto src = OpenKineto(path);
  ASSERT_EQ(src->rank_count(), 1u);
  EXPECT_EQ(src->metadata().source, "kineto");
  Rank r = src->ReadRank(0);
  if (raw.rank >= 0) {
    EXPECT_EQ(r.rank, raw.rank);
  }

  for (const auto& [cat, n] : raw.by_cat) EXPECT_EQ(Stat(r, "read." + cat), n) << cat;

  int64_t kernels = 0, comm = 0, copies = 0, host_slices = 0, host_instants = 0;
  int64_t device_markers = 0, device_syncs = 0, samples = 0, in_steps = 0;
  std::set<int64_t> steps;
  std::set<int64_t> launch_corr, device_corr;
  for (const Track& t : r.tracks) {
    const EventTable& ev = t.events;
    samples += int64_t(t.sample_ts.size());
    for (size_t i = 0; i < ev.size(); ++i) {
      Category c = ev.category[i];
      if (t.kind == TrackKind::kDeviceStream) {
        if (c == Category::kCompute || c == Category::kCollective || c == Category::kP2P) {
          ++kernels;
        }
        if (c == Category::kCollective || c == Category::kP2P) {
          ++comm;
          EXPECT_GE(ev.comm[i], 0);
          EXPECT_LT(size_t(ev.comm[i]), t.comms.size());
        }
        if (c == Category::kCopy) ++copies;
        if (c == Category::kMarker) ++device_markers;
        if (c == Category::kSync) ++device_syncs;
        if (IsDeviceOp(c) && ev.correlation[i] >= 0) device_corr.insert(ev.correlation[i]);
        if (IsDeviceOp(c) && ev.step[i] >= 0) ++in_steps;
      } else if (t.kind == TrackKind::kHostThread) {
        if (ev.flags[i] & kFlagInstant) {
          ++host_instants;
        } else {
          ++host_slices;
        }
        if (ev.flags[i] & kFlagStepMarker) steps.insert(ev.step[i]);
        if ((c == Category::kLaunch || c == Category::kSync) && ev.correlation[i] >= 0) {
          launch_corr.insert(ev.correlation[i]);
        }
      }
      if (i > 0) {
        EXPECT_LE(ev.ts[i - 1], ev.ts[i]);
      }
    }
  }
  EXPECT_EQ(kernels, raw.kernels);
  EXPECT_EQ(comm, raw.comm_kernels);
  EXPECT_EQ(copies, raw.copies);
  EXPECT_EQ(host_slices, raw.host_slices);
  EXPECT_EQ(host_instants, raw.host_instants);
  EXPECT_EQ(device_markers, raw.device_markers);
  EXPECT_EQ(device_syncs, raw.device_syncs);
  EXPECT_EQ(samples, raw.memory_samples + raw.reserved_samples);
  EXPECT_EQ(std::set<int64_t>(steps.begin(), steps.end()), raw.steps);
  EXPECT_EQ(in_steps, raw.device_ops_in_steps);
  int64_t linked = 0;
  for (int64_t c : device_corr) linked += launch_corr.count(c);
  EXPECT_GE(linked, raw.linkable_launches);
  EXPECT_GT(r.EventCount(), 0u);
}

TEST(KinetoRealTraces, EveryTraceMatchesIndependentCounts) {
  fs::path root = TracesDir();
  if (!fs::is_directory(root)) GTEST_SKIP() << "no real traces at " << root;
  int files = 0;
  for (const auto& set : fs::directory_iterator(root)) {
    if (!set.is_directory()) continue;
    for (const std::string& f : TraceFiles(set.path())) {
      CheckFile(f);
      ++files;
    }
  }
  EXPECT_GT(files, 0);
}

TEST(KinetoRealTraces, DirectoriesGiveOneRankPerFile) {
  fs::path root = TracesDir();
  if (!fs::is_directory(root)) GTEST_SKIP() << "no real traces at " << root;
  for (const auto& set : fs::directory_iterator(root)) {
    if (!set.is_directory()) continue;
    SCOPED_TRACE(set.path().string());
    std::vector<std::string> files = TraceFiles(set.path());
    ASSERT_TRUE(LooksLikeKineto(set.path().string()));
    auto src = OpenKineto(set.path().string());
    ASSERT_EQ(src->rank_count(), files.size());
    std::multiset<int64_t> want, got;
    for (const std::string& f : files) {
      RawCounts raw = CountRaw(ReadKinetoText(f));
      want.insert(raw.rank >= 0 ? raw.rank : 0);
    }
    for (size_t i = 0; i < src->rank_count(); ++i) got.insert(src->ReadRank(i).rank);
    EXPECT_EQ(got, want);
  }
}

TEST(KinetoRealTraces, ReferenceJsonIsNotATrace) {
  fs::path ref = fs::path(TracesDir()) / "hta-reference.json";
  if (!fs::exists(ref)) GTEST_SKIP() << "no " << ref;
  EXPECT_FALSE(LooksLikeKineto(ref.string()));
}

}  // namespace
}  // namespace moetrace
