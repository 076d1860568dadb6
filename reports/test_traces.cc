#include "reports/test_traces.h"

#include "formats/sample_trace.h"

namespace moetrace {

Trace MakeHostileTrace() {
  Trace t = MakeSampleTrace(2, 32, 7);
  t.metadata.origin = kHostileName;
  for (Rank& r : t.ranks) {
    const StringId evil = r.strings.Intern(kHostileName);
    for (Track& track : r.tracks) {
      for (CommRecord& c : track.comms) c.group = evil;
      if (track.kind != TrackKind::kDeviceStream) continue;
      for (size_t i = 0; i < track.events.size(); ++i) {
        if (track.events.category[i] == Category::kCompute) track.events.name[i] = evil;
      }
    }
  }
  return t;
}

}  // namespace moetrace
