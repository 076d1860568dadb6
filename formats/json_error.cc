#include "formats/json_error.h"

#include "formats/errors.h"
#include "formats/export/utf8.h"

namespace moetrace {

std::string IndexErrorPosition(std::string_view text, simdjson::error_code error) {
  size_t at = 0;
  if (error == simdjson::INCOMPLETE_ARRAY_OR_OBJECT) {
    at = text.size();
  } else if (error == simdjson::TAPE_ERROR) {
    // Also how a text cut after a ',' or a '[' fails: when brackets are
    // left open at its end, the end is where more was expected.
    int64_t depth = 0;
    bool inside = false;
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (inside) {
        if (c == '\\') ++i;
        else if (c == '"') inside = false;
      } else if (c == '"') {
        inside = true;
      } else if (c == '[' || c == '{') {
        ++depth;
      } else if (c == ']' || c == '}') {
        --depth;
      }
    }
    if (depth > 0 && !inside) at = text.size();
  } else if (error == simdjson::UNCLOSED_STRING) {
    // The quote that opens a string no quote closes: the last one opened.
    bool inside = false;
    for (size_t i = 0; i < text.size(); ++i) {
      if (inside && text[i] == '\\') {
        ++i;
      } else if (text[i] == '"') {
        if (!inside) at = i;
        inside = !inside;
      }
    }
  } else if (error == simdjson::UTF8_ERROR) {
    for (size_t i = 0; i < text.size();) {
      if (static_cast<unsigned char>(text[i]) < 0x80) {
        ++i;
        continue;
      }
      const size_t len = Utf8SequenceLength(text.substr(i));
      if (len == 0) {
        at = i;
        break;
      }
      i += len;
    }
  }
  return "byte " + std::to_string(at);
}

void ThrowMalformedJson(const std::string& file, simdjson::ondemand::document& doc,
                        const simdjson::padded_string& text, bool started,
                        simdjson::error_code error) {
  // Where the iterator stopped; else (it never started, or has no place)
  // what the text itself shows.
  std::string pos = IndexErrorPosition(std::string_view(text.data(), text.size()), error);
  const char* loc = nullptr;
  if (started && !IsIndexError(error) && doc.current_location().get(loc) == simdjson::SUCCESS && loc >= text.data() &&
      loc <= text.data() + text.size()) {
    pos = "byte " + std::to_string(loc - text.data());
  }
  ThrowInputError(file, pos, std::string("malformed JSON: ") + simdjson::error_message(error));
}

}  // namespace moetrace
