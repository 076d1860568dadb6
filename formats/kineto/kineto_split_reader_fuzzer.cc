// libFuzzer target: reading a file on two threads (kineto_split_reader.h)
// gives exactly what a single pass gives, Rank, observer's facts or error,
// on any input: every input is split, whatever its size.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "formats/errors.h"
#include "formats/kineto/kineto_rank_reader.h"
#include "formats/kineto/kineto_split_reader.h"

namespace {

// Every fact as text, since the last Restart; forks.
class Facts : public moetrace::KinetoEventObserver {
 public:
  void Restart() override { log.clear(); }
  void OnEvent(const moetrace::KinetoEventFacts& f) override {
    std::string s = std::to_string(f.index);
    for (const moetrace::KinetoRawValue* v : {&f.ts, &f.dur, &f.cat, &f.name, &f.stream,
                                               &f.correlation}) {
      s += '|' + std::to_string(v->type) + std::string(v->text) + (v->escaped ? "\\" : "");
    }
    log.push_back(std::move(s));
  }
  void Complete(std::string_view) override { log.push_back("complete"); }
  void Incomplete() override { log.push_back("incomplete"); }
  std::unique_ptr<moetrace::KinetoEventObserver> Fork() override {
    return std::make_unique<Facts>();
  }
  void Join(moetrace::KinetoEventObserver& part, int64_t first_index) override {
    for (const std::string& s : static_cast<Facts&>(part).log) {
      const size_t bar = s.find('|');
      log.push_back(std::to_string(std::stoll(s.substr(0, bar)) + first_index) + s.substr(bar));
    }
  }
  std::vector<std::string> log;
};

std::string Read(const moetrace::PaddedBuffer& buf, int threads, moetrace::Rank* rank,
                 Facts* facts) {
  try {
    *rank = moetrace::ReadKinetoRank(buf, "fuzz.json", 0, "default", nullptr, {}, facts, threads);
  } catch (const moetrace::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  moetrace::SetSplitMinBytes(0);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  moetrace::PaddedBuffer one_buf = moetrace::PaddedBuffer::FromString(text);
  moetrace::PaddedBuffer two_buf = moetrace::PaddedBuffer::FromString(text);
  moetrace::Rank one, two;
  Facts one_facts, two_facts;
  const std::string one_error = Read(one_buf, 1, &one, &one_facts);
  const std::string two_error = Read(two_buf, 2, &two, &two_facts);
  // What an observer saw counts only when the read completed it.
  const bool completed = (!one_facts.log.empty() && one_facts.log.back() == "complete") ||
                         (!two_facts.log.empty() && two_facts.log.back() == "complete");
  if (one_error != two_error || !(one == two) || (completed && one_facts.log != two_facts.log) ||
      two_buf.view() != text) {
    std::abort();
  }
  return 0;
}
