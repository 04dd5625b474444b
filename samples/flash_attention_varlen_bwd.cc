#include "samples/flash_attention_varlen_bwd.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "samples/attention_grid.h"
#include "samples/flash_attention_bwd_rows.h"
#include "samples/flash_attention_reference.h"
#include "samples/flash_attention_varlen.h"
#include "samples/sample_util.h"
#include "samples/status_macros.h"
#include "samples/tensor_ops.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

namespace T = tessel;

// What the outputs hold before the kernels: a row written past a
// sequence's end (or never written) fails the check.
constexpr double kSentinel = 3.0;

int KvHeadsOf(const FlashAttentionBackwardConfig& c) {
  return c.heads_kv == 0 ? c.H : c.heads_kv;
}

absl::StatusOr<HostTensor> Filled(DataType dtype,
                                  const std::vector<int64_t>& shape) {
  return HostTensor::FromDoubles(
      dtype, shape, std::vector<double>(NumElements(shape), kSentinel));
}

absl::StatusOr<Program> MakeVarlenBackward(const nlohmann::json& json,
                                           const Target& target) {
  SAMPLES_ASSIGN_OR_RETURN(FlashAttentionBackwardConfig c,
                           BackwardMainConfigFromJson(json, target));
  return FlashAttentionVarlenBackwardProgram(c);
}

absl::StatusOr<Program> MakeVarlenPreprocess(const nlohmann::json& json) {
  SAMPLES_ASSIGN_OR_RETURN(FlashAttentionBackwardConfig c,
                           BackwardConfigFromJson(json, /*tiles=*/false));
  return FlashAttentionVarlenBackwardPreprocessProgram(c);
}

}  // namespace

absl::StatusOr<Program> FlashAttentionVarlenBackwardPreprocessProgram(
    const FlashAttentionBackwardConfig& c) {
  // The fixed-length program checks the sizes; its program is dropped.
  SAMPLES_RETURN_IF_ERROR(FlashAttentionBackwardPreprocessProgram(c).status());
  const int rows = kBackwardPreprocessRows, D = c.D, Sp = PaddedSeqLen(c);
  T::ProgramBuilder p("flash_attention_varlen_bwd_preprocess");
  T::Expr total = p.dim("total");
  BackwardPreprocessTensors t;
  t.O = p.tensor("O", {total, c.H, D}, f16);
  t.dO = p.tensor("dO", {total, c.H, D}, f16);
  t.LSE = p.tensor("LSE", {c.H, total}, f32);
  T::Buffer cu_seqlens = p.tensor("cu_seqlens", {c.B + 1}, i32);
  t.Delta = p.tensor("Delta", {c.B, c.H, Sp}, f32);
  t.LSE2 = p.tensor("LSE2", {c.B, c.H, Sp}, f32);
  t.dQ_acc = p.tensor("dQ_acc", {total, c.H, D}, f32);
  {
    T::Kernel kernel(T::ceildiv(c.S, rows), c.H, c.B, {.threads = 128});
    auto [bx, by, bz] = kernel.block_index();
    BackwardPreprocessBlock(
        c, t,
        BackwardRows{.batch = bz, .cu_seqlens = cu_seqlens, .total = total}, bx,
        by);
  }
  return p.finish();
}

absl::StatusOr<Program> FlashAttentionVarlenBackwardProgram(
    const FlashAttentionBackwardConfig& c) {
  SAMPLES_RETURN_IF_ERROR(CheckBackwardMainConfig(c));
  const int bm = c.block_m, D = c.D, Hkv = KvHeadsOf(c);
  T::ProgramBuilder p(absl::StrCat("flash_attention_varlen_bwd",
                                   Hkv != c.H ? "_gqa" : "",
                                   c.causal ? "_causal" : ""));
  T::Expr total = p.dim("total");
  BackwardMainTensors t;
  t.Q = p.tensor("Q", {total, c.H, D}, f16);
  t.K = p.tensor("K", {total, Hkv, D}, f16);
  t.V = p.tensor("V", {total, Hkv, D}, f16);
  t.dO = p.tensor("dO", {total, c.H, D}, f16);
  T::Buffer cu_seqlens = p.tensor("cu_seqlens", {c.B + 1}, i32);
  t.LSE2 = p.tensor("LSE2", {c.B, c.H, PaddedSeqLen(c)}, f32);
  t.Delta = p.tensor("Delta", {c.B, c.H, PaddedSeqLen(c)}, f32);
  t.dQ_acc = p.tensor("dQ_acc", {total, c.H, D}, f32);
  t.dK = p.tensor("dK", {total, Hkv, D}, f16);
  t.dV = p.tensor("dV", {total, Hkv, D}, f16);
  {
    // Tiles of the longest sequence; every sequence's tile 0 runs the most
    // query tiles, as in the fixed-length grid.
    const AttentionGrid grid((c.S + bm - 1) / bm, Hkv, c.B,
                             c.causal && c.longest_first);
    T::Kernel kernel(grid.x(), grid.y(), grid.z(), {.threads = c.threads});
    auto [block_x, block_y, block_z] = kernel.block_index();
    const auto [bx, by, bz] = grid.Block(block_x, block_y, block_z);
    BackwardMainBlock(
        c, t,
        BackwardRows{.batch = bz, .cu_seqlens = cu_seqlens, .total = total}, bx,
        by);
  }
  return p.finish();
}

absl::StatusOr<Workload> FlashAttentionVarlenBackwardWorkload(
    FlashAttentionBackwardConfig c, const std::vector<int>& seqlens,
    uint64_t seed, int pad, const FlashAttentionConfig* forward) {
  SAMPLES_ASSIGN_OR_RETURN(
      const std::vector<int64_t> cu,
      CumulativeSeqlens("flash_attention_varlen_bwd", seqlens, pad));
  c.B = static_cast<int>(seqlens.size());
  c.S = *std::max_element(seqlens.begin(), seqlens.end());
  const int Hkv = KvHeadsOf(c);
  const int64_t total = cu.back() + pad;
  const std::vector<int64_t> q_shape = {total, c.H, c.D},
                             kv_shape = {total, Hkv, c.D};
  Workload w;
  if (forward != nullptr) {
    FlashAttentionConfig f = *forward;
    f.lse = true;
    f.H = c.H, f.D = c.D, f.heads_kv = c.heads_kv, f.causal = c.causal;
    SAMPLES_ASSIGN_OR_RETURN(
        w, FlashAttentionVarlenWorkload(f, seqlens, seed, pad));
  } else {
    SAMPLES_ASSIGN_OR_RETURN(w.tensors["Q"], RandomInput(f16, q_shape, seed));
    SAMPLES_ASSIGN_OR_RETURN(w.tensors["K"],
                             RandomInput(f16, kv_shape, seed + 1));
    SAMPLES_ASSIGN_OR_RETURN(w.tensors["V"],
                             RandomInput(f16, kv_shape, seed + 2));
    HostTensor cu_t(i32, {c.B + 1});
    for (size_t b = 0; b < cu.size(); ++b) cu_t.set_flat_int(b, cu[b]);
    w.tensors["cu_seqlens"] = std::move(cu_t);
    // The forward's outputs in the kernels' types, from float64.
    AttentionForward f = ReferenceVarlenAttentionForward(
        w.tensors["Q"], w.tensors["K"], w.tensors["V"], w.tensors["cu_seqlens"],
        c.causal, 0.0);
    SAMPLES_ASSIGN_OR_RETURN(
        w.tensors["O"],
        HostTensor::FromDoubles(f16, q_shape, f.o.to_doubles()));
    SAMPLES_ASSIGN_OR_RETURN(
        w.tensors["LSE"],
        HostTensor::FromDoubles(f32, {c.H, total}, f.lse.to_doubles()));
  }
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["dO"],
                           RandomInput(f16, q_shape, seed + 3));
  SAMPLES_ASSIGN_OR_RETURN(Program pre,
                           FlashAttentionVarlenBackwardPreprocessProgram(c));
  SAMPLES_ASSIGN_OR_RETURN(Program main,
                           FlashAttentionVarlenBackwardProgram(c));
  const int64_t n_q = NumElements(q_shape);
  SAMPLES_ASSIGN_OR_RETURN(Program cast, CastProgram(n_q, f32, f16));
  const int64_t Sp = PaddedSeqLen(c);
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["Delta"], Filled(f32, {c.B, c.H, Sp}));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["LSE2"], Filled(f32, {c.B, c.H, Sp}));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["dQ_acc"], Filled(f32, q_shape));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["dQ"], Filled(f16, q_shape));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["dK"], Filled(f16, kv_shape));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["dV"], Filled(f16, kv_shape));
  const int forward_step = w.main_step;
  w.steps.push_back(
      {.program = pre,
       .args = {"O", "dO", "LSE", "cu_seqlens", "Delta", "LSE2", "dQ_acc"}});
  w.main_step = static_cast<int>(w.steps.size());
  w.steps.push_back({.program = main,
                     .args = {"Q", "K", "V", "dO", "cu_seqlens", "LSE2",
                              "Delta", "dQ_acc", "dK", "dV"}});
  w.steps.back().pass_config = BackwardMainPassConfig(c);
  w.steps.push_back(
      {.program = cast, .args = {Arg("dQ_acc", {n_q}), Arg("dQ", {n_q})}});
  for (const char* out : {"dQ", "dK", "dV"}) w.outputs.push_back(out);
  double pairs = 0;
  for (int s : seqlens) pairs += double(s) * s;
  const double forward_flops = 4.0 * c.H * pairs * c.D * (c.causal ? 0.5 : 1);
  std::string lens;
  for (int s : seqlens) absl::StrAppend(&lens, lens.empty() ? "" : ",", s);
  FlashAttentionConfig label_config{.B = c.B,
                                    .S = c.S,
                                    .H = c.H,
                                    .D = c.D,
                                    .heads_kv = c.heads_kv,
                                    .causal = c.causal};
  const std::string pass = forward != nullptr ? "fwd+bwd" : "bwd";
  w.label = FlashAttentionLabel(label_config, pass);
  w.label.variant = absl::StrCat("varlen_", c.causal ? "causal" : "full");
  w.label.shape = {{"B", c.B}, {"T", cu.back()}, {"H", c.H}};
  if (Hkv != c.H) w.label.shape.push_back({"Hkv", Hkv});
  w.label.shape.push_back({"D", c.D});
  w.label.size =
      absl::StrCat("B", c.B, " T", cu.back(), " H", c.H,
                   Hkv != c.H ? absl::StrCat(" Hkv", Hkv) : "", " D", c.D);
  w.shape = absl::StrCat(
      "seqlens=", lens, pad ? absl::StrCat("+pad", pad) : "", " H=", c.H,
      Hkv != c.H ? absl::StrCat(" Hkv=", Hkv) : "", " D=", c.D, " f16");
  auto forward_reference = w.reference;
  if (forward != nullptr) {
    // The forward is the step the bench also times alone, as the
    // fixed-length fwd+bwd.
    w.main_step = forward_step;
    w.kernel = absl::StrCat(w.kernel, "_fwd_bwd");
    w.flops = 3.5 * forward_flops;
  } else {
    w.kernel = main.name();
    w.flops = 2.5 * forward_flops;  // five gemms against the forward's two
  }
  w.bytes = 2.0 * (3 * n_q + 4 * NumElements(kv_shape)) + 4.0 * n_q;
  const bool causal = c.causal;
  w.reference =
      [forward_reference,
       causal](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    std::vector<Expected> out;
    if (forward_reference) {
      SAMPLES_ASSIGN_OR_RETURN(out, forward_reference(w));
    }
    AttentionGrads g = ReferenceVarlenAttentionBackward(
        w.tensors.at("Q"), w.tensors.at("K"), w.tensors.at("V"),
        w.tensors.at("dO"), w.tensors.at("cu_seqlens"), causal, kSentinel);
    out.push_back(ExpectedNear("dQ", std::move(g.dq)));
    out.push_back(ExpectedNear("dK", std::move(g.dk)));
    out.push_back(ExpectedNear("dV", std::move(g.dv)));
    return out;
  };
  return w;
}

TESSEL_REGISTER_KERNEL(flash_attention_varlen_bwd, MakeVarlenBackward);
TESSEL_REGISTER_KERNEL(flash_attention_varlen_bwd_preprocess,
                       MakeVarlenPreprocess);

}  // namespace tessel::samples
