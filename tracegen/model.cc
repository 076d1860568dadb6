#include "tracegen/model.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "tracegen/noop_layers.h"
#include "tracegen/schedule.h"

namespace moetrace::tracegen {
namespace {

// Even split; the remainder goes to the middle slices, since the first and
// last also hold the embedding and the LM head.
std::vector<int> EvenSplit(int layers, int slices) {
  std::vector<int> out(size_t(std::max(0, slices)), slices > 0 ? layers / slices : 0);
  const int extra = slices > 0 ? layers % slices : 0;
  const int start = (slices - extra) / 2;
  for (int i = 0; i < extra; ++i) ++out[size_t(start + i)];
  return out;
}

// A split of `layers` into the given slices: one count a slice, none
// negative, summing to the model.
bool SplitsModel(const std::vector<int>& counts, int layers) {
  int sum = 0;
  for (int n : counts) {
    if (n < 0) return false;
    sum += n;
  }
  return sum == layers;
}

}  // namespace

ModelShape::ModelShape(const RunConfig& c) {
  const auto& m = c.model();
  layers = m.num_layers();
  dense_layers = m.dense_layers();
  hidden = m.hidden();
  heads = m.num_heads();
  q_lora = m.q_lora_rank();
  kv_lora = m.kv_lora_rank();
  rope = m.qk_rope_dim();
  nope = m.qk_nope_dim();
  v_dim = m.v_head_dim();
  mla = kv_lora > 0;
  if (!mla) {
    nope = hidden / heads;
    rope = 0;
    v_dim = hidden / heads;
  }
  experts = m.num_experts();
  shared = m.shared_experts();
  top_k = std::max(1, m.top_k());
  expert_ffn = m.expert_ffn();
  dense_ffn = m.dense_ffn();
  vocab = m.vocab();
  seq = m.seq_length();
  mtp_layers = m.mtp_layers();
  const auto& p = c.parallel();
  dp = p.dp();
  tp = p.tp();
  pp = p.pp();
  vpp = std::max(1, p.vpp());
  ep = p.ep();
  world = dp * tp * pp;
  sp = p.sp() || (p.tp_extend_ep() && tp > 1);
  extend = p.tp_extend_ep();
  expert_group = ep * (extend ? tp : 1);
  devices_per_node = std::max(1, c.hardware().devices_per_node());
  mbs = p.micro_batch_size();
  micro_batches = static_cast<int>(p.global_batch_size() / (int64_t{mbs} * dp));
  schedule = c.schedule().kind();
  model_stages = ModelStages({schedule, pp, vpp, micro_batches});
  stage_layers.clear();
  if (!p.layers_per_stage().empty()) {
    std::vector<int> counts(size_t(model_stages), 0);
    std::string_view s = p.layers_per_stage();
    for (int i = 0; i < model_stages && !s.empty(); ++i) {
      size_t comma = s.find(',');
      std::string_view part = s.substr(0, comma);
      std::from_chars(part.data(), part.data() + part.size(), counts[size_t(i)]);
      s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
    }
    if (SplitsModel(counts, layers)) stage_layers = counts;
  } else if (!p.noop_layers().empty()) {
    // MindSpeed's padding: equal runs of the padded stack, each without its
    // noop layers.
    std::vector<int> noop;
    std::string error;
    std::vector<int> counts;
    if (ParseNoopLayers(p.noop_layers(), &noop, &error)) counts = NoopPaddedSplit(layers, noop, model_stages, &error);
    if (int(counts.size()) == model_stages && SplitsModel(counts, layers)) stage_layers = counts;
  }
  // The even split when no split is given, or when the given one does not
  // cut this model (Validate lets a padding that does not fit through only
  // when EDPB's balanced split replaces it): never slices of zero layers.
  if (stage_layers.empty()) stage_layers = EvenSplit(layers, model_stages);
  mtp_stage = p.has_mtp_stage() && p.mtp_stage() >= 0 && p.mtp_stage() < model_stages ? p.mtp_stage()
                                                                                      : model_stages - 1;
  stage_first_layer.assign(model_stages, 0);
  for (int i = 1; i < model_stages; ++i)
    stage_first_layer[i] = stage_first_layer[i - 1] + stage_layers[i - 1];
}

void ModelShape::SetStageLayers(const std::vector<int>& counts) {
  stage_layers = counts;
  stage_first_layer.assign(model_stages, 0);
  for (int i = 1; i < model_stages; ++i)
    stage_first_layer[i] = stage_first_layer[i - 1] + stage_layers[i - 1];
}

std::vector<int32_t> ModelShape::EpGroup(int r) const {
  int st = Stage(r), g = DpIndex(r) / ep;
  std::vector<int32_t> out;
  for (int i = 0; i < ep; ++i) {
    if (extend) {
      for (int j = 0; j < tp; ++j) out.push_back(RankOf(st, g * ep + i, j));
    } else {
      out.push_back(RankOf(st, g * ep + i, TpIndex(r)));
    }
  }
  return out;
}

int ModelShape::EpPosition(int r) const {
  int i = DpIndex(r) % ep;
  return extend ? i * tp + TpIndex(r) : i;
}

uint64_t ModelShape::EpGroupId(int r) const {
  return (uint64_t{1} << 56) | (uint64_t(Stage(r)) << 36) |
         (uint64_t(DpIndex(r) / ep) << 16) | uint64_t(extend ? 0 : TpIndex(r));
}

std::vector<int32_t> ModelShape::TpGroup(int r) const {
  std::vector<int32_t> out;
  for (int j = 0; j < tp; ++j) out.push_back(RankOf(Stage(r), DpIndex(r), j));
  return out;
}

std::vector<int32_t> ModelShape::DpGroup(int r) const {
  std::vector<int32_t> out;
  for (int i = 0; i < dp; ++i) out.push_back(RankOf(Stage(r), i, TpIndex(r)));
  return out;
}

std::vector<int32_t> ModelShape::EdpGroup(int r) const {
  std::vector<int32_t> out;
  int i = DpIndex(r) % ep;
  for (int g = 0; g < dp / ep; ++g) out.push_back(RankOf(Stage(r), g * ep + i, TpIndex(r)));
  return out;
}

bool ModelShape::SpansNodes(const std::vector<int32_t>& g) const {
  for (int32_t r : g)
    if (Node(r) != Node(g[0])) return true;
  return false;
}

double ModelShape::AttentionParams() const {
  double h = hidden, H = heads;
  double p;
  if (mla) {
    double q = q_lora > 0 ? h * q_lora + double(q_lora) * H * (nope + rope) : h * H * (nope + rope);
    p = q + h * (kv_lora + rope) + double(kv_lora) * H * (nope + v_dim) + H * v_dim * h;
  } else {
    p = 4 * h * h;
  }
  return p / tp;
}

double ModelShape::DenseMlpParams() const { return 3.0 * hidden * dense_ffn / tp; }
double ModelShape::ExpertParamsEach() const {
  return 3.0 * hidden * expert_ffn / ExpertShard();
}
double ModelShape::SharedParams() const {
  return 3.0 * hidden * expert_ffn * shared / (extend ? 1 : tp);
}

double ModelShape::LayerForwardFlops(int layer) const {
  double n = double(TokensPerMicroBatch());
  double h = hidden, H = heads, s = seq;
  double f = 2 * n * AttentionParams() * tp;
  f += AttentionCoreFlops();
  if (IsMoe(layer)) {
    f += 2 * n * h * experts;                                   // router
    f += 2 * n * top_k * 3 * h * expert_ffn;                    // routed experts
    f += 2 * n * 3 * h * expert_ffn * shared;                   // shared experts
  } else {
    f += 2 * n * 3 * h * dense_ffn;
  }
  return f;
}

double ModelShape::AttentionCoreFlops() const {
  const double s = seq;
  return 2 * double(mbs) * s * s * heads * (nope + rope + v_dim) * 0.5;  // causal: half the square
}

double ModelShape::RecomputeFlopsPerMicroBatch(const std::string& recompute) const {
  double f = 0;
  for (int l = 0; l < layers; ++l) {
    if (recompute == "full") f += LayerForwardFlops(l);
    else if (recompute == "selective") f += AttentionCoreFlops();
  }
  return f;
}

}  // namespace moetrace::tracegen
