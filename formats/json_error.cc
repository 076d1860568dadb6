#include "formats/json_error.h"

#include "formats/errors.h"

namespace moetrace {

void ThrowMalformedJson(const std::string& file, simdjson::ondemand::document& doc,
                        const simdjson::padded_string& text, bool started,
                        simdjson::error_code error) {
  std::string pos = "byte 0";
  const char* loc = nullptr;
  if (started && doc.current_location().get(loc) == simdjson::SUCCESS && loc >= text.data() &&
      loc <= text.data() + text.size()) {
    pos = "byte " + std::to_string(loc - text.data());
  }
  ThrowInputError(file, pos, std::string("malformed JSON: ") + simdjson::error_message(error));
}

}  // namespace moetrace
