// Input shapes on the real Kineto traces ($MOETRACE_REAL_TRACES/kineto,
// default ../shared/traces/kineto; skipped when absent): every device op's
// shape is checked against one computed here, independently, from the raw
// file with a simdjson DOM pass — the Input Dims of the innermost cpu_op
// with Input Dims that encloses the op's launch (same correlation) on the
// launch's thread, written back as "[[a, b], [c]]".
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "formats/kineto/kineto_importer.h"
#include "formats/kineto/read_text_for_test.h"
#include "formats/real_traces_dir.h"

namespace moetrace {
namespace {

namespace fs = std::filesystem;
namespace dom = simdjson::dom;

std::string OnlyFile(const std::string& set) {
  const fs::path dir = fs::path(RealTracesRoot()) / "kineto" / set;
  if (!fs::is_directory(dir)) return "";
  for (const auto& e : fs::directory_iterator(dir)) return e.path().string();
  return "";
}

// The DOM value written the way the profiler writes Input Dims compactly.
std::string Dims(dom::element e) {
  if (e.is_array()) {
    std::string s = "[";
    bool first = true;
    dom::array list = e.get_array();  // named: value() of a temporary dangles
    for (dom::element x : list) {
      if (!first) s += ", ";
      first = false;
      s += Dims(x);
    }
    return s + "]";
  }
  if (e.is_int64()) return std::to_string(int64_t(e.get_int64().value()));
  return simdjson::to_string(e);
}

double Num(dom::element e) {
  if (e.is_number()) return double(e.get_double().value());
  return std::stod(std::string(e.get_string().value()));
}

struct Expected {
  std::map<int64_t, std::string> by_correlation;  // kernel correlation -> shape ("" = none)
  std::map<int64_t, std::string> kernel_name;
};

Expected Compute(const std::string& text) {
  struct Op {
    double ts, end;
    std::string dims;
  };
  struct Launch {
    int64_t pid, tid;
    double ts, end;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<Op>> ops;
  std::map<int64_t, Launch> launches;
  std::vector<std::pair<int64_t, std::string>> kernels;
  dom::parser parser;
  dom::element doc = parser.parse(text);
  dom::array events = doc["traceEvents"].get_array();
  for (dom::element e : events) {
    std::string_view ph, cat;
    if (e["ph"].get(ph) || ph != "X" || e["cat"].get(cat)) continue;
    dom::element args;
    if (e["args"].get(args)) continue;
    const double ts = Num(e["ts"].value());
    double dur = 0;
    if (dom::element d; !e["dur"].get(d)) dur = Num(d);
    const int64_t pid = e["pid"].is_int64() ? int64_t(e["pid"].get_int64().value()) : -1;
    const int64_t tid = e["tid"].is_int64() ? int64_t(e["tid"].get_int64().value()) : -1;
    if (cat == "cpu_op" || cat == "Operator") {
      if (dom::element d; !args["Input Dims"].get(d)) ops[{pid, tid}].push_back({ts, ts + dur, Dims(d)});
    } else if (cat == "cuda_runtime" || cat == "Runtime" || cat == "cuda_driver") {
      if (dom::element c; !args["correlation"].get(c)) {
        launches[int64_t(c.get_int64().value())] = {pid, tid, ts, ts + dur};
      }
    } else if (cat == "kernel" || cat == "Kernel" || cat == "gpu_memcpy" || cat == "Memcpy" ||
               cat == "gpu_memset" || cat == "Memset") {
      if (dom::element c; !args["correlation"].get(c)) {
        kernels.emplace_back(int64_t(c.get_int64().value()),
                             std::string(e["name"].get_string().value()));
      }
    }
  }
  for (auto& [k, v] : ops) {
    // Start order; of ops starting together the longest first (outermost).
    std::stable_sort(v.begin(), v.end(), [](const Op& a, const Op& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.end > b.end;
    });
  }
  Expected out;
  for (const auto& [corr, name] : kernels) {
    out.kernel_name[corr] = name;
    std::string& shape = out.by_correlation[corr];
    auto l = launches.find(corr);
    if (l == launches.end()) continue;
    const std::vector<Op>& v = ops[{l->second.pid, l->second.tid}];
    // The innermost enclosing op is the last-starting one that encloses.
    for (size_t i = v.size(); i > 0; --i) {
      const Op& o = v[i - 1];
      if (o.ts <= l->second.ts && o.end >= l->second.end) {
        shape = o.dims;
        break;
      }
    }
  }
  return out;
}

struct Check {
  int64_t device_ops = 0, with_shape = 0;
};

Check CompareWithImport(const std::string& path, const Expected& want) {
  Check c;
  Trace t = ReadAll(*OpenKineto(path));
  for (const Rank& r : t.ranks) {
    for (const Track& tr : r.tracks) {
      if (tr.kind != TrackKind::kDeviceStream) continue;
      const EventTable& e = tr.events;
      for (size_t i = 0; i < e.size(); ++i) {
        auto w = want.by_correlation.find(e.correlation[i]);
        if (w == want.by_correlation.end()) continue;
        ++c.device_ops;
        c.with_shape += e.ShapeAt(i) != 0;
        EXPECT_EQ(r.strings.Get(e.ShapeAt(i)), w->second)
            << path << ": " << r.strings.Get(e.name[i]) << " correlation " << e.correlation[i];
      }
    }
  }
  return c;
}

TEST(KinetoShapesReal, B200EagerEveryDeviceOpHasItsLaunchingOpsDims) {
  const std::string path = OnlyFile("b200-eager");
  if (path.empty()) GTEST_SKIP() << "no real traces (set MOETRACE_REAL_TRACES)";
  const Expected want = Compute(ReadKinetoText(path));
  const Check c = CompareWithImport(path, want);
  // 929 device ops with a correlation: 927 launched inside a cpu_op with
  // Input Dims, 2 not (python3 over the same file gives the same split).
  EXPECT_EQ(c.device_ops, 929);
  EXPECT_EQ(c.with_shape, 927);
  Trace t = ReadAll(*OpenKineto(path));
  const Rank& r = t.ranks[0];
  int64_t linked = 0, outside = 0;
  for (const auto& [k, v] : r.import_stats) {
    if (k == "link.shape") linked = v;
    if (k == "skipped.shape.launch_outside_shaped_op") outside = v;
  }
  EXPECT_EQ(linked, 927);
  EXPECT_EQ(outside, 2);
}

TEST(KinetoShapesReal, LegacyResnet50ConvolutionKernels) {
  const std::string path = OnlyFile("legacy-resnet50");
  if (path.empty()) GTEST_SKIP() << "no real traces (set MOETRACE_REAL_TRACES)";
  const Expected want = Compute(ReadKinetoText(path));
  const Check c = CompareWithImport(path, want);
  EXPECT_EQ(c.device_ops, 9096);
  EXPECT_EQ(c.with_shape, 9096);
  // The first convolution of ResNet-50 (batch 32, 7x7, 64 filters), as
  // the file's aten::cudnn_convolution writes its Input Dims.
  Trace t = ReadAll(*OpenKineto(path));
  const Rank& r = t.ranks[0];
  std::string first_conv;
  TimeNs first_ts = INT64_MAX;
  for (const Track& tr : r.tracks) {
    if (tr.kind != TrackKind::kDeviceStream) continue;
    for (size_t i = 0; i < tr.events.size(); ++i) {
      if (r.strings.Get(tr.events.name[i]) == "volta_scudnn_128x64_relu_medium_nn_v1" &&
          tr.events.ts[i] < first_ts) {
        first_ts = tr.events.ts[i];
        first_conv = r.strings.Get(tr.events.ShapeAt(i));
      }
    }
  }
  EXPECT_EQ(first_conv, "[[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], []]");
}

TEST(KinetoShapesReal, OtherSetsAgreeWithTheRawFile) {
  // Device ops given shapes per set (python3 over the raw files agrees);
  // sglang-decode's include a DtoH copy issued by a blocking cudaMemcpy.
  const std::pair<const char*, int64_t> sets[] = {
      {"mi300-resnet-ckpt", 2685}, {"a2a-2rank", 1188 + 1138}, {"sglang-decode", 11}};
  for (const auto& [set, linked] : sets) {
    const fs::path dir = fs::path(RealTracesRoot()) / "kineto" / set;
    if (!fs::is_directory(dir)) GTEST_SKIP() << "no real traces (set MOETRACE_REAL_TRACES)";
    int64_t with_shape = 0;
    for (const auto& f : fs::directory_iterator(dir)) {
      const std::string path = f.path().string();
      with_shape += CompareWithImport(path, Compute(ReadKinetoText(path))).with_shape;
    }
    EXPECT_EQ(with_shape, linked) << set;
  }
}

}  // namespace
}  // namespace moetrace
