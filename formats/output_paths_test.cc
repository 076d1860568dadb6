#include "formats/output_paths.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "formats/errors.h"

namespace moetrace {
namespace {

std::string OutputPathsError(const std::vector<std::string>& in, const std::vector<std::string>& out) {
  try {
    CheckOutputPaths(in, out);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(OutputPaths, RefusesAnInputAndAMissingDirectory) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / ("outpaths_" + std::to_string(getpid()));
  fs::create_directories(dir / "sub");
  const std::string trace = (dir / "t.mtrace").string();
  std::ofstream(trace) << "x";
  // The same file under another spelling, and through a hard link.
  const std::string other = (dir / "sub" / ".." / "t.mtrace").string();
  const std::string link = (dir / "link.mtrace").string();
  fs::create_hard_link(trace, link);
  EXPECT_EQ(OutputPathsError({trace}, {other}), other + ": is also an input (" + trace + "); write the output elsewhere");
  EXPECT_EQ(OutputPathsError({"a.json", trace}, {"", link}),
            link + ": is also an input (" + trace + "); write the output elsewhere");
  const std::string missing = (dir / "nodir" / "x.json").string();
  EXPECT_EQ(OutputPathsError({trace}, {missing}), missing + ": directory '" + (dir / "nodir").string() + "' does not exist");
  const std::string under_file = trace + "/x.json";
  EXPECT_EQ(OutputPathsError({}, {under_file}), under_file + ": '" + trace + "' is not a directory");
  // New files, a directory output and the working directory are fine.
  EXPECT_EQ(OutputPathsError({trace}, {(dir / "new.json").string(), (dir / "sub/").string(), "here.json"}), "");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace moetrace
