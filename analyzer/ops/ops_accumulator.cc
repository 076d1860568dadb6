#include "analyzer/ops/ops_accumulator.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <vector>

#include "analyzer/ops/ops_proto.h"
#include "analyzer/proto/partial.pb.h"

namespace moetrace::ops {

namespace {

constexpr size_t kBucketCount = 960;  // LogHistogram::Bucket is at most 959

}  // namespace

template <class V>
std::vector<const typename OpsAccumulator::Map<V>::value_type*> OpsAccumulator::ByKey(const Map<V>& m) {
  std::vector<const typename Map<V>::value_type*> out;
  out.reserve(m.size());
  for (const auto& e : m) out.push_back(&e);
  std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  return out;
}

OpsAccumulator::OpsAccumulator() : mu_(std::make_unique<std::mutex>()) {}

std::string OpsAccumulator::Key(uint8_t cls, std::string_view name, std::string_view shape) {
  std::string k(1, static_cast<char>(cls));
  k.append(name);
  k.push_back('\0');
  k.append(shape);
  return k;
}

void OpsAccumulator::Row::Add(int64_t n, int64_t sum, int64_t lo, int64_t hi,
                              const std::pair<uint32_t, int64_t>* b, size_t nb,
                              std::vector<std::pair<uint32_t, int64_t>>* scratch) {
  if (n == 0) return;
  min = count == 0 ? lo : std::min(min, lo);
  max = count == 0 ? hi : std::max(max, hi);
  count += n;
  total += sum;
  // Sparse, sorted by bucket: a row holds the few buckets its durations
  // fall in (a dense table was 7.5 KB per row: 750 MB for 100 k shapes).
  // Usually every incoming bucket is one the row has already (the same
  // operator on another rank): added in place, no allocation.
  bool clean = true;  // sorted, in range, no zero count
  for (size_t k = 0; k < nb; ++k) {
    clean &= b[k].first < kBucketCount && b[k].second != 0 && (k == 0 || b[k - 1].first < b[k].first);
  }
  if (clean) {
    size_t i = 0, j = 0;
    while (j < nb) {
      while (i < buckets.size() && buckets[i].first < b[j].first) ++i;
      if (i == buckets.size() || buckets[i].first != b[j].first) break;
      ++j;
    }
    if (j == nb) {
      i = 0;
      for (j = 0; j < nb; ++j) {
        while (buckets[i].first < b[j].first) ++i;
        buckets[i].second += b[j].second;
      }
      return;
    }
  }
  std::vector<std::pair<uint32_t, int64_t>>& in = *scratch;
  in.clear();
  for (size_t k = 0; k < nb; ++k) {
    if (b[k].first < kBucketCount && b[k].second != 0) in.push_back(b[k]);
  }
  if (!std::is_sorted(in.begin(), in.end())) std::sort(in.begin(), in.end());
  std::vector<std::pair<uint32_t, int64_t>> merged;
  merged.reserve(buckets.size() + in.size());
  size_t i = 0, j = 0;
  while (i < buckets.size() || j < in.size()) {
    if (j == in.size() || (i < buckets.size() && buckets[i].first < in[j].first)) {
      merged.push_back(buckets[i++]);
    } else if (i == buckets.size() || in[j].first < buckets[i].first) {
      merged.push_back(in[j++]);
    } else {
      merged.emplace_back(buckets[i].first, buckets[i].second + in[j].second);
      ++i;
      ++j;
    }
  }
  buckets = std::move(merged);
}

void OpsAccumulator::Add(const RankOps& ops, const StringTable& strings) {
  std::lock_guard<std::mutex> lock(*mu_);
  for (int c = 0; c < kViewClassCount; ++c) {
    class_count_[c] += ops.class_count[c];
    class_total_[c] += ops.class_total[c];
  }
  for (const OpRow& r : ops.rows) {
    // The key in a reused buffer: no allocation once the row exists.
    key_.assign(1, static_cast<char>(r.cls));
    if (r.name < strings.size()) key_.append(strings.Get(r.name));
    key_.push_back('\0');
    if (r.shape != 0 && r.shape < strings.size()) key_.append(strings.Get(r.shape));
    auto it = rows_.find(key_);
    if (it == rows_.end()) it = rows_.emplace(key_, Row{}).first;
    it->second.Add(r.count, r.total, r.min, r.max, ops.buckets.data() + r.hist_begin, r.hist_end - r.hist_begin,
                   &in_);
  }
  for (const DispatchRow& d : ops.dispatch) {
    // Found by view: a string is made only for a type not seen before.
    const std::string_view type =
        d.name < strings.size() ? strings.Get(d.name).substr(0, d.type_len) : std::string_view();
    auto found = dispatch_.find(type);
    if (found == dispatch_.end()) found = dispatch_.emplace(std::string(type), Dispatch{}).first;
    Dispatch& o = found->second;
    o.count += d.count;
    o.host_ns += d.host_ns;
    o.small += d.small;
    o.device_ns += d.device_ns;
    o.host_bound_ns += d.host_bound_ns;
  }
}

void OpsAccumulator::Serialize(partial::OpsState* st) const {
  std::lock_guard<std::mutex> lock(*mu_);
  for (int c = 0; c < kViewClassCount; ++c) {
    st->add_class_count(class_count_[c]);
    st->add_class_total(class_total_[c]);
  }
  for (const auto* e : ByKey(rows_)) {
    const std::string& key = e->first;
    const Row& row = e->second;
    const size_t nul = key.find('\0', 1);
    st->add_op_class(static_cast<uint8_t>(key[0]));
    st->add_name(key.substr(1, nul - 1));
    st->add_shape(key.substr(nul + 1));
    st->add_count(row.count);
    st->add_total(row.total);
    st->add_min(row.min);
    st->add_max(row.max);
    uint32_t n = 0;
    for (const auto& [b, c] : row.buckets) {
      st->add_bucket(b);
      st->add_bucket_count(c);
      ++n;
    }
    st->add_bucket_n(n);
  }
  for (const auto* e : ByKey(dispatch_)) {
    const std::string& name = e->first;
    const Dispatch& d = e->second;
    st->add_dispatch_name(name);
    st->add_dispatch_count(d.count);
    st->add_dispatch_host_ns(d.host_ns);
    st->add_dispatch_small(d.small);
    st->add_dispatch_device_ns(d.device_ns);
    st->add_dispatch_host_bound_ns(d.host_bound_ns);
  }
}

void OpsAccumulator::Merge(const partial::OpsState& st) {
  const int n = st.op_class_size();
  const int nd = st.dispatch_name_size();
  // A state with no rank at all may carry no class columns.
  const bool classes = st.class_count_size() != 0;
  bool ok = !classes || (st.class_count_size() == kViewClassCount && st.class_total_size() == kViewClassCount);
  for (int size : {st.name_size(), st.shape_size(), st.count_size(), st.total_size(), st.min_size(),
                   st.max_size(), st.bucket_n_size()}) {
    ok &= size == n;
  }
  ok &= st.bucket_size() == st.bucket_count_size();
  for (int size : {st.dispatch_count_size(), st.dispatch_host_ns_size(), st.dispatch_small_size(),
                   st.dispatch_device_ns_size(), st.dispatch_host_bound_ns_size()}) {
    ok &= size == nd;
  }
  if (!ok) throw std::runtime_error("operator view state from another process does not parse");
  std::lock_guard<std::mutex> lock(*mu_);
  for (int c = 0; classes && c < kViewClassCount; ++c) {
    class_count_[c] += st.class_count(c);
    class_total_[c] += st.class_total(c);
  }
  int b = 0;
  std::vector<std::pair<uint32_t, int64_t>> buckets;
  for (int k = 0; k < n; ++k) {
    if (st.op_class(k) >= static_cast<uint32_t>(kViewClassCount) ||
        b + static_cast<int64_t>(st.bucket_n(k)) > st.bucket_size()) {
      throw std::runtime_error("operator view state from another process does not parse");
    }
    buckets.clear();
    for (uint32_t i = 0; i < st.bucket_n(k); ++i, ++b) buckets.emplace_back(st.bucket(b), st.bucket_count(b));
    rows_[Key(static_cast<uint8_t>(st.op_class(k)), st.name(k), st.shape(k))].Add(
        st.count(k), st.total(k), st.min(k), st.max(k), buckets.data(), buckets.size(), &in_);
  }
  for (int k = 0; k < nd; ++k) {
    Dispatch& o = dispatch_[st.dispatch_name(k)];
    o.count += st.dispatch_count(k);
    o.host_ns += st.dispatch_host_ns(k);
    o.small += st.dispatch_small(k);
    o.device_ns += st.dispatch_device_ns(k);
    o.host_bound_ns += st.dispatch_host_bound_ns(k);
  }
}

void OpsAccumulator::Fill(int32_t steps, analysis::Operators* out) const {
  std::lock_guard<std::mutex> lock(*mu_);
  FillClasses(class_count_, class_total_, steps, out);
  int64_t device = 0;
  for (int64_t t : class_total_) device += t;
  // Largest total first; ties in key order, so the rows are the
  // same whatever the order ranks and processes were merged in.
  std::vector<const std::pair<const std::string, Row>*> order = ByKey(rows_);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) { return a->second.total > b->second.total; });
  for (size_t i = 0; i < std::min(order.size(), kClusterTopRows); ++i) {
    const std::string& key = order[i]->first;
    const Row& r = order[i]->second;
    const size_t nul = key.find('\0', 1);
    LogHistogram h;
    h.AddBuckets(r.buckets, r.min, r.max);
    analysis::OpStat* o = out->add_top();
    o->set_name(key.substr(1, nul - 1));
    if (nul + 1 < key.size()) o->set_shape(key.substr(nul + 1));
    o->set_op_class(std::string(ViewClassName(static_cast<ViewClass>(static_cast<uint8_t>(key[0])))));
    o->set_count(r.count);
    o->set_total_ns(r.total);
    o->set_mean_ns(r.count > 0 ? r.total / r.count : 0);
    o->set_p50_ns(h.Percentile(0.5));
    o->set_p99_ns(h.Percentile(0.99));
    o->set_share(device > 0 ? static_cast<double>(r.total) / static_cast<double>(device) : 0.0);
  }
  std::vector<const std::pair<const std::string, Dispatch>*> d_order = ByKey(dispatch_);
  std::stable_sort(d_order.begin(), d_order.end(), [](const auto* a, const auto* b) {
    if (a->second.host_bound_ns != b->second.host_bound_ns) return a->second.host_bound_ns > b->second.host_bound_ns;
    return a->second.host_ns > b->second.host_ns;
  });
  for (size_t i = 0; i < std::min(d_order.size(), kClusterDispatchRows); ++i) {
    const Dispatch& d = d_order[i]->second;
    analysis::DispatchStat* o = out->add_dispatch();
    o->set_name(d_order[i]->first);
    o->set_count(d.count);
    o->set_host_ns(d.host_ns);
    o->set_mean_launch_ns(d.count > 0 ? d.host_ns / d.count : 0);
    o->set_small(d.small);
    o->set_device_ns(d.device_ns);
    o->set_host_bound_ns(d.host_bound_ns);
  }
  std::set<std::string_view> names;
  for (const auto& [k, r] : rows_) names.insert(std::string_view(k).substr(1, k.find('\0', 1) - 1));
  out->set_distinct_names(static_cast<int64_t>(names.size()));
}

}  // namespace moetrace::ops
