#include "tracegen/config.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <tuple>
#include <fstream>
#include <sstream>

#include <fmt/core.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/type_resolver_util.h>

#include "formats/errors.h"
#include "formats/json_syntax.h"
#include "tracegen/documents.h"
#include "tracegen/embedded_files.h"
#include "tracegen/model.h"
#include "tracegen/mtp_stage.h"
#include "tracegen/noop_layers.h"
#include "tracegen/rl/rl_config.h"
#include "tracegen/schedule.h"

namespace moetrace::tracegen {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Parses JSON into `out` with presence kept (all scalars are optional).
void ParseJsonInto(std::string_view json, std::string_view file, Message* out) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), out, options);
  if (!status.ok()) {
    ThrowIfMalformedJson(std::string(file), json);  // a syntax error, with its byte
    ThrowInputError(file, "", std::string(status.message()));
  }
}

std::string_view FindEmbedded(std::string_view dir, std::string_view key_field,
                              std::string_view name, std::string* file_out) {
  for (const auto& [path, text] : EmbeddedFiles()) {
    if (path.substr(0, dir.size()) != dir) continue;
    std::string needle = fmt::format("\"{}\": \"{}\"", key_field, name);
    if (text.find(needle) != std::string_view::npos) {
      *file_out = std::string(path);
      return text;
    }
  }
  return {};
}

template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  if constexpr (std::is_floating_point_v<T>) {
    std::string tmp(s);
    char* end = nullptr;
    double v = std::strtod(tmp.c_str(), &end);
    if (tmp.empty() || end != tmp.c_str() + tmp.size() || !std::isfinite(v)) return false;
    *out = static_cast<T>(v);
    return true;
  } else {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && p == s.data() + s.size();
  }
}

[[noreturn]] void KeyError(std::string_view key, std::string_view what) {
  ThrowInputError("config", key, what);
}

}  // namespace

std::vector<PresetInfo> ListPresets() {
  std::vector<PresetInfo> out;
  for (const auto& [path, text] : EmbeddedFiles()) {
    if (path.substr(0, 8) != "presets/") continue;
    RunConfig c;
    ParseJsonInto(text, path, &c);
    out.push_back({c.preset(), c.description()});
  }
  std::sort(out.begin(), out.end(),
            [](const PresetInfo& a, const PresetInfo& b) { return a.name < b.name; });
  return out;
}

std::vector<std::string> ListHardwarePresets() {
  std::vector<std::string> out;
  for (const auto& [path, text] : EmbeddedFiles()) {
    if (path.substr(0, 9) != "hardware/") continue;
    HardwareConfig h;
    ParseJsonInto(text, path, &h);
    out.push_back(h.preset());
  }
  std::sort(out.begin(), out.end());
  return out;
}

RunConfig PresetConfig(std::string_view name) {
  std::string file;
  std::string_view text = FindEmbedded("presets/", "preset", name, &file);
  if (text.empty()) {
    std::string known;
    for (const auto& p : ListPresets()) known += (known.empty() ? "" : ", ") + p.name;
    ThrowInputError("--preset", name, "unknown preset (known: " + known + ")");
  }
  RunConfig c;
  ParseJsonInto(text, file, &c);
  return c;
}

RunConfig ParseConfigJson(std::string_view json, std::string_view file) {
  RunConfig user;
  ParseJsonInto(json, file, &user);
  if (!user.has_preset() || user.preset().empty()) return user;
  RunConfig base = PresetConfig(user.preset());
  base.MergeFrom(user);  // presence-aware: only keys the file names replace
  return base;
}

RunConfig LoadConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ThrowInputError(path, "", "cannot open config file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (ss.str().size() > (64u << 20)) ThrowInputError(path, "", "config file larger than 64 MiB");
  return ParseConfigJson(ss.str(), path);
}

void ApplyOverride(RunConfig* config, std::string_view assignment) {
  size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0)
    ThrowInputError("--set", assignment, "expected KEY=VALUE");
  std::string_view key = assignment.substr(0, eq);
  std::string_view value = assignment.substr(eq + 1);
  // The field only records which preset a config was built from: setting
  // it would change the label, not the configuration.
  if (key == "preset") ThrowInputError("--set", assignment, "the base configuration is chosen with --preset, not --set");
  Message* msg = config;
  std::string_view rest = key;
  const FieldDescriptor* field = nullptr;
  while (true) {
    size_t dot = rest.find('.');
    std::string part(rest.substr(0, dot));
    field = msg->GetDescriptor()->FindFieldByName(part);
    if (!field) ThrowInputError("--set", key, "unknown key");
    if (dot == std::string_view::npos) break;
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || field->is_repeated())
      ThrowInputError("--set", key, "unknown key");
    msg = msg->GetReflection()->MutableMessage(msg, field);
    rest = rest.substr(dot + 1);
  }
  if (field->is_repeated() || field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE)
    ThrowInputError("--set", key, "is a section, not a value");
  const Reflection* r = msg->GetReflection();
  auto bad = [&](const char* expected) {
    ThrowInputError("--set", key, fmt::format("expected {}, got '{}'", expected, value));
  };
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      int32_t v;
      if (!ParseNumber(value, &v)) bad("an integer");
      r->SetInt32(msg, field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      int64_t v;
      if (!ParseNumber(value, &v)) bad("an integer");
      r->SetInt64(msg, field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      uint32_t v;
      if (!ParseNumber(value, &v)) bad("a non-negative integer");
      r->SetUInt32(msg, field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t v;
      if (!ParseNumber(value, &v)) bad("a non-negative integer");
      r->SetUInt64(msg, field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      double v;
      if (!ParseNumber(value, &v)) bad("a number");
      r->SetDouble(msg, field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_FLOAT: {
      float v;
      if (!ParseNumber(value, &v)) bad("a number");
      r->SetFloat(msg, field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      if (value == "true" || value == "1") r->SetBool(msg, field, true);
      else if (value == "false" || value == "0") r->SetBool(msg, field, false);
      else bad("true or false");
      break;
    }
    case FieldDescriptor::CPPTYPE_STRING:
      r->SetString(msg, field, std::string(value));
      break;
    default:
      ThrowInputError("--set", key, "unsupported field type");
  }
}

void ResolveHardware(RunConfig* config) {
  std::string name = config->hardware().has_preset() ? config->hardware().preset()
                                                      : std::string("atlas-800t-a2");
  std::string file;
  std::string_view text = FindEmbedded("hardware/", "preset", name, &file);
  if (text.empty()) {
    std::string known;
    for (const auto& p : ListHardwarePresets()) known += (known.empty() ? "" : ", ") + p;
    KeyError("hardware.preset", "unknown hardware preset '" + name + "' (known: " + known + ")");
  }
  HardwareConfig calib;
  ParseJsonInto(text, file, &calib);
  calib.MergeFrom(config->hardware());
  *config->mutable_hardware() = calib;
}

bool BalancedSplitRuns(const RunConfig& c) {
  const auto& p = c.parallel();
  return p.balance_stages() && p.layers_per_stage().empty() && c.schedule().kind() != "dualpipe" &&
         ModelStages({c.schedule().kind(), p.pp(), std::max(1, p.vpp()), 1}) >= 2 && c.rl().algorithm().empty();
}

void Validate(const RunConfig& c) {
  const auto& m = c.model();
  const auto& p = c.parallel();
  const auto& h = c.hardware();
  auto positive = [](std::string_view key, double v) {
    if (!(v > 0)) KeyError(key, fmt::format("must be > 0 (got {})", v));
  };
  positive("model.num_layers", m.num_layers());
  positive("model.hidden", m.hidden());
  positive("model.num_heads", m.num_heads());
  positive("model.seq_length", m.seq_length());
  positive("model.vocab", m.vocab());
  positive("model.dense_ffn", m.dense_ffn());
  if (m.dense_layers() < 0 || m.dense_layers() > m.num_layers())
    KeyError("model.dense_layers", "must be between 0 and model.num_layers");
  if (m.q_lora_rank() > 0 || m.kv_lora_rank() > 0) {
    positive("model.kv_lora_rank", m.kv_lora_rank());
    positive("model.qk_nope_dim", m.qk_nope_dim());
    positive("model.v_head_dim", m.v_head_dim());
  }
  if (m.num_experts() < 0) KeyError("model.num_experts", "must be >= 0");
  if (m.num_experts() > 0) {
    positive("model.expert_ffn", m.expert_ffn());
    if (m.top_k() < 1 || m.top_k() > m.num_experts())
      KeyError("model.top_k", "must be between 1 and model.num_experts");
  }
  for (auto [key, v] : {std::pair<const char*, int>{"parallel.dp", p.dp()},
                        {"parallel.tp", p.tp()}, {"parallel.pp", p.pp()},
                        {"parallel.vpp", p.vpp()}, {"parallel.ep", p.ep()},
                        {"parallel.cp", p.cp()},
                        {"parallel.micro_batch_size", p.micro_batch_size()},
                        {"parallel.global_batch_size", p.global_batch_size()}}) {
    if (v < 1) KeyError(key, fmt::format("must be >= 1 (got {})", v));
  }
  if (p.cp() != 1) KeyError("parallel.cp", "context parallelism is not modelled (must be 1)");
  int64_t product = int64_t{p.dp()} * p.tp() * p.pp() * p.cp();
  if (p.has_world_size() && p.world_size() != product)
    KeyError("parallel.world_size",
             fmt::format("{} cards but dp*tp*pp*cp = {}*{}*{}*{} = {}", p.world_size(), p.dp(),
                         p.tp(), p.pp(), p.cp(), product));
  if (product > 1'000'000) KeyError("parallel.world_size", "more than 1,000,000 cards");
  if (p.dp() % p.ep() != 0)
    KeyError("parallel.ep", fmt::format("ep {} does not divide dp {}", p.ep(), p.dp()));
  if (m.num_heads() % p.tp() != 0)
    KeyError("parallel.tp", fmt::format("tp {} does not divide model.num_heads {}", p.tp(),
                                        m.num_heads()));
  int64_t group = int64_t{p.ep()} * (p.tp_extend_ep() ? p.tp() : 1);
  if (m.num_experts() > 0 && m.num_experts() % group != 0)
    KeyError("model.num_experts", fmt::format("{} experts not divisible by the expert group of "
                                              "{} ranks (ep{})",
                                              m.num_experts(), group,
                                              p.tp_extend_ep() ? " x tp" : ""));
  if (p.tp_extend_ep() && (int64_t{m.seq_length()} * p.micro_batch_size()) % p.tp() != 0)
    KeyError("parallel.tp_extend_ep", "tokens per micro-batch not divisible by tp");
  if (p.sp() && m.seq_length() % p.tp() != 0)
    KeyError("parallel.sp", "model.seq_length not divisible by tp");
  int64_t vstages = int64_t{p.pp()} * p.vpp();
  if (vstages > m.num_layers())
    KeyError("parallel.pp", fmt::format("{} pipeline stages x {} virtual > {} layers", p.pp(),
                                        p.vpp(), m.num_layers()));
  if (p.global_batch_size() % (int64_t{p.micro_batch_size()} * p.dp()) != 0)
    KeyError("parallel.global_batch_size",
             fmt::format("{} is not a multiple of micro_batch_size*dp = {}", p.global_batch_size(),
                         int64_t{p.micro_batch_size()} * p.dp()));
  int64_t micro = p.global_batch_size() / (int64_t{p.micro_batch_size()} * p.dp());
  if (micro > 100000) KeyError("parallel.global_batch_size", "more than 100000 micro-batches");
  const std::string& kind = c.schedule().kind();
  // adaptive_pipe: adaptive plus Adaptive Pipe's published mechanisms
  // (tracegen/README.md); the same layouts as adaptive.
  const bool vpp_kind = kind == "interleaved" || kind == "adaptive" || kind == "adaptive_pipe";
  if (kind != "1f1b" && kind != "dualpipe" && !vpp_kind)
    KeyError("schedule.kind",
             "'" + kind + "' is not one of 1f1b, interleaved, dualpipe, adaptive, adaptive_pipe");
  if (p.vpp() > 1 && !vpp_kind)
    KeyError("parallel.vpp", "vpp > 1 needs schedule.kind interleaved, adaptive or adaptive_pipe");
  // Megatron-LM refuses the interleaved schedule without a pipeline
  // (arguments.py: pipeline-model-parallel size should be greater than 1).
  if (p.vpp() > 1 && p.pp() == 1) KeyError("parallel.vpp", "vpp > 1 needs parallel.pp > 1");
  if (vpp_kind && p.pp() > 1 && micro % p.pp() != 0)
    KeyError("parallel.global_batch_size",
             fmt::format("{} micro-batches is not a multiple of pp {} (interleaved schedule)",
                         micro, p.pp()));
  if (kind == "dualpipe" && (micro % 2 != 0 || p.pp() % 2 != 0))
    KeyError("schedule.kind", "dualpipe needs an even pp and an even number of micro-batches");
  if (kind == "dualpipe" && 2 * vstages > m.num_layers())
    KeyError("parallel.pp", "dualpipe holds two stages per rank: 2*pp > model.num_layers");
  // The layer slices the model is cut into (DualPipe: pp, each rank holding
  // two of them): what parallel.layers_per_stage lists and the noop padding
  // must divide into (ModelShape cuts by the same count).
  const int model_stages = ModelStages({kind, p.pp(), p.vpp(), 1});
  if (!p.layers_per_stage().empty()) {
    int64_t sum = 0, count = 0;
    std::string_view s = p.layers_per_stage();
    while (!s.empty()) {
      size_t comma = s.find(',');
      int v;
      if (!ParseNumber(s.substr(0, comma), &v) || v < 1)
        KeyError("parallel.layers_per_stage", "expected a comma-separated list of integers >= 1");
      sum += v;
      ++count;
      s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
    }
    const int64_t want = model_stages;
    if (count != want)
      KeyError("parallel.layers_per_stage",
               fmt::format("{} entries, expected one per (virtual) stage: {}", count, want));
    if (sum != m.num_layers())
      KeyError("parallel.layers_per_stage",
               fmt::format("sums to {}, model.num_layers is {}", sum, m.num_layers()));
  }
  const std::string& a2a = c.comm().a2a();
  if (a2a != "flat" && a2a != "hierarchical")
    KeyError("comm.a2a", "'" + a2a + "' is not one of flat, hierarchical");
  const std::string& rc = c.memory().recompute();
  if (rc != "none" && rc != "full" && rc != "selective")
    KeyError("memory.recompute", "'" + rc + "' is not one of none, full, selective");
  const std::string& kg = c.compute().kernel_gains();
  if (!kg.empty() && kg != "measured" && kg != "class")
    KeyError("compute.kernel_gains", "'" + kg + "' is not one of measured, class");
  if (c.routing().skew() < 0) KeyError("routing.skew", "must be >= 0");
  if (c.routing().drift() < 0) KeyError("routing.drift", "must be >= 0");
  if (c.routing().edpb() && c.routing().edpb_interval() < 1)
    KeyError("routing.edpb_interval", "must be >= 1");
  if (c.routing().redundant_experts() < 0 || c.routing().redundant_experts() > m.num_experts())
    KeyError("routing.redundant_experts",
             fmt::format("must be between 0 and model.num_experts ({})", m.num_experts()));
  if (c.routing().redundant_experts() > 0 && p.ep() * (p.tp_extend_ep() ? p.tp() : 1) < 2)
    KeyError("routing.redundant_experts", "copies need experts spread over EP ranks (ep > 1)");
  if (p.balance_stages() && !p.layers_per_stage().empty())
    KeyError("parallel.balance_stages", "chooses parallel.layers_per_stage itself: give one or the other");
  if (p.balance_stages() && kind == "dualpipe")
    KeyError("parallel.balance_stages", "not modelled for schedule.kind dualpipe");
  // The split's local search is cubic in the slices (stage_split.cc).
  if (p.balance_stages() && int64_t{p.pp()} * std::max(1, p.vpp()) > 256)
    KeyError("parallel.balance_stages", "at most 256 (virtual) stages (parallel.pp x parallel.vpp)");
  if (!p.noop_layers().empty()) {
    if (!p.layers_per_stage().empty())
      KeyError("parallel.noop_layers", "pads the even split; parallel.layers_per_stage gives the split: give one or the other");
    std::vector<int> noop;
    std::string error;
    if (!ParseNoopLayers(p.noop_layers(), &noop, &error)) KeyError("parallel.noop_layers", error);
    // EDPB's split replaces the padding when it runs, so the padding need
    // not fit the layout then; when it does not run (one stage, an RL run)
    // the padding is the split, and is checked.
    if (!BalancedSplitRuns(c)) {
      const int stages = model_stages;
      const std::vector<int> counts = NoopPaddedSplit(m.num_layers(), noop, stages, &error);
      if (counts.empty()) KeyError("parallel.noop_layers", error);
      // Only the last stage may be left with no layer: it still has the LM
      // head (Megatron's "...|L" layouts). An empty stage is not modelled
      // under DualPipe (its last model stage shares rank 0 with the first).
      for (int i = 0; i < stages; ++i)
        if (counts[size_t(i)] == 0 && (i != stages - 1 || kind == "dualpipe"))
          KeyError("parallel.noop_layers",
                   fmt::format("(virtual) stage {} of {} would hold only noop layers{}", i, stages,
                               kind == "dualpipe" ? " (dualpipe needs a layer on every stage; drop the padding "
                                                    "with parallel.noop_layers=\"\")"
                                                  : ""));
    }
  }
  const std::string& docs = c.data().doc_distribution();
  if (!docs.empty() && docs != "fixed" && docs != "lognormal" && docs != "mixture")
    KeyError("data.doc_distribution", "'" + docs + "' is not one of fixed, lognormal, mixture");
  if (docs == "mixture") {
    std::string error;
    const std::vector<DocSource> mix = ParseDocMix(c.data().doc_mix(), &error);
    if (mix.empty()) KeyError("data.doc_mix", error);
    // Lengths are drawn one document at a time (documents.cc).
    if (!(m.seq_length() / MixtureMeanLength(mix) <= 65536))
      KeyError("data.doc_mix", "at most 65,536 documents per sequence on average (model.seq_length / mean length)");
    // The mix's own means and the exponential within a source set the lengths.
    if (c.data().has_doc_mean()) KeyError("data.doc_mean", "only with data.doc_distribution fixed or lognormal");
    if (c.data().doc_sigma() != 0) KeyError("data.doc_sigma", "only with data.doc_distribution lognormal");
  } else if (!c.data().doc_mix().empty()) {
    KeyError("data.doc_mix", "only with data.doc_distribution=mixture");
  }
  if (!docs.empty() && docs != "mixture" && (c.data().doc_mean() < 1 || c.data().doc_mean() > m.seq_length()))
    KeyError("data.doc_mean", fmt::format("must be between 1 and model.seq_length ({})", m.seq_length()));
  // Lengths are drawn one document at a time (documents.cc).
  if (!docs.empty() && docs != "mixture" && c.data().doc_mean() >= 1 && m.seq_length() / c.data().doc_mean() > 65536)
    KeyError("data.doc_mean", "at most 65,536 documents per sequence on average (model.seq_length / data.doc_mean)");
  if (c.data().doc_sigma() < 0 || c.data().doc_sigma() > 5 || !std::isfinite(c.data().doc_sigma()))
    KeyError("data.doc_sigma", "must be between 0 and 5");
  if (m.mtp_modelled() && m.mtp_layers() < 1)
    KeyError("model.mtp_modelled", "needs model.mtp_layers >= 1");
  if (m.mtp_layers() < 0 || m.mtp_layers() > 8) KeyError("model.mtp_layers", "must be between 0 and 8");
  if (p.has_mtp_stage() && p.mtp_stage() != -1) {
    if (!m.mtp_modelled()) KeyError("parallel.mtp_stage", "places the MTP modules: needs model.mtp_modelled=true");
    if (kind == "dualpipe") KeyError("parallel.mtp_stage", "not modelled for schedule.kind dualpipe");
    // EDPB's split leaves the last stage empty itself when the MTP is
    // pinned before it; a given split must already (ModelShape's counts).
    const std::vector<int> counts = BalancedSplitRuns(c) ? std::vector<int>{} : ModelShape(c).stage_layers;
    const std::string error = MtpStageError(p.mtp_stage(), model_stages, std::max(1, p.pp()), counts);
    if (!error.empty()) KeyError("parallel.mtp_stage", error);
  }
  if (c.steps() < 1 || c.steps() > 10000) KeyError("steps", "must be between 1 and 10000");
  for (auto [key, v] : {std::pair<const char*, double>{"hardware.peak_flops", h.peak_flops()},
                        {"hardware.hbm_bytes", h.hbm_bytes()},
                        {"hardware.hbm_bandwidth", h.hbm_bandwidth()},
                        {"hardware.intra_node_bandwidth", h.intra_node_bandwidth()},
                        {"hardware.inter_node_bandwidth", h.inter_node_bandwidth()},
                        {"hardware.host_link_bandwidth", h.host_link_bandwidth()},
                        {"hardware.comm_efficiency", h.comm_efficiency()},
                        {"hardware.eff_matmul", h.eff_matmul()},
                        {"hardware.eff_flash_fwd", h.eff_flash_fwd()},
                        {"hardware.eff_flash_bwd", h.eff_flash_bwd()},
                        {"hardware.eff_vector", h.eff_vector()},
                        {"hardware.eff_grouped_gemm", h.eff_grouped_gemm()},
                        {"hardware.eff_matmul_opt", h.eff_matmul_opt()},
                        {"hardware.eff_flash_fwd_opt", h.eff_flash_fwd_opt()},
                        {"hardware.eff_flash_bwd_opt", h.eff_flash_bwd_opt()},
                        {"hardware.eff_vector_opt", h.eff_vector_opt()},
                        {"hardware.cross_numa_factor", h.cross_numa_factor()},
                        {"hardware.devices_per_node", h.devices_per_node()}}) {
    if (!(v > 0) || !std::isfinite(v)) KeyError(key, fmt::format("must be > 0 (got {})", v));
  }
  // Plausible floors: a bandwidth of bytes per second or a peak of FLOP/s
  // would make one op last past int64 nanoseconds (llround overflows to
  // INT64_MIN), so a figure off by its unit is refused, naming the key.
  for (auto [key, v, min] : {std::tuple<const char*, double, double>{"hardware.peak_flops", h.peak_flops(), 1e9},
                             {"hardware.hbm_bandwidth", h.hbm_bandwidth(), 1e6},
                             {"hardware.intra_node_bandwidth", h.intra_node_bandwidth(), 1e6},
                             {"hardware.inter_node_bandwidth", h.inter_node_bandwidth(), 1e6},
                             {"hardware.host_link_bandwidth", h.host_link_bandwidth(), 1e6},
                             {"hardware.comm_efficiency", h.comm_efficiency(), 1e-3},
                             {"hardware.eff_matmul", h.eff_matmul(), 1e-3},
                             {"hardware.eff_flash_fwd", h.eff_flash_fwd(), 1e-3},
                             {"hardware.eff_flash_bwd", h.eff_flash_bwd(), 1e-3},
                             {"hardware.eff_vector", h.eff_vector(), 1e-3},
                             {"hardware.eff_grouped_gemm", h.eff_grouped_gemm(), 1e-3},
                             {"hardware.eff_matmul_opt", h.eff_matmul_opt(), 1e-3},
                             {"hardware.eff_flash_fwd_opt", h.eff_flash_fwd_opt(), 1e-3},
                             {"hardware.eff_flash_bwd_opt", h.eff_flash_bwd_opt(), 1e-3},
                             {"hardware.eff_vector_opt", h.eff_vector_opt(), 1e-3}}) {
    if (v < min) KeyError(key, fmt::format("{} is implausibly small (at least {:g})", v, min));
  }
  // Fixed costs per op or message are >= 0, and at most 1,000 s each: past
  // that, a step's sum of them would overflow int64 nanoseconds.
  for (auto [key, v] : {std::pair<const char*, double>{"hardware.alpha_intra_ns", h.alpha_intra_ns()},
                        {"hardware.alpha_inter_ns", h.alpha_inter_ns()},
                        {"hardware.kernel_overhead_ns", h.kernel_overhead_ns()},
                        {"hardware.framework_op_ns", h.framework_op_ns()},
                        {"hardware.launch_ns", h.launch_ns()},
                        {"hardware.enqueue_ns", h.enqueue_ns()},
                        {"hardware.d2h_sync_ns", h.d2h_sync_ns()},
                        {"host.python_op_ns", c.host().python_op_ns()},
                        {"host.autograd_op_ns", c.host().autograd_op_ns()},
                        {"hardware.grouped_gemm_half_tokens", h.grouped_gemm_half_tokens()}}) {
    const bool per_op_ns = std::string_view(key).ends_with("_ns");
    if (per_op_ns && v > 1e12) KeyError(key, fmt::format("{:g} ns is implausibly large (at most 1e+12)", v));
    if (!(v >= 0) || !std::isfinite(v)) KeyError(key, fmt::format("must be >= 0 (got {})", v));
  }
  rl::ValidateRl(c);  // no-op without rl.algorithm
}

RunConfig BuildConfig(const ConfigRequest& request) {
  if (request.preset.empty() == request.config_path.empty())
    ThrowInputError("generate", "", "give exactly one of --preset or --config");
  RunConfig c = request.preset.empty() ? LoadConfigFile(request.config_path)
                                       : PresetConfig(request.preset);
  for (const auto& o : request.overrides) ApplyOverride(&c, o);
  // An RL run's unit is the iteration (its update steps are rl.update_steps):
  // --steps counts iterations there rather than being silently ignored.
  if (request.steps > 0) {
    if (c.rl().algorithm().empty()) c.set_steps(request.steps);
    else c.mutable_rl()->set_iterations(request.steps);
  }
  ResolveHardware(&c);
  if (!c.parallel().has_world_size())
    c.mutable_parallel()->set_world_size(c.parallel().dp() * c.parallel().tp() *
                                         c.parallel().pp() * std::max(1, c.parallel().cp()));
  if (!c.parallel().has_cp()) c.mutable_parallel()->set_cp(1);
  if (!c.parallel().has_vpp()) c.mutable_parallel()->set_vpp(1);
  if (!c.has_steps()) c.set_steps(1);
  if (!c.routing().has_edpb_interval()) c.mutable_routing()->set_edpb_interval(1);
  if (!c.schedule().has_kind()) c.mutable_schedule()->set_kind("1f1b");
  if (!c.comm().has_a2a()) c.mutable_comm()->set_a2a("flat");
  if (!c.memory().has_recompute()) c.mutable_memory()->set_recompute("none");
  rl::ApplyRlDefaults(&c);  // leaves a config without rl untouched
  Validate(c);
  return c;
}

std::string ConfigToJson(const RunConfig& config) {
  // Through a deterministic binary encoding: map entries (hardware.sources)
  // come out sorted, so the same config always gives the same bytes.
  std::string binary;
  {
    google::protobuf::io::StringOutputStream raw(&binary);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.SetSerializationDeterministic(true);
    config.SerializeToCodedStream(&coded);
  }
  static google::protobuf::util::TypeResolver* resolver =
      google::protobuf::util::NewTypeResolverForDescriptorPool(
          "type.googleapis.com", google::protobuf::DescriptorPool::generated_pool());
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string out;
  (void)google::protobuf::util::BinaryToJsonString(
      resolver, "type.googleapis.com/" + config.GetDescriptor()->full_name(), binary, &out,
      options);
  return out;
}

}  // namespace moetrace::tracegen
