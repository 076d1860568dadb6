#include "formats/open_trace.h"

#include <filesystem>

#include "formats/ascend/ascend_importer.h"
#include "formats/ascend_db/ascend_db_importer.h"
#include "formats/chrome/chrome_json_writer.h"
#include "formats/errors.h"
#include "formats/kineto/kineto_importer.h"
#include "formats/native/native_reader.h"
#include "formats/native/native_shards.h"
#include "formats/native/native_writer.h"
#include "formats/perfetto/perfetto_writer.h"

namespace moetrace {
namespace fs = std::filesystem;

const char* TraceFormatName(TraceFormat f) {
  switch (f) {
    case TraceFormat::kNative: return "native";
    case TraceFormat::kKineto: return "kineto";
    case TraceFormat::kAscend: return "ascend";
    case TraceFormat::kAscendDb: return "ascend-db";
    case TraceFormat::kUnknown: break;
  }
  return "unknown";
}

TraceFormat DetectFormat(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return TraceFormat::kUnknown;
  // Ascend first: its trace_view.json would also pass a loose JSON sniff.
  if (!fs::is_directory(path, ec) && LooksLikeNative(path)) return TraceFormat::kNative;
  // The DB before the text files: Ascend's own tools prefer it too.
  if (LooksLikeAscendDb(path)) return TraceFormat::kAscendDb;
  if (LooksLikeAscend(path)) return TraceFormat::kAscend;
  if (LooksLikeKineto(path)) return TraceFormat::kKineto;
  // Last: a profiler folder with a stray .mtrace in it stays what it was.
  if (IsNativeShardDir(path)) return TraceFormat::kNative;
  return TraceFormat::kUnknown;
}

std::unique_ptr<TraceSource> OpenTrace(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) ThrowInputError(path, "", "no such file or directory");
  switch (DetectFormat(path)) {
    case TraceFormat::kNative:
      return fs::is_directory(path, ec) ? OpenNativeShards(path) : OpenNative(path);
    case TraceFormat::kAscend: return OpenAscend(path);
    case TraceFormat::kAscendDb: return OpenAscendDb(path);
    case TraceFormat::kKineto: return OpenKineto(path);
    case TraceFormat::kUnknown: break;
  }
  ThrowInputError(path, "byte 0",
                  "unrecognised input: expected a .mtrace file (or a directory of them), a Kineto/Chrome JSON "
                  "(.json or .json.gz, or a directory of them), an Ascend profiler directory or an "
                  "Ascend / msprof SQLite export (.db)");
}

std::unique_ptr<TraceSink> CreateSink(const std::string& path) {
  auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".mtrace")) return CreateNativeSink(path);
  if (ends_with(".pftrace") || ends_with(".perfetto-trace")) return CreatePerfettoSink(path);
  if (ends_with(".json")) return CreateChromeJsonSink(path);
  ThrowInputError(path, "", "unknown output type: use .mtrace, .pftrace or .json");
}

}  // namespace moetrace
