#include "formats/native/native_shards.h"

#include <fmt/core.h>

#include <set>
#include <tuple>

#include "formats/errors.h"
#include "formats/native/native_reader.h"
#include "formats/sorted_dir.h"

namespace moetrace {

std::vector<std::string> NativeShardFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const std::filesystem::path& p : SortedChildren(dir)) {
    if (p.extension() == ".mtrace" && IsFile(p)) out.push_back(p.string());
  }
  return out;
}

bool IsNativeShardDir(const std::string& path) {
  return IsDir(path) && !NativeShardFiles(path).empty();
}

namespace {

using LabelKey = std::tuple<int32_t, int32_t, std::string, double>;

// Appends the labels of one shard that no earlier shard held (a shard's own
// repeats are kept: they are in the single-file trace too).
void AppendNew(const std::vector<LabeledValue>& from, std::vector<LabeledValue>* to,
               std::set<LabelKey>* seen) {
  std::vector<LabelKey> added;
  for (const LabeledValue& v : from) {
    LabelKey k(v.rank, v.step, v.key, v.value);
    if (seen->count(k)) continue;
    to->push_back(v);
    added.push_back(std::move(k));
  }
  seen->insert(added.begin(), added.end());
}

}  // namespace

Metadata MergeShardMetadata(const std::vector<const Metadata*>& shards) {
  if (shards.empty()) return {};
  Metadata out = *shards[0];
  out.ground_truth.clear();
  out.reference.clear();
  std::set<LabelKey> truth, reference;
  std::set<std::pair<std::string, std::string>> attributes(out.attributes.begin(),
                                                           out.attributes.end());
  for (const Metadata* m : shards) {
    AppendNew(m->ground_truth, &out.ground_truth, &truth);
    AppendNew(m->reference, &out.reference, &reference);
    for (const auto& a : m->attributes) {
      if (attributes.insert(a).second) out.attributes.push_back(a);
    }
  }
  return out;
}

std::unique_ptr<TraceSource> OpenNativeShards(const std::string& dir) {
  std::vector<std::unique_ptr<TraceSource>> parts;
  std::vector<const Metadata*> metadata;
  for (const std::string& f : NativeShardFiles(dir)) {
    parts.push_back(OpenNative(f));
    metadata.push_back(&parts.back()->metadata());
  }
  if (parts.empty()) ThrowInputError(dir, "", "no .mtrace file in this directory");
  Metadata merged = MergeShardMetadata(metadata);
  return std::make_unique<ConcatSource>(std::move(parts), std::move(merged));
}

std::string ShardPath(const std::string& dir, int process) {
  return (std::filesystem::path(dir) / fmt::format("shard-{:05}.mtrace", process)).string();
}

}  // namespace moetrace
