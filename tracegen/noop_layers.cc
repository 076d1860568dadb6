#include "tracegen/noop_layers.h"

#include <algorithm>
#include <charconv>

#include <fmt/core.h>

namespace moetrace::tracegen {

bool ParseNoopLayers(std::string_view s, std::vector<int>* out, std::string* error) {
  out->clear();
  while (!s.empty()) {
    const size_t comma = s.find(',');
    const std::string_view part = s.substr(0, comma);
    int v = -1;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || end != part.data() + part.size() || v < 0) {
      *error = fmt::format("'{}' is not a layer index >= 0 (expected e.g. 61,62,63)", part);
      return false;
    }
    if (std::find(out->begin(), out->end(), v) != out->end()) {
      *error = fmt::format("layer {} is listed twice", v);
      return false;
    }
    out->push_back(v);
    s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
  }
  return true;
}

std::vector<int> NoopPaddedSplit(int layers, const std::vector<int>& noop, int slices, std::string* error) {
  const int padded = layers + int(noop.size());
  if (slices <= 0 || padded % slices != 0) {
    *error = fmt::format("model.num_layers + the noop layers = {} + {} = {} does not divide into {} (virtual) stages",
                         layers, noop.size(), padded, slices);
    return {};
  }
  const int per = padded / slices;
  std::vector<int> counts(size_t(slices), per);
  for (int i : noop) {
    if (i >= padded) {
      *error = fmt::format("noop layer {} is past the padded stack of {} layers (0-based)", i, padded);
      return {};
    }
    --counts[size_t(i / per)];
  }
  return counts;
}

}  // namespace moetrace::tracegen
