#include "analyzer/stable_json.h"

#include "formats/json_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <iterator>
#include <unordered_map>
#include <utility>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

namespace moetrace {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Set by WriteStableJson while it runs on this thread: where a full chunk
// of the document goes (null: ToStableJson, the whole document in `out`).
thread_local const std::function<void(std::string_view)>* t_sink = nullptr;
// A chunk: big enough that the writes are few, small enough to stay in
// cache; the buffer is reused, so no page is zeroed or copied twice.
constexpr size_t kChunkBytes = size_t{1} << 20;

void MaybeFlush(std::string* out) {
  if (t_sink != nullptr && out->size() >= kChunkBytes) {
    (*t_sink)(*out);
    out->clear();
  }
}

void Indent(std::string* out, int depth) { out->append(static_cast<size_t>(depth) * 2, ' '); }

void AppendMessage(std::string* out, const Message& m, int depth);

// One value of `f` (index -1 = singular).
void AppendValue(std::string* out, const Message& m, const FieldDescriptor* f, int index,
                 int depth) {
  const Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    // Integers straight into `out` (no temporary string): the 718B
    // trace's JSON is 78 MB, most of it numbers.
    case FieldDescriptor::CPPTYPE_INT32:
      fmt::format_to(std::back_inserter(*out), "{}",
                     rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      fmt::format_to(std::back_inserter(*out), "{}",
                     rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      fmt::format_to(std::back_inserter(*out), "{}",
                     rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f));
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      fmt::format_to(std::back_inserter(*out), "{}",
                     rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
      break;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      out->append(
          FormatJsonDouble(rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f)));
      break;
    case FieldDescriptor::CPPTYPE_FLOAT:
      out->append(FormatJsonDouble(rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f)));
      break;
    case FieldDescriptor::CPPTYPE_BOOL:
      out->append((rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f)) ? "true" : "false");
      break;
    case FieldDescriptor::CPPTYPE_ENUM:
      AppendJsonString((rep ? r->GetRepeatedEnum(m, f, index) : r->GetEnum(m, f))->name(), out);
      break;
    case FieldDescriptor::CPPTYPE_STRING:
      AppendJsonString(rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f), out);
      break;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      AppendMessage(out, rep ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f), depth);
      break;
  }
}

std::string MapKey(const Message& entry) {
  const FieldDescriptor* k = entry.GetDescriptor()->map_key();
  const Reflection* r = entry.GetReflection();
  switch (k->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING: return r->GetString(entry, k);
    case FieldDescriptor::CPPTYPE_INT32: return std::to_string(r->GetInt32(entry, k));
    case FieldDescriptor::CPPTYPE_INT64: return std::to_string(r->GetInt64(entry, k));
    case FieldDescriptor::CPPTYPE_UINT32: return std::to_string(r->GetUInt32(entry, k));
    case FieldDescriptor::CPPTYPE_UINT64: return std::to_string(r->GetUInt64(entry, k));
    case FieldDescriptor::CPPTYPE_BOOL: return r->GetBool(entry, k) ? "true" : "false";
    default: return "";
  }
}

// A message type's fields sorted by name, sorted once per type (a
// 6,144-rank analysis has ~10^6 messages of a few dozen types).
const std::vector<const FieldDescriptor*>& SortedFields(const google::protobuf::Descriptor* d) {
  thread_local std::unordered_map<const google::protobuf::Descriptor*,
                                  std::vector<const FieldDescriptor*>>
      cache;
  auto [it, added] = cache.try_emplace(d);
  if (added) {
    std::vector<const FieldDescriptor*>& v = it->second;
    for (int i = 0; i < d->field_count(); ++i) v.push_back(d->field(i));
    std::sort(v.begin(), v.end(), [](const FieldDescriptor* a, const FieldDescriptor* b) {
      return a->name() < b->name();
    });
  }
  return it->second;
}

void AppendMessage(std::string* out, const Message& m, int depth) {
  const auto* d = m.GetDescriptor();
  const Reflection* r = m.GetReflection();
  // Per nesting depth, reused: no allocation per message. A deque: growing
  // it for a nested message keeps the callers' references valid.
  thread_local std::deque<std::vector<const FieldDescriptor*>> per_depth;
  if (per_depth.size() <= static_cast<size_t>(depth)) per_depth.resize(static_cast<size_t>(depth) + 1);
  std::vector<const FieldDescriptor*>& fields = per_depth[static_cast<size_t>(depth)];
  fields.clear();
  for (const FieldDescriptor* f : SortedFields(d)) {
    if (!f->is_repeated() && (f->has_presence()) && !r->HasField(m, f)) continue;
    fields.push_back(f);
  }
  if (fields.empty()) {
    out->append("{}");
    return;
  }
  out->append("{\n");
  for (size_t i = 0; i < fields.size(); ++i) {
    const FieldDescriptor* f = fields[i];
    Indent(out, depth + 1);
    AppendJsonString(f->name(), out);
    out->append(": ");
    if (f->is_map()) {
      int n = r->FieldSize(m, f);
      std::vector<std::pair<std::string, int>> keys;
      for (int k = 0; k < n; ++k) keys.emplace_back(MapKey(r->GetRepeatedMessage(m, f, k)), k);
      std::sort(keys.begin(), keys.end());
      if (keys.empty()) {
        out->append("{}");
      } else {
        out->append("{\n");
        const FieldDescriptor* vf = f->message_type()->map_value();
        for (size_t k = 0; k < keys.size(); ++k) {
          Indent(out, depth + 2);
          AppendJsonString(keys[k].first, out);
          out->append(": ");
          AppendValue(out, r->GetRepeatedMessage(m, f, keys[k].second), vf, -1, depth + 2);
          out->append(k + 1 < keys.size() ? ",\n" : "\n");
        }
        Indent(out, depth + 1);
        out->append("}");
      }
    } else if (f->is_repeated()) {
      int n = r->FieldSize(m, f);
      if (n == 0) {
        out->append("[]");
      } else {
        out->append("[\n");
        for (int k = 0; k < n; ++k) {
          Indent(out, depth + 2);
          AppendValue(out, m, f, k, depth + 2);
          out->append(k + 1 < n ? ",\n" : "\n");
          MaybeFlush(out);
        }
        Indent(out, depth + 1);
        out->append("]");
      }
    } else {
      AppendValue(out, m, f, -1, depth + 1);
    }
    out->append(i + 1 < fields.size() ? ",\n" : "\n");
  }
  Indent(out, depth);
  out->append("}");
}

}  // namespace

std::string FormatJsonDouble(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == 0) return "0.0";  // no "-0"
  std::string s = fmt::format("{}", v);
  // Keep doubles recognisable as such: 3 -> 3.0.
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string ToStableJson(const google::protobuf::Message& message) {
  std::string out;
  AppendMessage(&out, message, 0);
  out.push_back('\n');
  return out;
}

void WriteStableJson(const google::protobuf::Message& message,
                     const std::function<void(std::string_view)>& sink) {
  struct Reset {
    ~Reset() { t_sink = nullptr; }
  } reset;
  t_sink = &sink;
  std::string out;
  out.reserve(kChunkBytes + kChunkBytes / 4);
  AppendMessage(&out, message, 0);
  out.push_back('\n');
  sink(out);
}

}  // namespace moetrace
