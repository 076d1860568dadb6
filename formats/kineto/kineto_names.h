// Name-based rules of the Kineto importer: which runtime calls launch device
// work or wait for it, which kernels are collectives, what a collective name
// means, and how large a dtype is.
#pragma once

#include <cstdint>
#include <string_view>

#include "formats/trace.h"

namespace moetrace {

// cudaLaunchKernel(ExC), cuLaunchKernel(Ex), cudaGraphLaunch, *MemcpyAsync,
// *MemsetAsync, hipLaunchKernel, hipExtLaunchKernel, hipModuleLaunchKernel, ...
bool IsLaunchCallName(std::string_view name);
// *Synchronize calls and blocking (non-Async) memcpy calls.
bool IsSyncCallName(std::string_view name);

// True for NCCL / RCCL / HCCL kernels (ncclKernel_*, ncclDevKernel_*, rccl*,
// hcom_*). `kind` gets what the name says (kNone when it does not say);
// `p2p` is set for SendRecv / Send / Recv kernels.
bool IsCommKernelName(std::string_view name, CollectiveKind* kind, bool* p2p);

// Maps a collective name ("allreduce", "all_to_allv", "_allgather_base",
// "nccl:all_reduce", "c10d::alltoall_base_", "send", ...) to its kind;
// kNone when it is not a collective name.
CollectiveKind CollectiveFromName(std::string_view name);

// Direction flags of a memcpy from its name ("Memcpy HtoD (Pageable -> Device)").
uint16_t MemcpyFlagsFromName(std::string_view name);

// Bytes per element of a PyTorch dtype name ("Float", "BFloat16", ...); 0 if unknown.
int DtypeSize(std::string_view dtype);

// "ProfilerStep#12" -> 12; false for anything else.
bool ParseProfilerStep(std::string_view name, int32_t* step);

}  // namespace moetrace
