#include "formats/ascend/ascend_csv.h"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>

#include "formats/ascend/cluster_output.h"
#include "formats/counter_sort.h"
#include "formats/decimal.h"
#include "formats/ascend/ns_carry.h"
#include "formats/ascend/shape_text.h"
#include "formats/ascend/trace_view.h"
#include "formats/errors.h"

namespace moetrace {
namespace {

constexpr double kBytesPerMB = 1024.0 * 1024.0;

// Shapes "81920,4096;8192,512" -> {{81920,4096},{8192,512}}; false if not numeric.
bool ParseShapes(std::string_view s, std::vector<std::vector<int64_t>>* out) {
  out->clear();
  s = TrimField(s);
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(';', start);
    if (end == std::string_view::npos) end = s.size();
    std::string_view tensor = TrimField(s.substr(start, end - start));
    std::vector<int64_t> dims;
    size_t p = 0;
    while (!tensor.empty() && p <= tensor.size()) {
      size_t q = tensor.find(',', p);
      if (q == std::string_view::npos) q = tensor.size();
      int64_t d = 0;
      if (!ParseScaledDecimal(tensor.substr(p, q - p), 0, &d)) return false;
      dims.push_back(d);
      p = q + 1;
    }
    out->push_back(std::move(dims));
    start = end + 1;
    if (out->size() > 100000) return false;
  }
  return true;
}

double MBToBytes(const CsvTable& csv, size_t r, int c) {
  // Exact decimal to 1e-6 MB (the profiler prints at most 6 decimals).
  return static_cast<double>(csv.Scaled(r, c, 6)) / 1e6 * kBytesPerMB;
}

struct ShapedRow {
  int64_t ts;
  std::string_view name;
  std::string_view shape;
};

// Gives each device task of the trace_view timeline the shapes of the
// kernel_details row of the same start and name (both files print the same
// µs decimals). Counted: tasks given shapes, rows matching no task.
void ShapesOntoTimeline(std::vector<ShapedRow>& rows, Rank* rank) {
  if (rows.empty()) return;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ShapedRow& a, const ShapedRow& b) { return a.ts < b.ts; });
  std::vector<uint8_t> used(rows.size(), 0);
  int64_t matched = 0;
  for (Track& t : rank->tracks) {
    if (t.kind != TrackKind::kDeviceStream) continue;
    EventTable& e = t.events;
    for (size_t i = 0; i < e.size(); ++i) {
      auto it = std::lower_bound(rows.begin(), rows.end(), e.ts[i],
                                 [](const ShapedRow& r, int64_t ts) { return r.ts < ts; });
      for (; it != rows.end() && it->ts == e.ts[i]; ++it) {
        const size_t k = static_cast<size_t>(it - rows.begin());
        if (used[k] || rank->strings.Get(e.name[i]) != it->name) continue;
        if (e.shape.empty()) e.shape.assign(e.size(), 0);
        e.shape[i] = rank->strings.Intern(it->shape);
        used[k] = 1;
        ++matched;
        break;
      }
    }
  }
  rank->AddStat("read.kernel_details.input_shapes_to_timeline", matched);
  const int64_t unmatched = static_cast<int64_t>(rows.size()) - matched;
  if (unmatched) rank->AddStat("skipped.kernel_details.input_shapes_no_timeline_task", unmatched);
}

int FindAny(const CsvTable& csv, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    int c = csv.Find(n);
    if (c >= 0) return c;
  }
  return -1;
}

}  // namespace

std::string ReferenceKeyPart(std::string_view column) {
  std::string out;
  for (char c : column) {
    bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
    if (alnum) {
      out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
    } else if (!out.empty() && out.back() != '_') {
      out.push_back('_');
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

void ImportKernelDetails(const CsvTable& csv, bool events, Rank* rank) {
  int c_name = csv.Require("Name");
  int c_start = csv.Require("Start Time(us)");
  int c_dur = csv.Require("Duration(us)");
  int c_type = csv.Find("Type");
  int c_core = csv.Find("Accelerator Core");
  int c_stream = csv.Find("Stream ID");
  int c_step = csv.Find("Step Id");
  int c_shapes = csv.Find("Input Shapes");

  std::map<int32_t, int32_t> gmm_per_step;
  int64_t rows = 0, gmm_per_group = 0, gmm_total = 0, gmm_unparsed = 0;
  int64_t counts[kCategoryCount] = {};
  int64_t with_shape = 0;
  std::vector<std::vector<int64_t>> shapes;
  // Rows per stream key, with the parsed times, emitted sorted below.
  struct Row {
    int64_t ts;
    int64_t dur_ps;
    std::string_view name;  // kept: a second lookup in the table misses the cache
    uint32_t row;
    Category cat;
    int32_t step;
  };
  std::map<int64_t, std::vector<Row>> streams;
  // With trace_view.json as the timeline: the rows that have shapes, to
  // give them to the same tasks there (ShapesOntoTimeline).
  std::vector<ShapedRow> shaped;
  std::vector<Row>* cur = nullptr;
  int64_t cur_key = 0;
  for (size_t r = 0; r < csv.row_count(); ++r) {
    ++rows;
    std::string_view name = csv.Field(r, c_name);
    std::string_view type = csv.Field(r, c_type);
    std::string_view core = csv.Field(r, c_core);
    int64_t ts = csv.MicrosNs(r, c_start);
    int64_t dur_ps = csv.Scaled(r, c_dur, 6);
    if (dur_ps < 0) csv.Fail(r, c_dur, "negative duration");
    int32_t step = kNone;
    if (c_step >= 0 && !csv.IsAbsent(r, c_step)) {
      int64_t s = csv.Int(r, c_step);
      if (s < 0 || s > INT32_MAX) csv.Fail(r, c_step, "step out of range");
      step = static_cast<int32_t>(s);
    }
    if (type.find("GroupedMatmul") != std::string_view::npos ||
        (type.empty() && name.find("GroupedMatmul") != std::string_view::npos)) {
      if (c_shapes >= 0 && ParseShapes(csv.Field(r, c_shapes), &shapes) && !shapes.empty() &&
          shapes[0].size() == 2) {
        RoutingRecord rec;
        rec.ts = ts;
        rec.step = step;
        rec.layer = gmm_per_step[step]++;
        rec.ep_size = 0;
        size_t run = 1;
        while (run < shapes.size() && shapes[run].size() == 2 && shapes[run][1] == shapes[0][1]) ++run;
        // A run of equal-k 2-D tensors followed by something else is x per
        // group; a run spanning everything is ambiguous (x and 2-D weights).
        if (run >= 2 && run < shapes.size()) {
          for (size_t k = 0; k < run; ++k) rec.tokens_per_expert.push_back(shapes[k][0]);
          ++gmm_per_group;
        } else {
          rec.tokens_per_expert.push_back(shapes[0][0]);
          ++gmm_total;
        }
        rank->routing.push_back(std::move(rec));
      } else {
        ++gmm_unparsed;
      }
    }
    if (!events) {
      if (c_shapes >= 0) {
        std::string_view shape = AscendShapeText(csv.Field(r, c_shapes));
        if (!shape.empty()) shaped.push_back(ShapedRow{ts, name, shape});
      }
      continue;
    }
    Category cat = ClassifyAscendTask(name, type, core);
    int64_t stream = -1;
    if (c_stream >= 0 && !csv.IsAbsent(r, c_stream)) {
      stream = csv.Int(r, c_stream);
      if (stream < 0) csv.Fail(r, c_stream, "negative stream id");
    }
    bool comm = cat == Category::kCollective || cat == Category::kP2P;
    // HCCL rows carry no stream id: they share one communication track.
    int64_t key = stream >= 0 ? stream : (comm ? -1 : -2);
    if (!cur || key != cur_key) {  // rows of one stream come in runs: one map lookup a run
      cur = &streams[key];
      cur_key = key;
    }
    cur->push_back(Row{ts, dur_ps, name, static_cast<uint32_t>(r), cat, step});
    ++counts[static_cast<int>(cat)];
  }
  for (auto& [key, list] : streams) {
    bool comm_track = key == -1;
    std::string tname = key >= 0 ? "Stream " + std::to_string(key) : (comm_track ? "HCCL" : "Stream N/A");
    Track& t = rank->AddTrack(TrackKind::kDeviceStream, TrackRole::kUnspecified, tname, key);
    auto by_ts = [](const Row& a, const Row& b) { return a.ts < b.ts; };
    if (!std::is_sorted(list.begin(), list.end(), by_ts)) std::stable_sort(list.begin(), list.end(), by_ts);
    t.events.Reserve(list.size());
    NsCarry carry;
    int comm = 0, copy = 0, other = 0;
    for (const Row& row : list) {
      Event e;
      e.ts = row.ts;
      e.dur = carry.Round(row.dur_ps);
      e.name = rank->strings.Intern(row.name);
      e.category = row.cat;
      e.step = row.step;
      if (c_shapes >= 0) {
        std::string_view shape = AscendShapeText(csv.Field(row.row, c_shapes));
        if (!shape.empty()) {
          e.shape = rank->strings.Intern(shape);
          ++with_shape;
        }
      }
      if (row.cat == Category::kCollective || row.cat == Category::kP2P) {
        CommRecord rec = HcclRecord(row.name, csv.Field(row.row, c_type), &rank->strings);
        e.comm = static_cast<int32_t>(t.comms.size());
        t.comms.push_back(std::move(rec));
        ++comm;
      } else if (row.cat == Category::kCopy) {
        ++copy;
      } else {
        ++other;
      }
      t.events.Append(e);
    }
    t.role = comm && !other && !copy ? TrackRole::kDeviceComm
             : copy && !other && !comm ? TrackRole::kDeviceCopy
                                       : TrackRole::kDeviceCompute;
  }
  if (events) {
    rank->AddStat("read.kernel_details.row", rows);
    for (int c = 0; c < kCategoryCount; ++c) {
      if (counts[c]) {
        rank->AddStat("imported." + std::string(CategoryName(static_cast<Category>(c))), counts[c]);
      }
    }
    if (with_shape) rank->AddStat("read.kernel_details.input_shapes", with_shape);
  } else {
    rank->AddStat("skipped.kernel_details.row_timeline_from_trace_view", rows);
    ShapesOntoTimeline(shaped, rank);
  }
  if (gmm_per_group) rank->AddStat("routing.grouped_matmul.per_group", gmm_per_group);
  if (gmm_total) rank->AddStat("routing.grouped_matmul.rank_total", gmm_total);
  if (gmm_unparsed) rank->AddStat("skipped.grouped_matmul.no_input_shapes", gmm_unparsed);
  if (csv.short_rows()) rank->AddStat("coerced.kernel_details.short_row", csv.short_rows());
  // Without the column every task is on one stream per accelerator core.
  if (events && c_stream < 0 && rows > 0) rank->AddStat("coerced.kernel_details.no_stream_id_column", rows);
}

StepTraceFigures ReadStepTrace(const CsvTable& csv) {
  StepTraceFigures out;
  const int c_step = csv.Find("Step");
  const size_t columns = csv.header().size();
  // A key per column, made once (not per value: the reader's cost was there).
  for (const auto& column : csv.header()) out.keys.push_back("step_trace." + ReferenceKeyPart(column) + "_us");
  out.figures.reserve(csv.row_count() * (columns - (c_step >= 0 ? 1 : 0)));
  for (size_t r = 0; r < csv.row_count(); ++r) {
    int32_t step = kNone;
    if (c_step >= 0 && !csv.IsAbsent(r, c_step)) {
      int64_t s = 0;
      if (ParseScaledDecimal(csv.Field(r, c_step), 0, &s) && s >= 0 && s <= INT32_MAX) {
        step = static_cast<int32_t>(s);
      }
    }
    for (size_t c = 0; c < columns; ++c) {
      if (static_cast<int>(c) == c_step) continue;
      const std::string_view f = csv.Field(r, static_cast<int>(c));
      if (CsvTable::AbsentText(f)) continue;
      out.figures.push_back({step, static_cast<uint32_t>(c), csv.DoubleOf(f, r, static_cast<int>(c))});
    }
  }
  return out;
}

std::vector<LabeledValue> StepTraceFigures::Reference(int32_t rank) const {
  std::vector<LabeledValue> out;
  out.reserve(figures.size());
  for (const Figure& f : figures) out.push_back({rank, f.step, keys[f.column], f.value});
  return out;
}

std::vector<LabeledValue> StepTraceReference(const CsvTable& csv, int32_t rank) {
  return ReadStepTrace(csv).Reference(rank);
}

std::vector<LabeledValue> ClusterStepTraceReference(const CsvTable& csv,
                                                    std::vector<int32_t>* ranks) {
  std::vector<LabeledValue> out;
  std::map<std::string, int64_t> stats;  // odd fields are skipped here
  for (const StepTraceRow& row : ReadClusterStepTrace(csv, &stats)) {
    if (row.type != "rank") continue;
    if (std::find(ranks->begin(), ranks->end(), row.rank) == ranks->end()) ranks->push_back(row.rank);
    for (const auto& [key, us] : row.figures_us) {
      out.push_back({row.rank, row.step, "step_trace." + key + "_us", us});
    }
  }
  std::sort(ranks->begin(), ranks->end());
  return out;
}

bool ImportMemoryRecord(const CsvTable& csv, Rank* rank) {
  int c_comp = csv.Find("Component");
  int c_ts = FindAny(csv, {"Timestamp(us)", "Time Stamp(us)"});
  if (c_ts < 0) csv.Require("Timestamp(us)");
  int c_alloc = csv.Require("Total Allocated(MB)");
  int c_res = csv.Find("Total Reserved(MB)");
  int c_active = csv.Find("Total Active(MB)");
  std::map<std::string, std::array<int, 3>> tracks;  // component -> track per measure
  bool pta = false;
  for (size_t r = 0; r < csv.row_count(); ++r) {
    std::string comp(c_comp >= 0 ? csv.Field(r, c_comp) : std::string_view("PTA"));
    auto [it, inserted] = tracks.try_emplace(comp, std::array<int, 3>{-1, -1, -1});
    int64_t ts = csv.MicrosNs(r, c_ts);
    const int cols[3] = {c_alloc, c_res, c_active};
    const char* measure[3] = {"allocated", "reserved", "active"};
    for (int m = 0; m < 3; ++m) {
      if (cols[m] < 0 || csv.IsAbsent(r, cols[m])) continue;
      if (it->second[m] < 0) {
        CounterKind kind = CounterKind::kOther;
        if (comp == "PTA" && m == 0) kind = CounterKind::kMemAllocated;
        if (comp == "PTA" && m == 1) kind = CounterKind::kMemReserved;
        if (kind != CounterKind::kOther) pta = true;
        it->second[m] = static_cast<int>(rank->tracks.size());
        Track& t = rank->AddTrack(TrackKind::kCounter, TrackRole::kUnspecified,
                                  comp + " " + measure[m]);
        t.counter = kind;
      }
      Track& t = rank->tracks[it->second[m]];
      t.sample_ts.push_back(ts);
      t.sample_value.push_back(MBToBytes(csv, r, cols[m]));
    }
  }
  for (auto& [comp, idx] : tracks) {
    for (int i : idx) {
      if (i >= 0) SortSamplesByTime(rank->tracks[i]);
    }
  }
  rank->AddStat("read.memory_record.row", static_cast<int64_t>(csv.row_count()));
  if (csv.short_rows()) rank->AddStat("coerced.memory_record.short_row", csv.short_rows());
  return pta;
}

void ImportOperatorMemory(const CsvTable& csv, bool primary, Rank* rank) {
  int c_at = csv.Require("Allocation Time(us)");
  int c_rt = csv.Find("Release Time(us)");
  int c_aa = csv.Require("Allocation Total Allocated(MB)");
  int c_ar = csv.Find("Allocation Total Reserved(MB)");
  int c_ra = csv.Find("Release Total Allocated(MB)");
  int c_rr = csv.Find("Release Total Reserved(MB)");
  size_t first = rank->tracks.size();
  Track& alloc = rank->AddTrack(TrackKind::kCounter, TrackRole::kUnspecified,
                                primary ? "operator_memory allocated" : "operator_memory allocated (secondary)");
  alloc.counter = primary ? CounterKind::kMemAllocated : CounterKind::kOther;
  Track& reserved = rank->AddTrack(TrackKind::kCounter, TrackRole::kUnspecified,
                                   primary ? "operator_memory reserved" : "operator_memory reserved (secondary)");
  reserved.counter = primary ? CounterKind::kMemReserved : CounterKind::kOther;
  for (size_t r = 0; r < csv.row_count(); ++r) {
    Track& a = rank->tracks[first];
    Track& v = rank->tracks[first + 1];
    int64_t at = csv.MicrosNs(r, c_at);
    a.sample_ts.push_back(at);
    a.sample_value.push_back(MBToBytes(csv, r, c_aa));
    if (c_ar >= 0 && !csv.IsAbsent(r, c_ar)) {
      v.sample_ts.push_back(at);
      v.sample_value.push_back(MBToBytes(csv, r, c_ar));
    }
    if (c_rt >= 0 && !csv.IsAbsent(r, c_rt)) {
      int64_t rt = csv.MicrosNs(r, c_rt);
      if (c_ra >= 0 && !csv.IsAbsent(r, c_ra)) {
        a.sample_ts.push_back(rt);
        a.sample_value.push_back(MBToBytes(csv, r, c_ra));
      }
      if (c_rr >= 0 && !csv.IsAbsent(r, c_rr)) {
        v.sample_ts.push_back(rt);
        v.sample_value.push_back(MBToBytes(csv, r, c_rr));
      }
    }
  }
  SortSamplesByTime(rank->tracks[first]);
  SortSamplesByTime(rank->tracks[first + 1]);
  if (rank->tracks[first + 1].sample_ts.empty()) rank->tracks.erase(rank->tracks.begin() + first + 1);
  rank->AddStat("read.operator_memory.row", static_cast<int64_t>(csv.row_count()));
  if (csv.short_rows()) rank->AddStat("coerced.operator_memory.short_row", csv.short_rows());
}

}  // namespace moetrace
