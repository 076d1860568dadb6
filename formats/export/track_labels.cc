#include "formats/export/track_labels.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "formats/contains_no_case.h"

namespace moetrace {
namespace {


// Kineto/CUDA sources name streams or threads after CUDA; everything else
// moetrace reads (Ascend, tracegen) runs on NPUs.
std::string_view DeviceWord(const Rank& rank) {
  for (const Track& t : rank.tracks) {
    std::string_view name = rank.strings.Get(t.name);
    if (ContainsNoCase(name, "cuda") || ContainsNoCase(name, "gpu")) return "GPU";
  }
  return "NPU";
}

std::string_view RoleWord(TrackRole role) {
  switch (role) {
    case TrackRole::kDeviceCompute: return "compute";
    case TrackRole::kDeviceComm: return "comm";
    case TrackRole::kDeviceCopy: return "copy";
    case TrackRole::kDeviceOther: return "other";
    default: return "";
  }
}

}  // namespace

std::string ProcessLabel(const Rank& rank) {
  std::string s = "rank " + std::to_string(rank.rank);
  if (!rank.host.empty()) s += " (" + rank.host + ")";
  return s;
}

int64_t TrackDisplayId(const Rank& rank, size_t track_index) {
  int64_t id = rank.tracks[track_index].native_id;
  return id >= 0 ? id : static_cast<int64_t>(track_index);
}

std::string TrackLabel(const Rank& rank, size_t track_index) {
  const Track& t = rank.tracks[track_index];
  std::string_view name = rank.strings.Get(t.name);
  if (t.kind != TrackKind::kDeviceStream) {
    if (!name.empty()) return std::string(name);
    return std::string(TrackKindName(t.kind)) + " " +
           std::to_string(TrackDisplayId(rank, track_index));
  }
  // What the source's own name adds: "stream 1 (hccl)" adds "hccl", a bare
  // "stream 1" adds nothing, anything else is kept whole.
  const std::string bare = "stream " + std::to_string(TrackDisplayId(rank, track_index));
  std::string_view extra = name;
  if (extra.size() >= bare.size() && ContainsNoCase(extra.substr(0, bare.size()), bare)) {
    extra.remove_prefix(bare.size());
    if (extra.size() >= 3 && extra.substr(0, 2) == " (" && extra.back() == ')') {
      extra = extra.substr(2, extra.size() - 3);
    }
  }
  std::string_view role = RoleWord(t.role);
  if (extra == role) extra = {};
  std::string s(DeviceWord(rank));
  s += " stream ";
  s += std::to_string(TrackDisplayId(rank, track_index));
  if (!role.empty() || !extra.empty()) {
    s += " (";
    s += role;
    if (!role.empty() && !extra.empty()) s += ": ";
    s += extra;
    s += ")";
  }
  return s;
}

}  // namespace moetrace
