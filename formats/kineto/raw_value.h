// Reads a simdjson on-demand value as a KinetoRawValue without consuming it,
// so the importer and HTA's row reader see the same facts of an event.
#pragma once

#include <simdjson.h>

#include "formats/kineto/kineto_event_observer.h"

namespace moetrace {

inline KinetoRawValue PeekRawValue(simdjson::ondemand::value& v) {
  using simdjson::ondemand::json_type;
  KinetoRawValue out;
  json_type t;
  if (v.type().get(t)) {
    out.type = KinetoRawValue::kOther;
    return out;
  }
  switch (t) {
    case json_type::null: out.type = KinetoRawValue::kNull; break;
    case json_type::number:
      out.type = KinetoRawValue::kNumber;
      out.text = v.raw_json_token();
      break;
    case json_type::string: {
      out.type = KinetoRawValue::kString;
      // The token runs from the opening quote to the next structural
      // character: the closing quote is the last quote in it.
      std::string_view tok = v.raw_json_token();
      size_t close = tok.find_last_of('"');
      out.text = close > 0 && close != std::string_view::npos ? tok.substr(1, close - 1)
                                                              : std::string_view();
      out.escaped = out.text.find('\\') != std::string_view::npos;
      break;
    }
    default: out.type = KinetoRawValue::kOther; break;
  }
  return out;
}

}  // namespace moetrace
