// A directory of .mtrace shards read as one trace: what `mpirun -n P
// moetrace generate ... -o DIR` writes (one shard per process, each holding a
// contiguous block of the ranks and the labels of its own ranks).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/trace_io.h"

namespace moetrace {

// True when `path` is a directory with at least one *.mtrace file directly
// inside it (other files are ignored).
bool IsNativeShardDir(const std::string& path);

// The *.mtrace files of `dir` in name order (the order of their ranks).
std::vector<std::string> NativeShardFiles(const std::string& dir);

// Opens every shard (name order): their ranks in that order, and one
// metadata (MergeShardMetadata). Throws InputError naming the shard.
std::unique_ptr<TraceSource> OpenNativeShards(const std::string& dir);

// The first shard's metadata, with the ground-truth and reference labels of
// every shard appended in shard order and the attributes the first lacks
// (e.g. `oom.rankN`): each label once, however many shards carry it.
Metadata MergeShardMetadata(const std::vector<const Metadata*>& shards);

// The shard file a process writes: DIR/shard-00002.mtrace (names sort in
// process order).
std::string ShardPath(const std::string& dir, int process);

}  // namespace moetrace
