#include "analyzer/comm_class.h"

#include <cctype>
#include <string>

namespace moetrace {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// `tok` as a whole word of `s` (bounded by non-letters), e.g. "ep" in
// "ep_group_3" or "moe_ep", not in "deep".
bool HasToken(const std::string& s, std::string_view tok) {
  for (size_t p = s.find(tok); p != std::string::npos; p = s.find(tok, p + 1)) {
    bool left = p == 0 || !std::isalpha(static_cast<unsigned char>(s[p - 1]));
    size_t e = p + tok.size();
    bool right = e >= s.size() || !std::isalpha(static_cast<unsigned char>(s[e]));
    if (left && right) return true;
  }
  return false;
}

CommClass FromKind(CollectiveKind kind, Phase phase, int32_t layer) {
  switch (kind) {
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kAllToAllV:
      return CommClass::kEP;
    case CollectiveKind::kSend:
    case CollectiveKind::kRecv:
      return CommClass::kPP;
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
      // Inside a layer's forward/backward: tensor parallel; outside (the
      // gradient sync, the optimizer): data parallel.
      if (layer >= 0 && (phase == Phase::kForward || phase == Phase::kBackward ||
                         phase == Phase::kRecompute)) {
        return CommClass::kTP;
      }
      if (layer < 0 || phase == Phase::kOptimizer) return CommClass::kDP;
      return CommClass::kOther;
    default:
      return CommClass::kOther;
  }
}

}  // namespace

CommClass ClassFromGroupName(std::string_view group) {
  std::string g = Lower(group);
  if (HasToken(g, "ep") || HasToken(g, "moe")) return CommClass::kEP;
  if (HasToken(g, "tp") || HasToken(g, "tensor")) return CommClass::kTP;
  if (HasToken(g, "pp") || HasToken(g, "pipeline")) return CommClass::kPP;
  if (HasToken(g, "dp") || HasToken(g, "data")) return CommClass::kDP;
  return CommClass::kOther;
}

CommClass DeriveCommClass(const CommRecord& record, std::string_view group_name, Phase phase,
                          int32_t layer) {
  if (record.comm_class != CommClass::kOther) return record.comm_class;
  CommClass c = ClassFromGroupName(group_name);
  if (c != CommClass::kOther) return c;
  return FromKind(record.kind, phase, layer);
}

bool IsRecvName(std::string_view name) {
  std::string n = Lower(name);
  return n.find("recv") != std::string::npos || n.find("receive") != std::string::npos;
}

CommClass DeriveCommClassFromName(std::string_view name, Category category, Phase phase,
                                  int32_t layer) {
  std::string n = Lower(name);
  auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  if (has("alltoall") || has("all_to_all") || has("all2all")) return CommClass::kEP;
  if (category == Category::kP2P || has("send") || has("recv")) return CommClass::kPP;
  if (has("allreduce") || has("all_reduce"))
    return FromKind(CollectiveKind::kAllReduce, phase, layer);
  if (has("reducescatter") || has("reduce_scatter"))
    return FromKind(CollectiveKind::kReduceScatter, phase, layer);
  if (has("allgather") || has("all_gather"))
    return FromKind(CollectiveKind::kAllGather, phase, layer);
  return CommClass::kOther;
}

}  // namespace moetrace
