// The whole text of a Kineto trace file, gzipped or plain (gzread reads a
// plain file as it is), for tests that check the importer against their own
// pass over the raw JSON. "" when the file cannot be opened.
#pragma once

#include <zlib.h>

#include <string>

namespace moetrace {

inline std::string ReadKinetoText(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  if (!f) return out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, size_t(n));
  gzclose(f);
  return out;
}

}  // namespace moetrace
