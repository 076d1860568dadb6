#include "analyzer/advise/layout_rule.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "analyzer/replay/replay.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace::advise {
namespace {

Trace TinyMoe(const std::vector<std::string>& sets) {
  tracegen::RunConfig c = tracegen::BuildConfig({"tiny-moe", "", sets, 0});
  MemorySink sink;
  tracegen::Generate(c, {}, sink);
  return std::move(sink.trace());
}

int64_t MedianStep(const Trace& t) {
  MemorySource s(t);
  return replay::MedianStepNs(Analyze(s));
}

TEST(LayoutRule, Placeholder) {
  const Trace t = TinyMoe({});
  MemorySource s(t);
  const analysis::Analysis a = Analyze(s);
  std::vector<Proposal> dropped;
  AdviseOptions o;
  o.dropped = &dropped;
  const std::vector<Proposal> ps = Advise(t, a, o);
  std::printf("%s\n%s\n", FormatProposals(ps).c_str(), FormatDropped(dropped).c_str());
  for (const auto& k : ps[0].config) std::printf("%s\n", k.c_str());
  std::printf("gain %.17g before %lld after %lld\n", ps[0].gain, (long long)ps[0].step_before_ns, (long long)ps[0].step_after_ns);
  std::vector<std::string> with = ps[0].config;
  const int64_t before = MedianStep(t), after = MedianStep(TinyMoe(with));
  std::printf("measured %lld -> %lld gain %.6f\n", (long long)before, (long long)after, double(before - after) / before);
}

}  // namespace
}  // namespace moetrace::advise
