#include "formats/native/native_metadata.h"

#include "formats/export/utf8.h"

#include <cstring>

namespace moetrace::native {
namespace {

void LabeledToProto(const std::vector<moetrace::LabeledValue>& in,
                    google::protobuf::RepeatedPtrField<LabeledValue>* out) {
  for (const moetrace::LabeledValue& v : in) {
    LabeledValue* p = out->Add();
    p->set_rank(v.rank);
    p->set_step(v.step);
    p->set_key(SanitizedUtf8(v.key));
    p->set_value_bits(DoubleBits(v.value));
  }
}

std::vector<moetrace::LabeledValue> LabeledFromProto(
    const google::protobuf::RepeatedPtrField<LabeledValue>& in) {
  std::vector<moetrace::LabeledValue> out;
  out.reserve(in.size());
  for (const LabeledValue& p : in) {
    out.push_back({p.rank(), p.step(), p.key(), DoubleFromBits(p.value_bits())});
  }
  return out;
}

}  // namespace

uint64_t DoubleBits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

double DoubleFromBits(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

void MetadataToProto(const moetrace::Metadata& in, Metadata* out) {
  out->set_source(SanitizedUtf8(in.source));
  out->set_origin(SanitizedUtf8(in.origin));
  out->set_producer(SanitizedUtf8(in.producer));
  WorldLayout* l = out->mutable_layout();
  l->set_world_size(in.layout.world_size);
  l->set_dp(in.layout.dp);
  l->set_tp(in.layout.tp);
  l->set_pp(in.layout.pp);
  l->set_vpp(in.layout.vpp);
  l->set_ep(in.layout.ep);
  l->set_cp(in.layout.cp);
  l->set_devices_per_node(in.layout.devices_per_node);
  out->set_device(SanitizedUtf8(in.device));
  out->set_device_peak_flops_bits(DoubleBits(in.device_peak_flops));
  out->set_device_memory_bytes(in.device_memory_bytes);
  out->set_model_flops_per_step_bits(DoubleBits(in.model_flops_per_step));
  out->set_tokens_per_step(in.tokens_per_step);
  out->set_config_json(SanitizedUtf8(in.config_json));
  LabeledToProto(in.ground_truth, out->mutable_ground_truth());
  LabeledToProto(in.reference, out->mutable_reference());
  for (const auto& [k, v] : in.attributes) {
    KeyValue* kv = out->add_attributes();
    kv->set_key(SanitizedUtf8(k));
    kv->set_value(SanitizedUtf8(v));
  }
}

moetrace::Metadata MetadataFromProto(const Metadata& in) {
  moetrace::Metadata m;
  m.source = in.source();
  m.origin = in.origin();
  m.producer = in.producer();
  const WorldLayout& l = in.layout();
  m.layout.world_size = l.world_size();
  m.layout.dp = l.dp();
  m.layout.tp = l.tp();
  m.layout.pp = l.pp();
  m.layout.vpp = l.vpp();
  m.layout.ep = l.ep();
  m.layout.cp = l.cp();
  m.layout.devices_per_node = l.devices_per_node();
  m.device = in.device();
  m.device_peak_flops = DoubleFromBits(in.device_peak_flops_bits());
  m.device_memory_bytes = in.device_memory_bytes();
  m.model_flops_per_step = DoubleFromBits(in.model_flops_per_step_bits());
  m.tokens_per_step = in.tokens_per_step();
  m.config_json = in.config_json();
  m.ground_truth = LabeledFromProto(in.ground_truth());
  m.reference = LabeledFromProto(in.reference());
  m.attributes.reserve(in.attributes_size());
  for (const KeyValue& kv : in.attributes()) m.attributes.emplace_back(kv.key(), kv.value());
  return m;
}

}  // namespace moetrace::native
