#include "formats/kineto/kineto_shapes.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace moetrace {

void NormalizeInputDims(std::string_view json, std::string* out) {
  out->clear();
  bool in_string = false, escaped = false;
  for (char c : json) {
    if (in_string) {
      out->push_back(c);
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case ' ': case '\t': case '\n': case '\r': break;
      case ',': out->append(", "); break;
      case '"': in_string = true; out->push_back(c); break;
      default: out->push_back(c);
    }
  }
}

namespace {

// A host call that issued device work: launches, and blocking copies
// (cudaMemcpy is a kSync that carries the copy's correlation).
bool Issues(const EventTable& e, size_t i) {
  return e.correlation[i] >= 0 &&
         (e.category[i] == Category::kLaunch || e.category[i] == Category::kSync);
}

bool TakesShape(Category c) {
  return c == Category::kCompute || c == Category::kCollective || c == Category::kP2P ||
         c == Category::kCopy;
}

// (correlation, shape) of every launch on one host thread: one pass with a
// stack of the open ops that have shapes, outermost first.
void CollectLaunches(const EventTable& e, std::vector<size_t>* open,
                     std::vector<std::pair<int64_t, StringId>>* out) {
  open->clear();
  for (size_t i = 0; i < e.size(); ++i) {
    const int64_t ts = e.ts[i];
    while (!open->empty() && e.End(open->back()) < ts) open->pop_back();
    if (Issues(e, i)) {
      StringId shape = 0;
      // The innermost open op that ends after the launch does; a bounded
      // look down the stack (ops that overlap without nesting can leave a
      // stale entry on top).
      for (size_t k = open->size(), n = 0; k > 0 && n < 64; --k, ++n) {
        if (e.End((*open)[k - 1]) >= e.End(i)) {
          shape = e.shape[(*open)[k - 1]];
          break;
        }
      }
      out->emplace_back(e.correlation[i], shape);
    } else if (e.category[i] == Category::kHostOp && e.ShapeAt(i) != 0) {
      // Rows are sorted by start only: an op starting with the one on top
      // but ending later encloses it, and goes below it.
      size_t pos = open->size();
      while (pos > 0 && e.ts[(*open)[pos - 1]] == ts && e.End((*open)[pos - 1]) < e.End(i)) --pos;
      open->insert(open->begin() + static_cast<std::ptrdiff_t>(pos), i);
    }
  }
}

}  // namespace

ShapeLinks LinkLaunchShapes(Rank* rank) {
  ShapeLinks n;
  bool any = false;
  for (const Track& t : rank->tracks) any |= t.kind == TrackKind::kHostThread && !t.events.shape.empty();
  if (!any) return n;
  std::vector<std::pair<int64_t, StringId>> launches;
  std::vector<size_t> open;
  for (const Track& t : rank->tracks) {
    if (t.kind == TrackKind::kHostThread && !t.events.shape.empty()) {
      CollectLaunches(t.events, &open, &launches);
    } else if (t.kind == TrackKind::kHostThread) {
      // A thread whose ops have no shapes: its launches are known, unshaped.
      const EventTable& e = t.events;
      for (size_t i = 0; i < e.size(); ++i) {
        if (Issues(e, i)) {
          launches.emplace_back(e.correlation[i], 0);
        }
      }
    }
  }
  // Correlations grow with time: one thread's launches come sorted, and a
  // stream's ops mostly look up the entry after the last one found.
  auto by_corr = [](const auto& a, const auto& b) { return a.first < b.first; };
  if (!std::is_sorted(launches.begin(), launches.end(), by_corr)) {
    std::stable_sort(launches.begin(), launches.end(), by_corr);
  }
  for (Track& t : rank->tracks) {
    if (t.kind != TrackKind::kDeviceStream) continue;
    EventTable& e = t.events;
    auto hint = launches.begin();
    for (size_t i = 0; i < e.size(); ++i) {
      if (!TakesShape(e.category[i])) continue;
      const int64_t c = e.correlation[i];
      if (c < 0) {
        ++n.no_correlation;
        continue;
      }
      // The first entry of correlation c: the hint, the one after it, or
      // a binary search.
      auto it = launches.end();
      if (hint != launches.end() && hint->first == c) {
        it = hint;
      } else if (hint != launches.end() && hint + 1 != launches.end() && hint->first < c &&
                 (hint + 1)->first == c) {
        it = hint + 1;
      } else {
        it = std::lower_bound(
            launches.begin(), launches.end(), c,
            [](const std::pair<int64_t, StringId>& p, int64_t v) { return p.first < v; });
      }
      if (it != launches.end()) hint = it;
      if (it == launches.end() || it->first != c) {
        ++n.no_launch;
      } else if (it->second == 0) {
        ++n.no_op;
      } else {
        if (e.shape.empty()) e.shape.assign(e.size(), 0);
        e.shape[i] = it->second;
        ++n.linked;
      }
    }
  }
  return n;
}

}  // namespace moetrace
