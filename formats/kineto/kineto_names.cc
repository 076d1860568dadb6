#include "formats/kineto/kineto_names.h"
#include "formats/starts_with.h"

#include <cctype>
#include <string>

namespace moetrace {
namespace {

bool Contains(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}

// Lower-case letters and digits only: "c10d::_allgather_base_" -> "c10dallgatherbase".
std::string Squash(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out.push_back(char(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

}  // namespace

bool IsLaunchCallName(std::string_view n) {
  if (StartsWith(n, "cudaLaunch") || StartsWith(n, "cuLaunch") ||
      StartsWith(n, "hipLaunch") || StartsWith(n, "hipExtLaunch") ||
      StartsWith(n, "hipModuleLaunch") || StartsWith(n, "hipExtModuleLaunch") ||
      StartsWith(n, "cudaGraphLaunch") || StartsWith(n, "cuGraphLaunch") ||
      StartsWith(n, "hipGraphLaunch") || StartsWith(n, "aclrtLaunch") ||
      StartsWith(n, "runFunction - job_prep_and_submit_for_execution")) {
    return true;
  }
  bool api = StartsWith(n, "cuda") || StartsWith(n, "cu") || StartsWith(n, "hip");
  return api && (Contains(n, "Memcpy") || Contains(n, "Memset")) && Contains(n, "Async");
}

bool IsSyncCallName(std::string_view n) {
  if (Contains(n, "Synchronize")) return true;
  bool copy = StartsWith(n, "cudaMemcpy") || StartsWith(n, "cuMemcpy") ||
              StartsWith(n, "hipMemcpy");
  return copy && !Contains(n, "Async");
}

bool IsCommKernelName(std::string_view name, CollectiveKind* kind, bool* p2p) {
  std::string_view n = name;
  if (StartsWith(n, "void ")) n.remove_prefix(5);
  bool comm = StartsWith(n, "nccl") || StartsWith(n, "rccl") || StartsWith(n, "hccl") ||
              StartsWith(n, "hcom_") || Contains(n, "ncclKernel") ||
              Contains(n, "ncclDevKernel");
  *kind = CollectiveKind::kNone;
  *p2p = false;
  if (!comm) return false;
  // Only the kernel's own name, not its parameter list.
  size_t paren = n.find('(');
  std::string s = Squash(n.substr(0, paren));
  if (Contains(s, "sendrecv")) {
    *p2p = true;
  } else if (Contains(s, "alltoallv")) {
    *kind = CollectiveKind::kAllToAllV;
  } else if (Contains(s, "alltoall")) {
    *kind = CollectiveKind::kAllToAll;
  } else if (Contains(s, "allreduce")) {
    *kind = CollectiveKind::kAllReduce;
  } else if (Contains(s, "allgather")) {
    *kind = CollectiveKind::kAllGather;
  } else if (Contains(s, "reducescatter")) {
    *kind = CollectiveKind::kReduceScatter;
  } else if (Contains(s, "broadcast")) {
    *kind = CollectiveKind::kBroadcast;
  } else if (Contains(s, "send")) {
    *kind = CollectiveKind::kSend;
    *p2p = true;
  } else if (Contains(s, "recv") || Contains(s, "receive")) {
    *kind = CollectiveKind::kRecv;
    *p2p = true;
  } else if (Contains(s, "reduce")) {
    *kind = CollectiveKind::kReduce;
  }
  return true;
}

CollectiveKind CollectiveFromName(std::string_view name) {
  std::string s = Squash(name);
  if (StartsWith(s, "nccl")) s.erase(0, 4);
  if (StartsWith(s, "c10d")) s.erase(0, 4);
  if (StartsWith(s, "hcom")) s.erase(0, 4);
  if (Contains(s, "alltoallv")) return CollectiveKind::kAllToAllV;
  if (Contains(s, "alltoall")) return CollectiveKind::kAllToAll;
  if (Contains(s, "allreduce")) return CollectiveKind::kAllReduce;
  if (Contains(s, "allgather")) return CollectiveKind::kAllGather;
  if (Contains(s, "reducescatter")) return CollectiveKind::kReduceScatter;
  if (Contains(s, "broadcast") || Contains(s, "bcast")) return CollectiveKind::kBroadcast;
  if (Contains(s, "barrier")) return CollectiveKind::kBarrier;
  if (StartsWith(s, "send") || StartsWith(s, "isend")) return CollectiveKind::kSend;
  if (StartsWith(s, "recv") || StartsWith(s, "irecv") || StartsWith(s, "receive")) {
    return CollectiveKind::kRecv;
  }
  if (Contains(s, "reduce")) return CollectiveKind::kReduce;
  if (Contains(s, "gather") || Contains(s, "scatter")) return CollectiveKind::kOther;
  return CollectiveKind::kNone;
}

uint16_t MemcpyFlagsFromName(std::string_view n) {
  if (Contains(n, "HtoD") || Contains(n, "HostToDevice")) return kFlagHostToDevice;
  if (Contains(n, "DtoH") || Contains(n, "DeviceToHost")) return kFlagDeviceToHost;
  if (Contains(n, "DtoD") || Contains(n, "PtoP") || Contains(n, "DeviceToDevice")) {
    return kFlagDeviceToDevice;
  }
  return 0;
}

int DtypeSize(std::string_view d) {
  if (StartsWith(d, "c10::")) d.remove_prefix(5);
  std::string s = Squash(d);
  if (s == "float" || s == "float32" || s == "int" || s == "int32" || s == "uint32") return 4;
  if (s == "double" || s == "float64" || s == "long" || s == "int64" || s == "uint64" ||
      s == "complexfloat") {
    return 8;
  }
  if (s == "half" || s == "float16" || s == "bfloat16" || s == "short" || s == "int16" ||
      s == "uint16" || s == "complexhalf") {
    return 2;
  }
  if (s == "byte" || s == "char" || s == "bool" || s == "int8" || s == "uint8" ||
      s == "unsignedchar" || StartsWith(s, "float8")) {
    return 1;
  }
  if (s == "complexdouble") return 16;
  return 0;
}

bool ParseProfilerStep(std::string_view name, int32_t* step) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (!StartsWith(name, kPrefix) || name.size() == kPrefix.size()) return false;
  int64_t v = 0;
  for (size_t i = kPrefix.size(); i < name.size(); ++i) {
    char c = name[i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
    if (v > INT32_MAX) return false;
  }
  *step = int32_t(v);
  return true;
}

}  // namespace moetrace
