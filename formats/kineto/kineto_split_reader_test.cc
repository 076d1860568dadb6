// A file read on two threads (kineto_split_reader.h) gives the Rank and the
// observer's facts a single pass gives, whether the split point holds or not.
#include "formats/kineto/kineto_split_reader.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "formats/kineto/kineto_rank_reader.h"
#include "formats/kineto/whole_trace_file.h"
#include "formats/real_traces_dir.h"

namespace moetrace {
namespace {

// Writes down every fact it sees since the last Restart (which drops what
// came before, as the contract says); forks (when `forks`) into a recorder
// whose facts Join appends.
class FactLog : public KinetoEventObserver {
 public:
  explicit FactLog(bool forks) : forks_(forks) {}
  void Restart() override { log.assign(1, "restart " + std::to_string(++restarts_)); }
  void OnEvent(const KinetoEventFacts& f) override {
    std::string s = std::to_string(f.index);
    for (const KinetoRawValue* v : {&f.ts, &f.dur, &f.cat, &f.name, &f.stream, &f.correlation}) {
      s += "|" + std::to_string(v->type) + ":" + std::string(v->text) + (v->escaped ? "\\" : "");
    }
    log.push_back(s);
  }
  void Complete(std::string_view text) override { log.push_back("complete " + std::to_string(text.size())); }
  void Incomplete() override { log.push_back("incomplete"); }
  std::unique_ptr<KinetoEventObserver> Fork() override {
    return forks_ ? std::make_unique<FactLog>(false) : nullptr;
  }
  void Join(KinetoEventObserver& part, int64_t first_index) override {
    ++joins;
    for (const std::string& s : static_cast<FactLog&>(part).log) {
      const size_t bar = s.find('|');
      log.push_back(std::to_string(std::stoll(s.substr(0, bar)) + first_index) + s.substr(bar));
    }
  }
  std::vector<std::string> log;
  int joins = 0;  // tails taken

 private:
  bool forks_;
  int restarts_ = 0;
};

// Kineto-like events, one per line, with what the split must carry over:
// comm args, synthetic pid/tid strings first seen in the second half,
// memory counters, fractional and quoted timestamps, flows.
std::string Document(int events, const std::string& middle = "", const std::string& after = "") {
  std::string d = "{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [\n";
  for (int i = 0; i < events; ++i) {
    if (i == events / 2 && !middle.empty()) d += middle + ",\n";
    const std::string ts = std::to_string(1000 + 7 * i);
    const std::string pid = i % 97 == 5 ? "\"Spans" + std::to_string(i % 3) + "\"" : "1";
    const std::string tid = i > events * 3 / 4 && i % 89 == 0 ? "\"late lane\"" : "2";
    switch (i % 6) {
      case 0:
        d += "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": " + pid +
             ", \"tid\": " + tid + ", \"ts\": " + ts + ".25, \"dur\": 4, \"args\": {\"External id\": " +
             std::to_string(i) + ", \"Collective name\": \"all_to_allv\", \"In split size\": \"[1, 2]\", "
             "\"Process Group Ranks\": [0, 1], \"Group size\": 2}}";
        break;
      case 1:
        d += "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, "
             "\"tid\": 2, \"ts\": \"" + ts + ".5\", \"dur\": 2, \"args\": {\"correlation\": " +
             std::to_string(i) + ", \"External id\": " + std::to_string(i - 1) + "}}";
        break;
      case 2:
        d += "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_SendRecv\", \"pid\": 0, "
             "\"tid\": 7, \"ts\": " + ts + ", \"dur\": 30, \"args\": {\"stream\": 7, \"correlation\": " +
             std::to_string(i - 1) + ", \"device\": 0}}";
        break;
      case 3:
        d += "  {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
             "\"pid\": 1, \"tid\": 2, \"ts\": " + ts + ", \"args\": {\"Device Type\": 1, \"Device Id\": 0, "
             "\"Bytes\": 4096, \"Total Allocated\": " + std::to_string(4096 * i) +
             ", \"Total Reserved\": 1073741824}}";
        break;
      case 4:
        d += "  {\"ph\": \"s\", \"id\": " + std::to_string(i) + ", \"pid\": 1, \"tid\": 2, \"ts\": " + ts +
             ", \"cat\": \"ac2g\", \"name\": \"ac2g\"}";
        break;
      default:
        d += "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#" +
             std::to_string(i / 600) + "\", \"pid\": 1, \"tid\": 2, \"ts\": " + ts + ", \"dur\": 1}";
    }
    d += i + 1 < events ? ",\n" : "\n";
  }
  d += "  ],\n  \"baseTimeNanoseconds\": 1700000000000000000" + after + "\n}\n";
  return d;
}

struct Read {
  Rank rank;
  KinetoHeader header;
  std::vector<std::string> facts;
  int joins = 0;
};

Read ReadWith(const std::string& text, int threads, bool forks) {
  PaddedBuffer buf = PaddedBuffer::FromString(text);
  FactLog log(forks);
  Read r;
  r.rank = ReadKinetoRank(buf, "rank3.json", 3, "file_name", &r.header, {}, &log, threads);
  EXPECT_TRUE(buf.view() == text);  // the blanked bytes are back
  r.facts = std::move(log.log);
  r.joins = log.joins;
  return r;
}

// `split`: whether the tail is expected to be taken.
void ExpectSameRead(const std::string& text, bool split) {
  const Read one = ReadWith(text, 1, false);
  for (bool forks : {false, true}) {
    SCOPED_TRACE(forks ? "forking observer" : "replayed facts");
    const Read two = ReadWith(text, 2, forks);
    EXPECT_EQ(two.joins, forks && split ? 1 : 0);
    EXPECT_TRUE(two.rank == one.rank);
    EXPECT_EQ(two.header.base_time_ns, one.header.base_time_ns);
    EXPECT_EQ(two.header.schema_version, one.header.schema_version);
    // (The log starts with the restart count, which a failed split raises.)
    ASSERT_FALSE(two.facts.empty());
    ASSERT_FALSE(one.facts.empty());
    EXPECT_EQ(std::vector<std::string>(two.facts.begin() + 1, two.facts.end()),
              std::vector<std::string>(one.facts.begin() + 1, one.facts.end()));
  }
}

size_t Count(std::string_view text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The split point is an event line a little past half of the events (the
// tail thread also copies its part), wherever they lie in the bytes.
TEST(SplitTail, StartsAtAnEventLinePastHalfOfTheEvents) {
  // Events twice as dense in the second half of the bytes.
  std::string text = Document(30000);
  const size_t first = text.find("\"traceEvents\": [\n") + 17;
  std::string pad(text.size() / 2, ' ');
  text.insert(first, pad);
  ASSERT_GT(text.size(), SplitTail::kMinBytes);
  PaddedBuffer buf = PaddedBuffer::FromString(text);
  SplitTail tail;
  ASSERT_TRUE(tail.Start(buf, "t.json", nullptr));
  // The tail starts at the first '{' after the head.
  const size_t at = text.find('{', size_t(tail.head_end() - buf.data()));
  EXPECT_EQ(text.substr(size_t(tail.head_end() - buf.data()) - 1, at - size_t(tail.head_end() - buf.data()) + 2), "},\n  {");
  EXPECT_EQ(text.substr(at - 4, 5), ",\n  {");
  const double share = double(Count(std::string_view(text).substr(0, at), "\"ph\"")) / 30000;
  EXPECT_GT(share, 0.5);
  EXPECT_LT(share, 0.6);
  Rank rank;
  KinetoBuilder builder(&rank);
  EXPECT_TRUE(tail.Take(&builder, nullptr, 0));
  // Its array ends where the document's does.
  EXPECT_EQ(std::string(tail.array_end(), 4), ",\n  ");
  EXPECT_EQ(size_t(tail.array_end() - buf.data()), text.rfind("],\n  \"baseTime") + 1);
  EXPECT_TRUE(buf.view() == text);  // the head's blanked bytes are back
}

TEST(SplitTail, NoSplitPointInOneLine) {
  std::string text = Document(30000);
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  PaddedBuffer buf = PaddedBuffer::FromString(text);
  SplitTail tail;
  EXPECT_FALSE(tail.Start(buf, "t.json", nullptr));
  EXPECT_EQ(tail.head_end(), nullptr);
}

// Megabytes of blank lines: the split point search looks at each byte once
// (it used to rescan the whitespace around every line break: hours here).
TEST(SplitTail, BlankLinesAreSearchedOnce) {
  const std::string text = "{\"traceEvents\": [{\"ph\": \"X\"}," + std::string(size_t(6) << 20, '\n') +
                           "{\"ph\": \"X\"}]}";
  PaddedBuffer buf = PaddedBuffer::FromString(text);
  SplitTail tail;
  EXPECT_FALSE(tail.Start(buf, "t.json", nullptr));  // none within 8 MB of the estimate
  ExpectSameRead(text, false);
}

// A tail of tiny events: recorded, each would take ~70 times its bytes,
// so the tail thread waits for the main thread to take them (it may run
// ahead by (2 x tail bytes + 64 MB) / sizeof(KinetoEvent), ~420 k events
// here, of ~700 k in the tail). It must neither deadlock nor change a thing.
TEST(SplitRead, TinyEventsTailWaitsForTheMainThread) {
  constexpr int kEvents = 1500000;
  std::string text = "{\"traceEvents\": [\n";
  text.reserve(size_t(kEvents) * 14 + 64);
  for (int i = 0; i < kEvents; ++i) text += i + 1 < kEvents ? "{\"ph\": \"i\"},\n" : "{\"ph\": \"i\"}\n";
  text += "]}\n";
  const size_t tail_bytes = text.size() * 45 / 100;
  ASSERT_GT(tail_bytes / 13, (2 * tail_bytes + (size_t(64) << 20)) / sizeof(KinetoEvent));
  ExpectSameRead(text, true);
}

TEST(SplitRead, SameRankAndFactsAsOnePass) { ExpectSameRead(Document(30000), true); }

// The guessed split point inside an event: an args array of objects, one
// per line, straddles the middle. The tail is thrown away.
TEST(SplitRead, GuessInsideAnEvent) {
  std::string nested = "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"nested\", \"pid\": 1, "
                       "\"tid\": 2, \"ts\": 5, \"dur\": 1, \"args\": {\"list\": [\n";
  // "ph" keys inside: the estimate of where the events are counts them.
  for (int i = 0; i < 20000; ++i) nested += "    {\"ph\": \"X\", \"k\": " + std::to_string(i) + "},\n";
  nested += "    {\"k\": -1}\n  ]}}";
  const std::string text = Document(30000, nested);
  PaddedBuffer buf = PaddedBuffer::FromString(text);
  SplitTail tail;
  ASSERT_TRUE(tail.Start(buf, "t.json", nullptr));
  ASSERT_GT(tail.head_end(), buf.data() + text.find("\"nested\""));
  ASSERT_LT(tail.head_end(), buf.data() + text.find("{\"k\": -1}"));
  tail.Cancel();
  ExpectSameRead(text, false);
}

// The last ']' of the text inside a string after the array: the tail does
// not parse, and the file is read in one pass.
TEST(SplitRead, TailThatDoesNotParse) {
  ExpectSameRead(Document(30000, "", ",\n  \"traceName\": \"a]\""), false);
}

// Keys after the split array are read, including a second traceEvents
// array, which replaces nothing in the importer (events accumulate) but
// restarts the observer.
TEST(SplitRead, KeysAndAnotherArrayAfterTheSplitArray) {
  ExpectSameRead(Document(30000, "",
                          ",\n  \"distributedInfo\": {\"rank\": 9, \"world_size\": 16},\n"
                          "  \"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
                          "\"pid\": 0, \"tid\": 7, \"ts\": 9, \"dur\": 1, \"args\": {\"stream\": 7}}]"),
                 true);
  const Read r = ReadWith(Document(30000, "", ",\n  \"distributedInfo\": {\"rank\": 9}"), 2, true);
  EXPECT_EQ(r.rank.rank, 9);
}

// A plain file is mapped (privately): blanking its head for the read
// changes neither the file nor the result.
TEST(SplitRead, MappedFile) {
  const std::string text = Document(30000);
  const auto path = std::filesystem::temp_directory_path() / "moetrace_split_mapped.json";
  {
    FILE* f = fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    fwrite(text.data(), 1, text.size(), f);
    fclose(f);
  }
  WholeTraceFile whole = ReadWholeTraceFile(path.string());
  const Read one = ReadWith(text, 1, false);
  FactLog log(true);
  const Rank two = ReadKinetoRank(whole.text, "rank3.json", 3, "file_name", nullptr, {}, &log, 2);
  EXPECT_EQ(log.joins, 1);
  EXPECT_TRUE(two == one.rank);
  EXPECT_TRUE(whole.text.view() == text);
  EXPECT_TRUE(ReadWholeTraceFile(path.string()).text.view() == text);
  std::filesystem::remove(path);
  ASSERT_FALSE(log.log.empty());
  EXPECT_EQ(std::vector<std::string>(log.log.begin() + 1, log.log.end()),
            std::vector<std::string>(one.facts.begin() + 1, one.facts.end()));
}

// A later pid or tid key of an event replaces an earlier one, whichever
// of them was a label ("Spans") given a synthetic id.
TEST(SplitRead, RepeatedPidAndTidKeysInTheTail) {
  std::string text = Document(30000);
  size_t at = text.rfind("\"pid\": 1, \"tid\": 2");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 18, "\"pid\": \"lbl\", \"pid\": 1, \"tid\": 2, \"tid\": \"lane\"");
  at = text.rfind("\"pid\": 1, \"tid\": 2", at - 1);
  text.replace(at, 18, "\"pid\": \"first\", \"tid\": 3, \"tid\": null");
  ExpectSameRead(text, true);
}

TEST(SplitRead, SameRanksOnRealTraces) {
  const std::filesystem::path dir = std::filesystem::path(RealTracesRoot()) / "kineto";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no real traces at " << dir;
  std::set<std::string> split;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().extension() != ".gz") continue;
    SCOPED_TRACE(e.path().string());
    WholeTraceFile whole = ReadWholeTraceFile(e.path().string());
    if (whole.text.size() < SplitTail::kMinBytes) continue;
    const std::string text(whole.text.view());
    ExpectSameRead(text, true);
    split.insert(e.path().parent_path().filename().string());
  }
  // The sets known to be large enough to split (new ones may join them).
  for (const char* known : {"allreduce-v100", "b200-eager", "legacy-resnet50", "mi300-resnet-ckpt",
                            "ns-resolution"}) {
    EXPECT_EQ(split.count(known), 1u) << known;
  }
}

}  // namespace
}  // namespace moetrace
