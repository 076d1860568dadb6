// SkipValue skips 64-byte blocks with bit masks: it must end every container
// exactly where a byte-by-byte walk does, wherever strings, escapes and
// brackets fall relative to the block edges.
#include "formats/kineto/json_scan.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace moetrace {
namespace {

// The byte-by-byte walk: the end of the container starting at text[0], or
// npos when it does not close.
size_t ReferenceEnd(const std::string& text) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') ++depth;
    if ((c == '}' || c == ']') && --depth == 0) return i + 1;
  }
  return std::string::npos;
}

size_t ScannerEnd(const std::string& text) {
  JsonScanner sc(text.data(), text.data() + text.size());
  const char* start = sc.SkipValue();
  if (!start) return std::string::npos;
  return sc.offset();
}

TEST(JsonScanner, SkipsContainersLikeAByteWalk) {
  std::mt19937 rng(7);
  const char alphabet[] = {'"', '"', '\\', '{', '}', '[', ']', 'a', ' ', ',', ':', 'x', 'y'};
  for (int round = 0; round < 20000; ++round) {
    // An object with random content, then closers so that most inputs end.
    std::string text = "{";
    const size_t n = rng() % 600;
    // A third of the rounds have no backslash, a third a rare one: the
    // bit-mask path only takes blocks without one.
    const int escapes = round % 3;
    for (size_t i = 0; i < n; ++i) {
      char c = alphabet[rng() % sizeof(alphabet)];
      if (c == '\\' && (escapes == 0 || (escapes == 1 && rng() % 20 != 0))) c = 'a';
      text += c;
      if (rng() % 40 == 0) text += std::string(rng() % 70, 'z');  // long runs over block edges
    }
    text += "\"}}]}}]}}}\"}}]]}}}}";
    SCOPED_TRACE(text);
    ASSERT_EQ(ScannerEnd(text), ReferenceEnd(text));
  }
}

TEST(JsonScanner, KinetoLikeEvents) {
  std::string events;
  for (int i = 0; i < 200; ++i) {
    events += "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void at::native::k<{[" +
              std::to_string(i) + "]}>\\\"x\\\\\", \"args\": {\"grid\": [1, " +
              std::to_string(i) + ", 1], \"s\": \"" + std::string(size_t(i % 80), '\\') +
              (i % 2 ? "" : "\\") + "\"}}, ";
  }
  // Start the scan at every '{' (in strings too): both walks must agree.
  size_t closed = 0;
  for (size_t at = 0; at < events.size(); ++at) {
    if (events[at] != '{') continue;
    std::string tail = events.substr(at);
    size_t end = ReferenceEnd(tail);
    ASSERT_EQ(ScannerEnd(tail), end) << at;
    closed += end != std::string::npos;
  }
  EXPECT_GE(closed, 200u);
}

TEST(JsonScanner, UnclosedIsNull) {
  std::string text = "{\"a\": [" + std::string(500, ' ') + "\"}]}";
  JsonScanner sc(text.data(), text.data() + text.size());
  EXPECT_EQ(sc.SkipValue(), nullptr);
}

}  // namespace
}  // namespace moetrace
