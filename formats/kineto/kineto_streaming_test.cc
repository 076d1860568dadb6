// The reader parses a document while it is still being appended to (a gzip
// stream inflated chunk by chunk): the result must not depend on where the
// chunks end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "formats/errors.h"
#include "formats/kineto/kineto_rank_reader.h"

namespace moetrace {
namespace {

std::string BigDocument() {
  std::string doc = "{\"INFO\": [";
  for (int i = 0; i < 40000; ++i) {  // a 2 MB value before the events
    if (i) doc += ", ";
    doc += "\"log line " + std::to_string(i) + " with some padding text {[\\\"]}\"";
  }
  doc += "],\n \"traceEvents\": [\n";
  for (int i = 0; i < 20000; ++i) {
    if (i) doc += ",\n";
    std::string ts = std::to_string(1000 + 10 * i);
    doc += "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, "
           "\"tid\": 1, \"ts\": " + ts + ".5, \"dur\": 2, \"args\": {\"correlation\": " +
           std::to_string(i) + "}},\n";
    doc += "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k" + std::to_string(i % 7) +
           "\", \"pid\": 0, \"tid\": 7, \"ts\": " + ts + ".9, \"dur\": 3, \"args\": {\"stream\": 7, "
           "\"correlation\": " + std::to_string(i) + "}}";
  }
  doc += "],\n \"distributedInfo\": {\"rank\": 4}}\n";
  return doc;
}

// Feeds `doc` to the reader `chunk` bytes at a time.
Rank ReadInChunks(const std::string& doc, size_t chunk) {
  PaddedBuffer buf;
  size_t fed = 0;
  auto refill = [&]() {
    size_t n = std::min(chunk, doc.size() - fed);
    if (n) {
      memcpy(buf.Grow(n), doc.data() + fed, n);
      buf.Commit(n);
      fed += n;
    }
    buf.Finish();
    return fed < doc.size();
  };
  refill();
  return ReadKinetoRank(buf, "stream.json", -1, "default", nullptr, refill);
}

TEST(KinetoStreaming, ChunkBoundariesDoNotMatter) {
  const std::string doc = BigDocument();
  PaddedBuffer whole = PaddedBuffer::FromString(doc);
  Rank expected = ReadKinetoRank(whole, "stream.json", -1, "default");
  EXPECT_EQ(expected.rank, 4);
  ASSERT_EQ(expected.EventCount(), 40000u);
  for (size_t chunk : {size_t(1) << 20, size_t(65537), size_t(4093)}) {
    SCOPED_TRACE(chunk);
    Rank r = ReadInChunks(doc, chunk);
    EXPECT_EQ(r, expected);
  }
}

TEST(KinetoStreaming, TruncatedStreamIsAnError) {
  std::string doc = BigDocument();
  doc.resize(doc.size() - 5000);
  try {
    ReadInChunks(doc, 65537);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("stream.json: byte "), std::string::npos) << m;
    EXPECT_NE(m.find("unterminated event object in \"traceEvents\" (truncated file?)"),
              std::string::npos)
        << m;
  }
}

// A whole buffer is read in one on-demand pass; it must give what the
// streaming reader gives, result or error, on documents that stress the
// top level (the pass falls back to the streaming reader when unsure).
std::string ResultOf(const std::string& doc, bool whole) {
  PaddedBuffer buf = PaddedBuffer::FromString(doc);
  auto no_more = [] { return false; };
  try {
    Rank r = whole ? ReadKinetoRank(buf, "d.json", -1, "default")
                   : ReadKinetoRank(buf, "d.json", -1, "default", nullptr, no_more);
    std::string out = "rank " + std::to_string(r.rank) + " events " +
                      std::to_string(r.EventCount()) + " host " + r.host;
    for (const auto& [k, v] : r.import_stats) out += " " + k + "=" + std::to_string(v);
    return out;
  } catch (const InputError& e) {
    return std::string("error: ") + e.what();
  }
}

TEST(KinetoStreaming, WholeDocumentPassMatchesStreaming) {
  const std::string ev =
      R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": 2, "args": {"stream": 7, "correlation": 1}})";
  const std::vector<std::string> docs = {
      "{\"traceEvents\": [" + ev + "]}",
      "\xEF\xBB\xBF{\"traceEvents\": [" + ev + "]}",  // BOM
      "{\"traceEvents\": [" + ev + "], \"traceEvents\": [" + ev + ", " + ev + "]}",
      "{\"trace\\u0045vents\": [" + ev + "]}",  // escaped key: not traceEvents as written
      "{\"distributedInfo\": {\"rank\": 5}, \"traceEvents\": [" + ev + "], \"host_name\": \"h\"}",
      "{\"traceEvents\": [" + ev + "], \"distributedInfo\": {\"rank\": 6}}",
      "{\"distributedInfo\": 3, \"baseTimeNanoseconds\": 1000, \"traceEvents\": [" + ev + "]}",
      "{\"traceEvents\": [" + ev + "]} }",
      "{\"traceEvents\": [" + ev + "]} {\"a\": 1}",
      "{\"traceEvents\": [" + ev + "]}\n\n  ",
      "{\"traceEvents\": [" + ev + ", 5]}",
      "{\"traceEvents\": [" + ev + "], \"x\": [1, {\"y\": \"\\\"]}\"}]}",
      "{\"traceEvents\": []}",
      "{\"x\": 1}",
      "  {\"traceEvents\": [" + ev + "]}",
  };
  for (const std::string& doc : docs) {
    SCOPED_TRACE(doc);
    EXPECT_EQ(ResultOf(doc, true), ResultOf(doc, false));
  }
  EXPECT_EQ(ResultOf(docs[2], true).substr(0, 15), "rank 0 events 3");
  EXPECT_EQ(ResultOf(docs[7], true),
            "error: d.json: byte " + std::to_string(docs[7].size() - 1) +
                ": unexpected content after the top-level object");
}

}  // namespace
}  // namespace moetrace
