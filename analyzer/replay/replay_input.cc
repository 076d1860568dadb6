#include "analyzer/replay/replay_input.h"

#include <cstring>

#include "analyzer/distributed.h"

namespace moetrace::replay {

bool ParseReduce(std::string_view name, Reduce* out) {
  if (name == "auto") *out = Reduce::kAuto;
  else if (name == "roles") *out = Reduce::kRoles;
  else if (name == "whole") *out = Reduce::kWhole;
  else return false;
  return true;
}

namespace {

// What follows the analysis: the representatives when roles reduce the
// trace (and it is big, for kAuto), else every rank.
void ReadTrace(const TraceSource& source, Reduce reduce, int64_t events,
               const std::vector<std::pair<int32_t, uint64_t>>& signatures, ReplayInput* in) {
  if (reduce == Reduce::kRoles || (reduce == Reduce::kAuto && events > kWholeEvents)) {
    RoleMap roles = GroupRoles(signatures, in->before);
    if (roles.Reduces()) {
      in->trace = ReadRepresentatives(source, roles);
      in->roles = std::move(roles);
      return;
    }
  }
  in->trace = ReadAll(source);  // every rank its own role, or small enough
}

// A process's signatures and event count as bytes: the event count, then
// (rank id, signature) pairs, native byte order (one machine type per job).
std::string PackSigned(const RoleSignatureSource& s) {
  const std::vector<std::pair<int32_t, uint64_t>> sigs = s.Signatures();
  const int64_t events = s.events();
  std::string out(sizeof events + sigs.size() * (sizeof(int32_t) + sizeof(uint64_t)), '\0');
  char* p = out.data();
  std::memcpy(p, &events, sizeof events);
  p += sizeof events;
  for (const auto& [rank, sig] : sigs) {
    std::memcpy(p, &rank, sizeof rank);
    std::memcpy(p + sizeof rank, &sig, sizeof sig);
    p += sizeof rank + sizeof sig;
  }
  return out;
}

void UnpackSigned(const std::string& bytes, int64_t* events,
                  std::vector<std::pair<int32_t, uint64_t>>* sigs) {
  const char* p = bytes.data();
  int64_t e = 0;
  std::memcpy(&e, p, sizeof e);
  *events += e;
  for (p += sizeof e; p < bytes.data() + bytes.size(); p += sizeof(int32_t) + sizeof(uint64_t)) {
    std::pair<int32_t, uint64_t> v;
    std::memcpy(&v.first, p, sizeof v.first);
    std::memcpy(&v.second, p + sizeof v.first, sizeof v.second);
    sigs->push_back(v);
  }
}

}  // namespace

ReplayInput LoadReplayInput(const TraceSource& source, Reduce reduce,
                            const AnalyzeOptions& options) {
  ReplayInput in;
  RoleSignatureSource signed_source(source);
  in.before = Analyze(signed_source, options);
  ReadTrace(source, reduce, signed_source.events(), signed_source.Signatures(), &in);
  return in;
}

ReplayInput LoadReplayInput(const TraceSource& source, Reduce reduce, Communicator& comm,
                            const AnalyzeOptions& options) {
  if (comm.size() == 1) return LoadReplayInput(source, reduce, options);
  ReplayInput in;
  RoleSignatureSource signed_source(source);
  in.before = AnalyzeShares(signed_source, options, comm);
  const std::vector<std::string> parts = comm.Gather(PackSigned(signed_source));
  OnFirstProcess(comm, [&] {
    int64_t events = 0;
    std::vector<std::pair<int32_t, uint64_t>> signatures;
    for (const std::string& p : parts) UnpackSigned(p, &events, &signatures);
    ReadTrace(source, reduce, events, signatures, &in);
  });
  return in;
}

}  // namespace moetrace::replay
