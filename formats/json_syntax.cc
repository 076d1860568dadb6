#include "formats/json_syntax.h"

#include <simdjson.h>

#include "formats/json_error.h"

namespace moetrace {
namespace {

using simdjson::simdjson_error;
namespace od = simdjson::ondemand;

template <typename T>
void CheckJsonValue(simdjson::simdjson_result<T> r) {
  T v;
  if (auto err = std::move(r).get(v)) throw simdjson_error(err);
}

// Reads every value, so that simdjson checks every token (it is lazy).
void WalkJsonValue(od::value v, int depth) {
  od::json_type type;
  if (auto err = v.type().get(type)) throw simdjson_error(err);
  if (depth > 256) throw simdjson_error(simdjson::DEPTH_ERROR);
  switch (type) {
    case od::json_type::object: {
      od::object o;
      if (auto err = v.get_object().get(o)) throw simdjson_error(err);
      for (auto f : o) {
        od::field field = FieldOf(std::move(f));
        CheckJsonValue(field.unescaped_key());
        WalkJsonValue(field.value(), depth + 1);
      }
      break;
    }
    case od::json_type::array: {
      od::array a;
      if (auto err = v.get_array().get(a)) throw simdjson_error(err);
      for (auto e : a) {
        od::value item;
        if (auto err = std::move(e).get(item)) throw simdjson_error(err);
        WalkJsonValue(item, depth + 1);
      }
      break;
    }
    case od::json_type::string: CheckJsonValue(v.get_string()); break;
    case od::json_type::number: CheckJsonValue(v.get_number()); break;
    case od::json_type::boolean: CheckJsonValue(v.get_bool()); break;
    case od::json_type::null: {
      bool null = false;
      if (auto err = v.is_null().get(null)) throw simdjson_error(err);
      if (!null) throw simdjson_error(simdjson::N_ATOM_ERROR);
      break;
    }
  }
}

}  // namespace

void ThrowIfMalformedJson(const std::string& file, std::string_view text) {
  const simdjson::padded_string padded(text);
  od::parser parser;
  od::document doc;
  if (auto err = parser.iterate(padded).get(doc)) ThrowMalformedJson(file, doc, padded, false, err);
  try {
    od::json_type type;
    if (auto err = doc.type().get(type)) throw simdjson_error(err);
    // A scalar document is left to the caller's parser (it wants an object).
    if (type != od::json_type::object && type != od::json_type::array) return;
    od::value root;
    if (auto err = doc.get_value().get(root)) throw simdjson_error(err);
    WalkJsonValue(root, 0);
    // Content after the document (this simdjson has no at_end()): the
    // iterator stops after the root, at the next token if there is one.
    const char* loc = nullptr;
    if (doc.current_location().get(loc) == simdjson::SUCCESS && loc < padded.data() + padded.size()) {
      for (const char* c = loc; c < padded.data() + padded.size(); ++c)
        if (*c != ' ' && *c != '\t' && *c != '\r' && *c != '\n') throw simdjson_error(simdjson::TRAILING_CONTENT);
    }
  } catch (const simdjson_error& e) {
    ThrowMalformedJson(file, doc, padded, true, e.error());
  }
}

}  // namespace moetrace
