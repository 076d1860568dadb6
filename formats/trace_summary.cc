#include "formats/trace_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <mutex>
#include <set>
#include <thread>

#include "formats/json_writer.h"

namespace moetrace {
namespace {

std::string FormatDuration(TimeNs ns) {
  if (ns >= 1'000'000'000) return fmt::format("{:.3f} s", ns / 1e9);
  if (ns >= 1'000'000) return fmt::format("{:.3f} ms", ns / 1e6);
  if (ns >= 1'000) return fmt::format("{:.3f} us", ns / 1e3);
  return fmt::format("{} ns", ns);
}

// Ground truth grouped as rank -> key -> value (step -1 only: whole trace).
std::map<int32_t, std::map<std::string, double>> GroundTruthByRank(const Metadata& m) {
  std::map<int32_t, std::map<std::string, double>> out;
  for (const LabeledValue& v : m.ground_truth) {
    if (v.step == kNone) out[v.rank][v.key] = v.value;
  }
  return out;
}

// Writes {"a": {"b": v}} for dotted keys "a.b".
void WriteNested(JsonWriter& w, const std::map<std::string, double>& values) {
  // Keys are sorted, so a prefix group is contiguous.
  std::vector<std::string> open;
  for (const auto& [key, value] : values) {
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t dot; (dot = key.find('.', start)) != std::string::npos; start = dot + 1) {
      parts.push_back(key.substr(start, dot - start));
    }
    std::string leaf = key.substr(start);
    size_t common = 0;
    while (common < open.size() && common < parts.size() && open[common] == parts[common]) {
      ++common;
    }
    while (open.size() > common) {
      w.EndObject();
      open.pop_back();
    }
    for (size_t i = common; i < parts.size(); ++i) {
      w.Key(parts[i]).BeginObject();
      open.push_back(parts[i]);
    }
    w.Key(leaf).Double(value);
  }
  while (!open.empty()) {
    w.EndObject();
    open.pop_back();
  }
}

// Whether any event or sample set the span (AccumulateRank's test).
bool HasSpan(const TraceSummary& s) {
  return !(s.start_ns == 0 && s.end_ns == 0 && s.events() == 0 && s.counter_samples == 0);
}

}  // namespace

int64_t TraceSummary::events() const {
  int64_t n = 0;
  for (int64_t c : events_by_category) n += c;
  return n;
}

void AccumulateRank(const Rank& rank, TraceSummary* s) {
  s->rank_ids.push_back(rank.rank);
  const bool empty = !HasSpan(*s);
  TimeNs lo = empty ? std::numeric_limits<TimeNs>::max() : s->start_ns;
  TimeNs hi = empty ? std::numeric_limits<TimeNs>::min() : s->end_ns;
  std::set<int32_t> steps;
  for (const Track& t : rank.tracks) {
    s->tracks_by_kind[static_cast<int>(t.kind)]++;
    const EventTable& e = t.events;
    for (size_t i = 0; i < e.size(); ++i) {
      s->events_by_category[static_cast<int>(e.category[i])]++;
      lo = std::min(lo, e.ts[i]);
      hi = std::max(hi, e.ts[i] + std::max<TimeNs>(e.dur[i], 0));
      if (e.category[i] == Category::kLaunch && e.correlation[i] >= 0) s->correlated_launches++;
      if ((e.flags[i] & kFlagStepMarker) && e.step[i] != kNone) steps.insert(e.step[i]);
    }
    s->comm_records += static_cast<int64_t>(t.comms.size());
    s->counter_samples += static_cast<int64_t>(t.sample_ts.size());
    for (TimeNs ts : t.sample_ts) {
      lo = std::min(lo, ts);
      hi = std::max(hi, ts);
    }
  }
  s->routing_records += static_cast<int64_t>(rank.routing.size());
  s->steps = std::max<int64_t>(s->steps, static_cast<int64_t>(steps.size()));
  for (const auto& [k, v] : rank.import_stats) s->import_stats[k] += v;
  if (lo <= hi) {
    s->start_ns = lo;
    s->end_ns = hi;
  }
}

void MergeSummary(const TraceSummary& part, TraceSummary* into) {
  const bool part_span = HasSpan(part), into_span = HasSpan(*into);
  into->rank_ids.insert(into->rank_ids.end(), part.rank_ids.begin(), part.rank_ids.end());
  for (size_t k = 0; k < part.tracks_by_kind.size(); ++k) into->tracks_by_kind[k] += part.tracks_by_kind[k];
  for (size_t c = 0; c < part.events_by_category.size(); ++c)
    into->events_by_category[c] += part.events_by_category[c];
  into->counter_samples += part.counter_samples;
  into->comm_records += part.comm_records;
  into->routing_records += part.routing_records;
  into->correlated_launches += part.correlated_launches;
  into->steps = std::max(into->steps, part.steps);
  for (const auto& [k, v] : part.import_stats) into->import_stats[k] += v;
  if (part_span) {
    into->start_ns = into_span ? std::min(into->start_ns, part.start_ns) : part.start_ns;
    into->end_ns = into_span ? std::max(into->end_ns, part.end_ns) : part.end_ns;
  }
}

TraceSummary Summarize(const TraceSource& source, const std::function<void(size_t, size_t)>& progress,
                       int threads) {
  const size_t n = source.rank_count();
  size_t workers = threads > 0 ? size_t(threads) : std::max(1u, std::thread::hardware_concurrency());
  workers = std::min(workers, std::max<size_t>(n, 1));
  std::vector<TraceSummary> parts(workers);
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  size_t done = 0;
  size_t error_at = n;
  std::exception_ptr error;
  // Ranks are claimed in index order and a worker stops only before a
  // claim, so every rank before a bad one is read: keeping the bad rank of
  // the lowest index reports what one thread would.
  auto work = [&](size_t w) {
    // Every column is decoded (no SkipColumnsAnalyzeIgnores), so that `info`
    // still checks all of a file: ~15% more CPU on the 718B trace.
    Rank rank;
    while (!stop.load(std::memory_order_relaxed)) {
      const size_t i = next.fetch_add(1);
      if (i >= n) return;
      try {
        source.ReadRankInto(i, &rank);
        AccumulateRank(rank, &parts[w]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (i < error_at) {
          error_at = i;
          error = std::current_exception();
        }
        stop.store(true);
        return;
      }
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      if (progress) progress(done, n);
    }
  };
  std::vector<std::thread> pool;
  for (size_t w = 1; w < workers; ++w) pool.emplace_back(work, w);
  work(0);
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  TraceSummary s;
  s.metadata = source.metadata();
  for (const TraceSummary& part : parts) MergeSummary(part, &s);
  std::sort(s.rank_ids.begin(), s.rank_ids.end());
  return s;
}

std::string SummaryToText(const TraceSummary& s) {
  std::string out;
  auto line = [&](std::string_view k, const std::string& v) {
    // Keys longer than the column still get a separating space.
    fmt::format_to(std::back_inserter(out), "  {:<24} {}\n", k, v);
  };
  fmt::format_to(std::back_inserter(out), "{}\n", s.path);
  line("format", s.format);
  line("source", s.metadata.source.empty() ? "-" : s.metadata.source);
  if (!s.metadata.origin.empty()) line("origin", s.metadata.origin);
  if (!s.metadata.device.empty()) line("device", s.metadata.device);
  std::string ranks = fmt::format("{}", s.rank_ids.size());
  if (!s.rank_ids.empty()) {
    ranks += fmt::format(" (ids {}..{})", s.rank_ids.front(), s.rank_ids.back());
  }
  line("ranks", ranks);
  const WorldLayout& l = s.metadata.layout;
  if (l.world_size > 0) {
    std::string layout = fmt::format("world size {}", l.world_size);
    const std::pair<const char*, int32_t> parts[] = {
        {"DP", l.dp}, {"TP", l.tp}, {"PP", l.pp}, {"VPP", l.vpp}, {"EP", l.ep}, {"CP", l.cp}};
    for (const auto& [name, size] : parts) {
      if (size > 0) layout += fmt::format(", {} {}", name, size);
    }
    line("layout", layout);
  }
  line("tracks", fmt::format("{} host threads, {} device streams, {} counters",
                             s.tracks_by_kind[0], s.tracks_by_kind[1], s.tracks_by_kind[2]));
  line("events", fmt::format("{}", s.events()));
  for (int c = 0; c < kCategoryCount; ++c) {
    if (s.events_by_category[c] == 0) continue;
    line(fmt::format("  {}", CategoryName(static_cast<Category>(c))),
         fmt::format("{}", s.events_by_category[c]));
  }
  line("counter samples", fmt::format("{}", s.counter_samples));
  line("comm records", fmt::format("{}", s.comm_records));
  line("routing records", fmt::format("{}", s.routing_records));
  line("steps", fmt::format("{}", s.steps));
  line("time span", fmt::format("{} ({} .. {} ns)", FormatDuration(s.end_ns - s.start_ns),
                                s.start_ns, s.end_ns));
  if (!s.import_stats.empty()) {
    out += "  import (read / skipped by kind):\n";
    size_t width = 0;  // keys such as "skipped.arg.Process Group Ranks" outgrow line()'s column
    for (const auto& kv : s.import_stats) width = std::max(width, kv.first.size());
    for (const auto& [k, v] : s.import_stats) out += fmt::format("    {:<{}} {}\n", k, width, v);
  }
  if (!s.metadata.attributes.empty()) {
    out += "  attributes:\n";
    size_t shown = 0;
    for (const auto& [k, v] : s.metadata.attributes) {
      if (++shown > 20) {
        line("  ...", fmt::format("{} more (see --json)", s.metadata.attributes.size() - 20));
        break;
      }
      line(fmt::format("  {}", k), v.size() > 80 ? v.substr(0, 77) + "..." : v);
    }
  }
  if (!s.metadata.config_json.empty()) {
    line("configuration", fmt::format("{} bytes of RunConfig JSON (see --json)",
                                      s.metadata.config_json.size()));
  }
  if (!s.metadata.ground_truth.empty()) {
    line("ground truth", fmt::format("{} labels (see --json)", s.metadata.ground_truth.size()));
  }
  return out;
}

std::string SummaryToJson(const std::vector<TraceSummary>& summaries) {
  JsonWriter w;
  // One input: its summary is the document. Several: {"inputs": [...]}.
  bool several = summaries.size() != 1;
  if (several) w.BeginObject().Key("inputs").BeginArray();
  for (const TraceSummary& s : summaries) {
    w.BeginObject();
    w.Key("attributes").BeginObject();
    std::map<std::string, std::string> attrs(s.metadata.attributes.begin(),
                                             s.metadata.attributes.end());
    for (const auto& [k, v] : attrs) w.Key(k).String(v);
    w.EndObject();
    w.Key("comm_records").Int(s.comm_records);
    if (!s.metadata.config_json.empty()) w.Key("config").Raw(s.metadata.config_json);
    w.Key("correlated_launches").Int(s.correlated_launches);
    w.Key("counter_samples").Int(s.counter_samples);
    w.Key("device").String(s.metadata.device);
    w.Key("events").Int(s.events());
    w.Key("events_by_category").BeginObject();
    // Sorted by name for a stable document.
    std::map<std::string_view, int64_t> by_name;
    for (int c = 0; c < kCategoryCount; ++c) {
      by_name[CategoryName(static_cast<Category>(c))] = s.events_by_category[c];
    }
    for (const auto& [k, v] : by_name) w.Key(k).Int(v);
    w.EndObject();
    w.Key("format").String(s.format);
    w.Key("ground_truth").BeginObject();
    for (const auto& [rank, values] : GroundTruthByRank(s.metadata)) {
      w.Key(std::to_string(rank)).BeginObject();
      WriteNested(w, values);
      w.EndObject();
    }
    w.EndObject();
    w.Key("import_stats").BeginObject();
    for (const auto& [k, v] : s.import_stats) w.Key(k).Int(v);
    w.EndObject();
    const WorldLayout& l = s.metadata.layout;
    w.Key("layout").BeginObject();
    w.Key("cp").Int(l.cp).Key("devices_per_node").Int(l.devices_per_node).Key("dp").Int(l.dp);
    w.Key("ep").Int(l.ep).Key("pp").Int(l.pp).Key("tp").Int(l.tp).Key("vpp").Int(l.vpp);
    w.Key("world_size").Int(l.world_size);
    w.EndObject();
    w.Key("origin").String(s.metadata.origin);
    w.Key("path").String(s.path);
    w.Key("rank_ids").BeginArray();
    for (int32_t r : s.rank_ids) w.Int(r);
    w.EndArray();
    w.Key("ranks").Int(static_cast<int64_t>(s.rank_ids.size()));
    w.Key("routing_records").Int(s.routing_records);
    w.Key("source").String(s.metadata.source);
    w.Key("steps").Int(s.steps);
    w.Key("time_span").BeginObject();
    w.Key("duration_ns").Int(s.end_ns - s.start_ns);
    w.Key("end_ns").Int(s.end_ns);
    w.Key("start_ns").Int(s.start_ns);
    w.EndObject();
    w.Key("tracks_by_kind").BeginObject();
    w.Key("counter").Int(s.tracks_by_kind[2]);
    w.Key("device_stream").Int(s.tracks_by_kind[1]);
    w.Key("host_thread").Int(s.tracks_by_kind[0]);
    w.EndObject();
    w.EndObject();
  }
  if (several) w.EndArray().EndObject();
  return w.Take();
}

}  // namespace moetrace
