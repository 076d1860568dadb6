#include "analyzer/split_analysis_json.h"

#include <algorithm>
#include <future>
#include <string>
#include <thread>

#include "analyzer/gate.h"

namespace moetrace {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && IsSpace(s[i])) ++i;
  return i;
}

// The index of the quote closing the string opened at `i`, or npos.
size_t StringEnd(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i;
    }
  }
  return std::string_view::npos;
}

// Below this many elements one thread is as quick (the split costs a scan and a copy).
constexpr size_t kMinItemsToSplit = 64;

// Appends every element of `src` to `dst` (no arena: the pointers move).
template <class T>
void MoveAll(google::protobuf::RepeatedPtrField<T>* src, google::protobuf::RepeatedPtrField<T>* dst) {
  std::vector<T*> moved(static_cast<size_t>(src->size()));
  src->ExtractSubrange(0, src->size(), moved.data());
  for (T* m : moved) dst->AddAllocated(m);
}

}  // namespace

std::optional<std::vector<TopArray>> FindTopArrays(std::string_view s,
                                                   const std::vector<std::string_view>& keys) {
  std::vector<TopArray> found;
  size_t i = SkipSpace(s, 0);
  if (i >= s.size() || s[i] != '{') return std::nullopt;
  int depth = 0;
  TopArray* in = nullptr;  // the array being walked, at its own depth (2)
  size_t item_begin = std::string_view::npos;
  // An empty element (`,,`, `[,`, a trailing comma) would vanish from its
  // slice and make bad text parse: such a document is parsed whole.
  bool empty_item = false;
  auto end_item = [&](size_t at) {
    size_t e = at;
    while (e > item_begin && IsSpace(s[e - 1])) --e;
    if (e == item_begin) empty_item = true;
    in->items.emplace_back(item_begin, e);
  };
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') {
      const size_t end = StringEnd(s, i);
      if (end == std::string_view::npos) return std::nullopt;
      const size_t colon = depth == 1 ? SkipSpace(s, end + 1) : std::string_view::npos;
      if (colon < s.size() && s[colon] == ':') {
        const std::string_view key = s.substr(i + 1, end - i - 1);
        // The parser also takes a field by its JSON name or with escapes in
        // its key: such a spelling could be a second copy of an array.
        if (key.find('\\') != std::string_view::npos || key == "labelChecks") return std::nullopt;
        if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
          for (const TopArray& a : found) {
            if (a.key == key) return std::nullopt;  // twice: left to the parser
          }
          const size_t open = SkipSpace(s, colon + 1);
          if (open >= s.size() || s[open] != '[') return std::nullopt;
          found.push_back(TopArray{key, open, 0, {}});
          in = &found.back();
          depth = 2;
          i = open;
          item_begin = SkipSpace(s, open + 1);
          if (item_begin < s.size() && s[item_begin] == ']') item_begin = std::string_view::npos;
          continue;
        }
      }
      i = end;
      continue;
    }
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (in && depth == 2) {  // the array's own end
        if (c != ']') return std::nullopt;
        if (item_begin != std::string_view::npos) end_item(i);
        in->close = i;
        in = nullptr;
      }
      if (--depth == 0) break;
    } else if (c == ',' && in && depth == 2) {
      end_item(i);
      item_begin = SkipSpace(s, i + 1);
    }
  }
  if (depth != 0 || in || empty_item) return std::nullopt;
  return found;
}

analysis::Analysis ParseAnalysisJsonSplit(std::string_view json, std::string_view file,
                                          int threads) {
  size_t parts = threads > 0 ? size_t(threads) : std::max(1u, std::thread::hardware_concurrency());
  std::optional<std::vector<TopArray>> arrays;
  if (parts > 1) arrays = FindTopArrays(json, {"label_checks", "ranks"});
  // Every element in document order: (array, item).
  std::vector<std::pair<size_t, size_t>> items;
  if (arrays) {
    for (size_t a = 0; a < arrays->size(); ++a) {
      for (size_t k = 0; k < (*arrays)[a].items.size(); ++k) items.emplace_back(a, k);
    }
  }
  if (items.size() < kMinItemsToSplit) return ParseAnalysisJson(json, file);
  parts = std::min(parts, items.size());
  const std::vector<TopArray>& arr = *arrays;
  auto span = [&](std::pair<size_t, size_t> it) { return arr[it.first].items[it.second]; };

  // Text 0: the document with the arrays emptied. Texts 1..parts: a slice
  // of the elements each, cut where the bytes reach p / parts of the
  // elements' bytes, as {"key":[...],...} (the commas between them kept).
  std::vector<std::string> texts(parts + 1);
  size_t at = 0;
  for (const TopArray& a : arr) {
    texts[0].append(json.substr(at, a.open + 1 - at));
    at = a.close;
  }
  texts[0].append(json.substr(at));
  const size_t first_byte = span(items.front()).first, bytes = span(items.back()).second - first_byte;
  size_t next = 0;
  for (size_t p = 0; p < parts; ++p) {
    size_t last = next + 1;  // at least one element per slice
    const size_t cut = first_byte + bytes * (p + 1) / parts;
    while (last < items.size() && (p + 1 == parts || span(items[last - 1]).second < cut) &&
           items.size() - last > parts - p - 1) {
      ++last;
    }
    std::string& t = texts[p + 1];
    t += '{';
    for (size_t k = next; k < last;) {  // one run of a slice per array it touches
      size_t e = k;
      while (e + 1 < last && items[e + 1].first == items[k].first) ++e;
      if (k != next) t += ',';
      const size_t b = span(items[k]).first, end = span(items[e]).second;
      t.append("\"").append(arr[items[k].first].key).append("\":[");
      t.append(json.substr(b, end - b)).append("]");
      k = e + 1;
    }
    t += '}';
    next = last;
  }
  // Parsed by `parts` threads (this one too); any failure: the whole text.
  std::vector<analysis::Analysis> parsed(texts.size());
  std::vector<char> ok(texts.size(), 0);
  auto parse = [&](size_t k) {
    try {
      parsed[k] = ParseAnalysisJson(texts[k], file);
      ok[k] = 1;
    } catch (...) {
    }
  };
  {
    std::vector<std::future<void>> others;
    for (size_t k = 2; k < texts.size(); ++k) {
      others.push_back(std::async(std::launch::async, parse, k));
    }
    parse(0);
    parse(1);
  }  // the futures' destructors wait for every part
  if (std::find(ok.begin(), ok.end(), 0) != ok.end()) return ParseAnalysisJson(json, file);

  analysis::Analysis out = std::move(parsed[0]);
  for (size_t k = 1; k < parsed.size(); ++k) {
    MoveAll(parsed[k].mutable_label_checks(), out.mutable_label_checks());
    MoveAll(parsed[k].mutable_ranks(), out.mutable_ranks());
  }
  return out;
}

}  // namespace moetrace
