#include "tracegen/noop_layers.h"

#include <algorithm>
#include <charconv>

#include <fmt/core.h>

namespace moetrace::tracegen {

bool ParseNoopLayers(std::string_view s, std::vector<int>* out, std::string* error) {
  out->clear();
  if (s.empty()) return true;
  const std::string_view all = s;
  for (;;) {
    const size_t comma = s.find(',');
    const std::string_view part = s.substr(0, comma);
    // "4,5," and ",4" alike: a stray comma is a typo, not an empty list.
    if (part.empty()) {
      *error = fmt::format("'{}' has an empty entry (expected e.g. 61,62,63)", all);
      return false;
    }
    int v = -1;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || end != part.data() + part.size() || v < 0) {
      *error = fmt::format("'{}' is not a layer index >= 0 (expected e.g. 61,62,63)", part);
      return false;
    }
    out->push_back(v);
    if (comma == std::string_view::npos) break;
    s = s.substr(comma + 1);
  }
  // Repeats by sorting a copy (the list comes from --set: no bound on its
  // length, so no pairwise check); the smallest repeated index is named.
  std::vector<int> sorted = *out;
  std::sort(sorted.begin(), sorted.end());
  const auto twice = std::adjacent_find(sorted.begin(), sorted.end());
  if (twice != sorted.end()) {
    *error = fmt::format("layer {} is listed twice", *twice);
    out->clear();
    return false;
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
