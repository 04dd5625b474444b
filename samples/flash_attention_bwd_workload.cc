// The backward's host wrapper (Delta with dQ_acc zeroed, the main kernel,
// dQ to f16) as a Workload, alone or after the forward.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "samples/flash_attention.h"
#include "samples/flash_attention_bwd.h"
#include "samples/flash_attention_reference.h"
#include "samples/sample_util.h"
#include "samples/status_macros.h"
#include "samples/tensor_ops.h"

namespace tessel::samples {
namespace {

FlashAttentionConfig ForwardOf(const FlashAttentionBackwardConfig& c) {
  return {.B = c.B,
          .S = c.S,
          .H = c.H,
          .D = c.D,
          .heads_kv = c.heads_kv,
          .causal = c.causal};
}

// A tensor of 3s: an element no step writes fails the check.
absl::StatusOr<HostTensor> Sentinel(DataType dtype,
                                    const std::vector<int64_t>& shape) {
  return HostTensor::FromDoubles(dtype, shape,
                                 std::vector<double>(NumElements(shape), 3.0));
}

// The backward's steps on the workload's Q, K, V, dO, O and LSE; adds the
// tensors it writes and dQ, dK, dV to the outputs.
absl::Status AddBackwardSteps(const FlashAttentionBackwardConfig& c,
                              Workload& w) {
  SAMPLES_ASSIGN_OR_RETURN(Program pre,
                           FlashAttentionBackwardPreprocessProgram(c));
  SAMPLES_ASSIGN_OR_RETURN(Program main, FlashAttentionBackwardProgram(c));
  const int Hkv = c.heads_kv == 0 ? c.H : c.heads_kv;
  const std::vector<int64_t> q_shape = {c.B, c.S, c.H, c.D},
                             kv_shape = {c.B, c.S, Hkv, c.D};
  const int64_t n_q = NumElements(q_shape);
  SAMPLES_ASSIGN_OR_RETURN(Program cast, CastProgram(n_q, f32, f16));
  const int64_t Sp = PaddedSeqLen(c);
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["Delta"], Sentinel(f32, {c.B, c.H, Sp}));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["LSE2"], Sentinel(f32, {c.B, c.H, Sp}));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["dQ_acc"], Sentinel(f32, q_shape));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["dQ"], Sentinel(f16, q_shape));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["dK"], Sentinel(f16, kv_shape));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["dV"], Sentinel(f16, kv_shape));
  w.steps.push_back(
      {.program = pre, .args = {"O", "dO", "LSE", "Delta", "LSE2", "dQ_acc"}});
  w.main_step = static_cast<int>(w.steps.size());
  w.steps.push_back(
      {.program = main,
       .args = {"Q", "K", "V", "dO", "LSE2", "Delta", "dQ_acc", "dK", "dV"}});
  w.steps.back().pass_config = BackwardMainPassConfig(c);
  w.steps.push_back(
      {.program = cast, .args = {Arg("dQ_acc", {n_q}), Arg("dQ", {n_q})}});
  for (const char* out : {"dQ", "dK", "dV"}) w.outputs.push_back(out);
  return absl::OkStatus();
}

std::vector<Expected> GradientsExpected(const Workload& w, bool causal) {
  AttentionGrads g =
      ReferenceAttentionBackward(w.tensors.at("Q"), w.tensors.at("K"),
                                 w.tensors.at("V"), w.tensors.at("dO"), causal);
  return {ExpectedNear("dQ", std::move(g.dq)),
          ExpectedNear("dK", std::move(g.dk)),
          ExpectedNear("dV", std::move(g.dv))};
}

// Past this many multiply-adds (B H S^2 D), the backward-only workload does
// not compute O and LSE in float64 (a minute of host time at the bench
// sizes).
constexpr double kMaxReferenceMacs = 4294967296.0;

// ln(visible keys) per row: the log-sum-exp of scores near zero (random
// inputs in [-1, 1] give scores of about 1/3 after the 1/sqrt(D) scale).
absl::StatusOr<HostTensor> StandInLse(const FlashAttentionBackwardConfig& c) {
  std::vector<double> lse(int64_t{c.B} * c.H * c.S);
  for (int64_t i = 0; i < static_cast<int64_t>(lse.size()); ++i) {
    const int64_t s = i % c.S;
    lse[i] = std::log(static_cast<double>(c.causal ? s + 1 : c.S));
  }
  return HostTensor::FromDoubles(f32, {c.B, c.H, c.S}, lse);
}

// Q K^T and P V of the forward.
double ForwardFlops(const FlashAttentionBackwardConfig& c) {
  return 4.0 * c.B * c.H * double(c.S) * c.S * c.D * (c.causal ? 0.5 : 1);
}

}  // namespace

PassConfig BackwardMainPassConfig(const FlashAttentionBackwardConfig& c) {
  PassConfig config;
  config.bulk_reduce_atomics = c.dq_bulk;
  config.wgmma_across_barriers = c.across_barriers;
  return config;
}

absl::StatusOr<Workload> FlashAttentionBackwardWorkload(
    const FlashAttentionBackwardConfig& c, uint64_t seed) {
  const FlashAttentionConfig f = ForwardOf(c);
  const int Hkv = c.heads_kv == 0 ? c.H : c.heads_kv;
  const std::vector<int64_t> q_shape = {c.B, c.S, c.H, c.D},
                             kv_shape = {c.B, c.S, Hkv, c.D};
  Workload w;
  w.shape = absl::StrCat("B=", c.B, " S=", c.S, " H=", c.H,
                         Hkv != c.H ? absl::StrCat(" Hkv=", Hkv) : "",
                         " D=", c.D, " f16");
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["Q"], RandomInput(f16, q_shape, seed));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["K"],
                           RandomInput(f16, kv_shape, seed + 1));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["V"],
                           RandomInput(f16, kv_shape, seed + 2));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["dO"],
                           RandomInput(f16, q_shape, seed + 3));
  // The forward's outputs: from the float64 forward in the kernel's types,
  // or, past what the host computes in seconds (the bench sizes, run
  // without --check), stand-ins of the same magnitudes.
  const bool exact = double(c.B) * c.H * c.S * c.S * c.D <= kMaxReferenceMacs;
  if (exact) {
    AttentionForward fwd = ReferenceAttentionForward(
        w.tensors["Q"], w.tensors["K"], w.tensors["V"], c.causal);
    SAMPLES_ASSIGN_OR_RETURN(
        w.tensors["O"],
        HostTensor::FromDoubles(f16, q_shape, fwd.o.to_doubles()));
    SAMPLES_ASSIGN_OR_RETURN(
        w.tensors["LSE"],
        HostTensor::FromDoubles(f32, {c.B, c.H, c.S}, fwd.lse.to_doubles()));
  } else {
    SAMPLES_ASSIGN_OR_RETURN(w.tensors["O"],
                             RandomInput(f16, q_shape, seed + 4, 0.1));
    SAMPLES_ASSIGN_OR_RETURN(w.tensors["LSE"], StandInLse(c));
  }
  SAMPLES_RETURN_IF_ERROR(AddBackwardSteps(c, w));
  w.kernel = w.steps[w.main_step].program.name();
  // Five gemms against the forward's two, as FlashAttention counts them.
  w.flops = 2.5 * ForwardFlops(c);
  w.bytes = 2.0 * (3 * NumElements(q_shape) + 4 * NumElements(kv_shape)) +
            4.0 * NumElements(q_shape);
  w.label = FlashAttentionLabel(f, "bwd");
  const bool causal = c.causal;
  w.reference =
      [causal](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    return GradientsExpected(w, causal);
  };
  return w;
}

absl::StatusOr<Workload> FlashAttentionForwardBackwardWorkload(
    const FlashAttentionConfig& forward,
    const FlashAttentionBackwardConfig& backward, uint64_t seed) {
  if (forward.B != backward.B || forward.S != backward.S ||
      forward.H != backward.H || forward.D != backward.D ||
      KvHeads(forward) !=
          (backward.heads_kv == 0 ? backward.H : backward.heads_kv) ||
      forward.causal != backward.causal) {
    return absl::InvalidArgumentError(
        "flash_attention fwd+bwd: the backward's sizes, heads or mask differ "
        "from the forward's");
  }
  FlashAttentionConfig f = forward;
  f.lse = true;
  SAMPLES_ASSIGN_OR_RETURN(Workload w, FlashAttentionWorkload(f, seed));
  const std::vector<int64_t> q_shape = {f.B, f.S, f.H, f.D};
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["dO"],
                           RandomInput(f16, q_shape, seed + 3));
  const int forward_step = w.main_step;
  SAMPLES_RETURN_IF_ERROR(AddBackwardSteps(backward, w));
  // The forward is the step the bench also times alone.
  w.main_step = forward_step;
  w.kernel = absl::StrCat(FlashAttentionName(f), "_fwd_bwd");
  w.flops *= 3.5;
  w.bytes += 2.0 * (NumElements(q_shape) * 5) + 4.0 * NumElements(q_shape);
  w.label = FlashAttentionLabel(f, "fwd+bwd");
  auto forward_reference = w.reference;
  const bool causal = f.causal;
  w.reference =
      [forward_reference,
       causal](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    SAMPLES_ASSIGN_OR_RETURN(std::vector<Expected> out, forward_reference(w));
    for (Expected& e : GradientsExpected(w, causal))
      out.push_back(std::move(e));
    return out;
  };
  return w;
}

}  // namespace tessel::samples
