#include "analyzer/label_check.h"

#include <cmath>
#include <string>
#include <unordered_map>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

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

void CheckOne(const LabeledValue& label, const char* source,
              const std::unordered_map<int32_t, const analysis::RankAnalysis*>& ranks,
              analysis::Analysis* a) {
  analysis::LabelCheck* c = a->add_label_checks();
  c->set_source(source);
  c->set_rank(label.rank);
  if (label.step >= 0) c->set_step(label.step);
  c->set_key(label.key);
  c->set_expected(label.value);
  auto it = ranks.find(label.rank);
  if (it == ranks.end()) return;
  const analysis::RankAnalysis& r = *it->second;
  double actual = 0, span = 0;
  bool found = false;
  if (label.step < 0) {
    found = LookupNumber(r, label.key, &actual);
    span = static_cast<double>(r.breakdown().span_ns());
  } else if (label.key.rfind("breakdown.", 0) == 0) {
    // Per-step figures exist for the breakdown.
    for (const analysis::Breakdown& st : r.steps()) {
      if (st.step() != label.step) continue;
      found = LookupNumber(st, std::string_view(label.key).substr(10), &actual);
      span = static_cast<double>(st.span_ns());
    }
  }
  if (!found) return;
  c->set_actual(actual);
  const bool is_time = label.key.size() > 3 && label.key.compare(label.key.size() - 3, 3, "_ns") == 0;
  const double den = is_time ? span : std::abs(label.value);
  if (den > 0) c->set_error(std::abs(actual - label.value) / den);
}

}  // namespace

void CheckLabels(const Metadata& metadata, analysis::Analysis* analysis) {
  std::unordered_map<int32_t, const analysis::RankAnalysis*> ranks;
  for (const auto& r : analysis->ranks()) ranks[r.rank()] = &r;
  // Appending label checks does not move the ranks (a different field).
  for (const LabeledValue& l : metadata.ground_truth) CheckOne(l, "ground_truth", ranks, analysis);
  for (const LabeledValue& l : metadata.reference) CheckOne(l, "reference", ranks, analysis);
}

}  // namespace moetrace
