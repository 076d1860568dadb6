#include "formats/kineto/kineto_importer.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

#include "formats/errors.h"
#include "formats/json_syntax.h"
#include "formats/kineto/kineto_rank_reader.h"
#include "formats/kineto/padded_input.h"
#include "formats/kineto/whole_trace_file.h"

namespace moetrace {
namespace {

namespace fs = std::filesystem;

// Enough for the top-level keys Kineto writes before "traceEvents"
// (deviceProperties of 8 GPUs is about 4 KB).
constexpr size_t kSniffBytes = 1 << 20;
// ... though they usually fit in the first few KB: try that first, since
// every sniff inflates from the start of the file again.
constexpr size_t kQuickSniffBytes = 64 << 10;

// A prefix of `path` long enough for SniffKinetoHeader, and what it says.
std::string SniffPrefix(const std::string& path, KinetoHeader* h) {
  std::string prefix = ReadTracePrefix(path, kQuickSniffBytes);
  *h = SniffKinetoHeader(prefix);
  if (h->has_trace_events || prefix.size() < kQuickSniffBytes) return prefix;
  prefix = ReadTracePrefix(path, kSniffBytes);
  *h = SniffKinetoHeader(prefix);
  return prefix;
}

bool HasJsonName(const std::string& name) {
  auto ends = [&](const char* s) {
    size_t n = strlen(s);
    return name.size() >= n && name.compare(name.size() - n, n, s) == 0;
  };
  return ends(".json") || ends(".json.gz") || ends(".JSON") || ends(".JSON.GZ");
}

// Orders names with embedded numbers numerically ("rank2" < "rank10").
bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (isdigit(static_cast<unsigned char>(a[i])) && isdigit(static_cast<unsigned char>(b[j]))) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && a[i2] == '0') ++i2;
      while (j2 < b.size() && b[j2] == '0') ++j2;
      size_t ie = i2, je = j2;
      while (ie < a.size() && isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && isdigit(static_cast<unsigned char>(b[je]))) ++je;
      if (ie - i2 != je - j2) return ie - i2 < je - j2;
      int c = a.compare(i2, ie - i2, b, j2, je - j2);
      if (c != 0) return c < 0;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

struct RankFile {
  std::string path;
  int32_t rank = 0;
  std::string rule;  // "distributedInfo", "file_name", "directory_order", "default"
};

class KinetoSource : public TraceSource {
 public:
  KinetoSource(Metadata metadata, std::vector<RankFile> files, KinetoOpenOptions options)
      : metadata_(std::move(metadata)), files_(std::move(files)), options_(std::move(options)) {}
  const Metadata& metadata() const override { return metadata_; }
  size_t rank_count() const override { return files_.size(); }
  // Certain only when the header before the events gave it: otherwise a
  // distributedInfo after the events may still name another rank.
  int32_t RankId(size_t index) const override {
    const RankFile& f = files_.at(index);
    return f.rule == "distributedInfo" ? f.rank : kNone;
  }
  uint64_t RankBytes(size_t index) const override {
    std::error_code ec;
    const uintmax_t n = fs::file_size(files_.at(index).path, ec);
    return ec ? 0 : n;
  }
  std::string RankPath(size_t index) const override { return files_.at(index).path; }
  Rank ReadRank(size_t index) const override {
    const RankFile& f = files_.at(index);
    if (options_.whole_files) {
      WholeTraceFile whole = ReadWholeTraceFile(f.path);
      KinetoEventObserver* observer =
          options_.observer ? options_.observer(f.path, whole.gzip) : nullptr;
      const int threads = std::max<int>(1, options_.threads / int(files_.size()));
      return ReadKinetoRank(whole.text, f.path, f.rank, f.rule, nullptr, {}, observer, threads);
    }
    TraceInput in(f.path);
    return ReadKinetoRank(in.buffer(), f.path, f.rank, f.rule, nullptr,
                          [&in] { return in.Refill(); });
  }

 private:
  Metadata metadata_;
  std::vector<RankFile> files_;
  KinetoOpenOptions options_;
};

}  // namespace

bool LooksLikeKineto(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& e : fs::directory_iterator(path, ec)) {
      if (e.is_regular_file(ec) && HasJsonName(e.path().filename().string()) &&
          LooksLikeKineto(e.path().string())) {
        return true;
      }
    }
    return false;
  }
  KinetoHeader h;
  std::string prefix = SniffPrefix(path, &h);
  size_t i = 0;
  if (prefix.size() >= 3 && prefix.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;
  while (i < prefix.size() && isspace(static_cast<unsigned char>(prefix[i]))) ++i;
  if (i >= prefix.size() || prefix[i] != '{') return false;
  if (h.has_trace_events) return true;
  // Keys before traceEvents longer than the sniffed prefix: fall back to a
  // textual look.
  return prefix.find("\"traceEvents\"") != std::string::npos;
}

std::unique_ptr<TraceSource> OpenKineto(const std::string& path) {
  return OpenKineto(path, KinetoOpenOptions());
}

std::unique_ptr<TraceSource> OpenKineto(const std::string& path, KinetoOpenOptions options) {
  std::error_code ec;
  std::vector<std::string> paths;
  bool directory = fs::is_directory(path, ec);
  if (directory) {
    for (const auto& e : fs::directory_iterator(path, ec)) {
      if (e.is_regular_file(ec) && HasJsonName(e.path().filename().string())) {
        paths.push_back(e.path().string());
      }
    }
    std::sort(paths.begin(), paths.end(), NaturalLess);
  } else if (fs::exists(path, ec)) {
    paths.push_back(path);
  } else {
    ThrowInputError(path, "", "no such file or directory");
  }

  Metadata md;
  md.source = "kineto";
  md.origin = path;
  md.producer = "PyTorch profiler (Kineto)";
  std::vector<RankFile> files;
  int32_t order = 0;
  int64_t skipped_files = 0;
  for (const std::string& p : paths) {
    KinetoHeader h;
    std::string prefix = SniffPrefix(p, &h);
    if (!h.has_trace_events && prefix.find("\"traceEvents\"") == std::string::npos) {
      if (!directory) ThrowInputError(p, "", "not a Kineto trace: expected a JSON object "
                                             "with a \"traceEvents\" array");
      // Other JSON in the folder (configs, reports) is skipped, by name; a
      // file that is not well-formed JSON (empty, cut short) may be a rank
      // that lost its head, so it stops the run like any unreadable rank.
      ThrowIfMalformedJson(p, ReadTraceFile(p).view());
      ++skipped_files;
      md.attributes.emplace_back("kineto.skipped_file." + fs::path(p).filename().string(),
                                 "JSON without \"traceEvents\"");
      continue;
    }
    RankFile f;
    f.path = p;
    int32_t from_name = RankFromFileName(p);
    if (h.rank >= 0) {
      f.rank = h.rank;
      f.rule = "distributedInfo";
    } else if (from_name >= 0) {
      f.rank = from_name;
      f.rule = "file_name";
    } else {
      f.rank = directory ? order : 0;
      f.rule = directory ? "directory_order" : "default";
    }
    ++order;
    if (md.device.empty()) md.device = h.device_name;
    if (md.device_memory_bytes == 0) md.device_memory_bytes = h.device_memory;
    if (md.layout.world_size == 0) md.layout.world_size = h.world_size;
    if (h.schema_version >= 0 && md.producer.find("schema") == std::string::npos) {
      md.producer += ", schemaVersion " + std::to_string(h.schema_version);
    }
    md.attributes.emplace_back("kineto.rank_rule." + fs::path(p).filename().string(), f.rule);
    files.push_back(std::move(f));
  }
  if (files.empty()) {
    ThrowInputError(path, "", "no Kineto trace (a .json or .json.gz file with \"traceEvents\")");
  }
  std::stable_sort(files.begin(), files.end(),
                   [](const RankFile& a, const RankFile& b) { return a.rank < b.rank; });
  for (size_t i = 1; i < files.size(); ++i) {
    if (files[i].rank == files[i - 1].rank) {
      std::string msg = "rank " + std::to_string(files[i].rank) + " appears in both " +
                        files[i - 1].path + " and " + files[i].path;
      fprintf(stderr, "warning: %s: duplicate rank: %s\n", path.c_str(), msg.c_str());
      md.attributes.emplace_back("kineto.duplicate_rank", msg);
    }
  }
  if (skipped_files) {
    md.attributes.emplace_back("kineto.skipped_files", std::to_string(skipped_files));
  }
  return std::make_unique<KinetoSource>(std::move(md), std::move(files), std::move(options));
}

Rank ImportKinetoJson(std::string_view json, const std::string& file) {
  PaddedBuffer buf = PaddedBuffer::FromString(json);
  int32_t from_name = RankFromFileName(file);
  return ReadKinetoRank(buf, file, from_name, from_name >= 0 ? "file_name" : "default");
}

}  // namespace moetrace
