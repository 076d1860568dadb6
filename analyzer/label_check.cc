#include "analyzer/label_check.h"

#include <cmath>
#include <string>
#include <unordered_map>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include "analyzer/rl/rl_label.h"

namespace moetrace {

bool LookupNumber(const google::protobuf::Message& message, std::string_view path, double* out) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Message* m = &message;
  while (true) {
    const size_t dot = path.find('.');
    const std::string name(path.substr(0, dot));
    const FieldDescriptor* f = m->GetDescriptor()->FindFieldByName(name);
    if (!f || f->is_repeated()) return false;
    const auto* r = m->GetReflection();
    if (dot != std::string_view::npos) {
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) return false;
      m = &r->GetMessage(*m, f);
      path.remove_prefix(dot + 1);
      continue;
    }
    if (f->has_presence() && !r->HasField(*m, f)) return false;
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: *out = r->GetInt32(*m, f); return true;
      case FieldDescriptor::CPPTYPE_INT64: *out = static_cast<double>(r->GetInt64(*m, f)); return true;
      case FieldDescriptor::CPPTYPE_UINT32: *out = r->GetUInt32(*m, f); return true;
      case FieldDescriptor::CPPTYPE_UINT64: *out = static_cast<double>(r->GetUInt64(*m, f)); return true;
      case FieldDescriptor::CPPTYPE_DOUBLE: *out = r->GetDouble(*m, f); return true;
      case FieldDescriptor::CPPTYPE_FLOAT: *out = r->GetFloat(*m, f); return true;
      default: return false;
    }
  }
}

namespace {

// A profiler's own figure (Ascend: "overlap_analysis.<x>_us" per rank,
// "step_trace.<x>_us" per step) as the same figure of a breakdown, in µs.
// Ascend's Free also holds copies, which METRICS.md keeps apart (per-step
// figures; the rank's own come from ranks[i].ascend when present).
bool ProfilerFigure(const analysis::Breakdown& b, std::string_view key, double* out) {
  for (std::string_view prefix : {"overlap_analysis.", "step_trace."}) {
    if (key.substr(0, prefix.size()) != prefix) continue;
    std::string_view x = key.substr(prefix.size());
    if (x.size() < 3 || x.substr(x.size() - 3) != "_us") return false;
    x.remove_suffix(3);
    double ns;
    if (x == "computing") {
      ns = static_cast<double>(b.compute_ns());
    } else if (x == "communication") {
      ns = static_cast<double>(b.comm_ns());
    } else if (x == "communication_not_overlapped") {
      ns = static_cast<double>(b.comm_exposed_ns());
    } else if (x == "overlapped") {
      ns = static_cast<double>(b.comm_overlapped_ns());
    } else if (x == "free") {
      ns = static_cast<double>(b.free_ns() + b.copy_exposed_ns());
    } else if (x == "bubble") {
      ns = static_cast<double>(b.bubble_ns());
    } else if (x == "span") {
      ns = static_cast<double>(b.span_ns());
    } else {
      return false;
    }
    *out = ns / 1e3;
    return true;
  }
  return false;
}

// The rank's Overlap Analysis figures computed the profiler's way
// (ranks[i].ascend), for the rank-level "overlap_analysis.<x>_us" labels.
// Also the segment counts ("overlap_analysis.<x>_segments"; *micros false).
bool AscendFigure(const analysis::RankAnalysis& r, const LabeledValue& label, double* out,
                  bool* micros) {
  if (label.step >= 0 || !r.has_ascend()) return false;
  const analysis::AscendOverlap& o = r.ascend().overlap_analysis();
  const std::string& k = label.key;
  *micros = true;
  if (k == "overlap_analysis.computing_us") {
    *out = static_cast<double>(o.computing_ns()) / 1e3;
  } else if (k == "overlap_analysis.communication_not_overlapped_us") {
    *out = static_cast<double>(o.communication_not_overlapped_ns()) / 1e3;
  } else if (k == "overlap_analysis.free_us") {
    *out = static_cast<double>(o.free_ns()) / 1e3;
  } else if (k == "overlap_analysis.span_us") {
    // The profiler's device span: its three parts (not METRICS.md's step
    // window, which ends at the last op of the step).
    *out = static_cast<double>(o.computing_ns() + o.communication_not_overlapped_ns() +
                               o.free_ns()) / 1e3;
  } else if (k == "overlap_analysis.computing_segments") {
    *out = static_cast<double>(o.computing_segments());
    *micros = false;
  } else if (k == "overlap_analysis.free_segments") {
    *out = static_cast<double>(o.free_segments());
    *micros = false;
  } else {
    return false;
  }
  return true;
}

void CheckOne(const LabeledValue& label, const char* source,
              const std::unordered_map<int32_t, const analysis::RankAnalysis*>& ranks,
              analysis::Analysis* a) {
  analysis::LabelCheck* c = a->add_label_checks();
  c->set_source(source);
  c->set_rank(label.rank);
  if (label.step >= 0) c->set_step(label.step);
  c->set_key(label.key);
  c->set_expected(label.value);
  if (label.rank == kNone && label.step >= 0) {
    // A job-level RL figure (rl.iterations[step]).
    double actual = 0, time = 0;
    if (!a->has_rl() || !rl::LabelFigure(a->rl(), label.step, label.key, &actual, &time)) return;
    c->set_actual(actual);
    const double den = time > 0 ? time : std::abs(label.value);
    if (den > 0) c->set_error(std::abs(actual - label.value) / den);
    return;
  }
  auto it = ranks.find(label.rank);
  if (it == ranks.end()) return;
  const analysis::RankAnalysis& r = *it->second;
  // The breakdown the label is about: the rank's sum, or one step's.
  const analysis::Breakdown* b = label.step < 0 ? &r.breakdown() : nullptr;
  for (const analysis::Breakdown& st : r.steps()) {
    if (label.step >= 0 && st.step() == label.step) b = &st;
  }
  if (!b) return;
  double actual = 0;
  bool found = false;
  bool micros = false;
  if (AscendFigure(r, label, &actual, &micros)) {
    found = true;
  } else if (ProfilerFigure(*b, label.key, &actual)) {
    found = micros = true;
  } else if (label.step < 0) {
    found = LookupNumber(r, label.key, &actual);
  } else {
    // steps[k] holds the breakdown fields and comm_by_class.
    std::string_view key = label.key;
    if (key.substr(0, 10) == "breakdown.") key.remove_prefix(10);
    found = LookupNumber(*b, key, &actual);
  }
  if (!found) return;
  c->set_actual(actual);
  const std::string_view key = label.key;
  const bool is_time = micros || (key.size() > 3 && key.substr(key.size() - 3) == "_ns");
  const double span = static_cast<double>(b->span_ns()) / (micros ? 1e3 : 1.0);
  const double den = is_time ? span : std::abs(label.value);
  if (den > 0) c->set_error(std::abs(actual - label.value) / den);
}

}  // namespace

void CheckLabels(const Metadata& metadata, analysis::Analysis* analysis) {
  std::unordered_map<int32_t, const analysis::RankAnalysis*> ranks;
  for (const auto& r : analysis->ranks()) ranks[r.rank()] = &r;
  // Appending label checks does not move the ranks (a different field).
  for (const LabeledValue& l : metadata.ground_truth) CheckOne(l, "ground_truth", ranks, analysis);
  // A profiler's reference set can hold thousands of per-op figures (Ascend
  // communication.json) that no metric corresponds to: list only the ones
  // we compute. Every ground-truth label is listed, checked or not.
  for (const LabeledValue& l : metadata.reference) {
    analysis::Analysis scratch;
    CheckOne(l, "reference", ranks, &scratch);
    if (scratch.label_checks(0).has_actual()) *analysis->add_label_checks() = scratch.label_checks(0);
  }
}

}  // namespace moetrace
