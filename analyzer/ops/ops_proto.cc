#include "analyzer/ops/ops_proto.h"

#include <algorithm>

namespace moetrace::ops {

void FillClasses(const int64_t count[kViewClassCount], const int64_t total[kViewClassCount],
                 int32_t steps, analysis::Operators* out) {
  int64_t device = 0, compute = 0;
  for (int c = 0; c < kViewClassCount; ++c) {
    device += total[c];
    if (IsCompute(static_cast<ViewClass>(c))) compute += total[c];
  }
  out->set_steps(steps);
  for (int c = 0; c < kViewClassCount; ++c) {
    if (count[c] == 0) continue;
    const auto cls = static_cast<ViewClass>(c);
    analysis::OpClassTime* o = out->add_classes();
    o->set_op_class(std::string(ViewClassName(cls)));
    o->set_count(count[c]);
    o->set_total_ns(total[c]);
    o->set_per_step_ns(total[c] / std::max<int32_t>(steps, 1));
    if (IsCompute(cls) && compute > 0) {
      o->set_share_of_compute(static_cast<double>(total[c]) / static_cast<double>(compute));
    }
    o->set_share_of_device(device > 0 ? static_cast<double>(total[c]) / static_cast<double>(device) : 0.0);
  }
}

void FillOperators(const RankOps& ops, const StringTable& strings, analysis::Operators* out) {
  FillClasses(ops.class_count, ops.class_total, ops.steps, out);
  int64_t device = 0;
  for (int64_t t : ops.class_total) device += t;
  auto str = [&](StringId id) { return id < strings.size() ? std::string(strings.Get(id)) : std::string(); };
  for (size_t i = 0; i < std::min(ops.rows.size(), kRankTopRows); ++i) {
    const OpRow& r = ops.rows[i];
    analysis::OpStat* o = out->add_top();
    o->set_name(str(r.name));
    if (r.shape != 0) o->set_shape(str(r.shape));
    o->set_op_class(std::string(ViewClassName(r.cls)));
    o->set_count(r.count);
    o->set_total_ns(r.total);
    o->set_mean_ns(r.count > 0 ? r.total / r.count : 0);
    o->set_p50_ns(r.p50);
    o->set_p99_ns(r.p99);
    o->set_share(device > 0 ? static_cast<double>(r.total) / static_cast<double>(device) : 0.0);
  }
  for (size_t i = 0; i < std::min(ops.dispatch.size(), kRankDispatchRows); ++i) {
    const DispatchRow& d = ops.dispatch[i];
    analysis::DispatchStat* o = out->add_dispatch();
    o->set_name(str(d.name).substr(0, d.type_len));
    o->set_count(d.count);
    o->set_host_ns(d.host_ns);
    o->set_mean_launch_ns(d.count > 0 ? d.host_ns / d.count : 0);
    o->set_small(d.small);
    o->set_device_ns(d.device_ns);
    o->set_host_bound_ns(d.host_bound_ns);
  }
  out->set_distinct_names(ops.distinct_names);
}

}  // namespace moetrace::ops
