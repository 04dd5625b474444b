// flash_attention_fp8's inputs, steps and float64 reference.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "samples/flash_attention_fp8.h"
#include "samples/sample_util.h"
#include "samples/status_macros.h"

namespace tessel::samples {
namespace {

// Descales in [lo, lo + 1): a factor dropped or taken from another head
// moves the result by a large part of itself.
absl::StatusOr<HostTensor> Descales(int B, int H, uint64_t seed, double lo) {
  SAMPLES_ASSIGN_OR_RETURN(HostTensor t, RandomInput(f32, {B, H}, seed));
  for (int64_t e = 0; e < t.num_elements(); ++e)
    t.set_flat(e, lo + 0.5 + 0.5 * t.get_flat(e));
  return t;
}

}  // namespace

HostTensor ReferenceFp8Attention(const HostTensor& q, const HostTensor& k,
                                 const HostTensor& v, const HostTensor& dq,
                                 const HostTensor& dk, const HostTensor& dv,
                                 bool causal, bool round_p) {
  const std::vector<int64_t>& shape = q.shape();
  const int64_t B = shape[0], S = shape[1], H = shape[2], D = shape[3];
  const std::vector<double> qv = q.to_doubles(), kv = k.to_doubles(),
                            vv = v.to_doubles();
  std::vector<double> o(qv.size());
  auto at = [&](int64_t b, int64_t s, int64_t h) {
    return ((b * S + s) * H + h) * D;
  };
  // One (batch, head, query row) per index.
  ParallelFor(B * H * S, [&](int64_t r) {
    const int64_t b = r / (H * S), h = r / S % H, i = r % S;
    const double score_scale =
        dq.get_flat(b * H + h) * dk.get_flat(b * H + h) / std::sqrt(double(D));
    const int64_t keys = causal ? i + 1 : S;
    std::vector<double> p(keys);
    double max = -INFINITY;
    for (int64_t j = 0; j < keys; ++j) {
      double dot = 0;
      for (int64_t d = 0; d < D; ++d)
        dot += qv[at(b, i, h) + d] * kv[at(b, j, h) + d];
      p[j] = dot * score_scale;
      max = std::max(max, p[j]);
    }
    double sum = 0;
    for (double& x : p) sum += (x = std::exp(x - max));
    if (round_p) {
      HostTensor rounded(fp8_e4m3, {keys});
      for (int64_t j = 0; j < keys; ++j) rounded.set_flat(j, p[j]);
      p = rounded.to_doubles();
    }
    const double out_scale = dv.get_flat(b * H + h) / sum;
    for (int64_t j = 0; j < keys; ++j) {
      for (int64_t d = 0; d < D; ++d)
        o[at(b, i, h) + d] += p[j] * vv[at(b, j, h) + d] * out_scale;
    }
  });
  return F64Tensor(shape, std::move(o));
}

absl::StatusOr<Workload> Fp8FlashAttentionWorkload(
    const Fp8FlashAttentionConfig& c, uint64_t seed) {
  SAMPLES_ASSIGN_OR_RETURN(Program transpose, Fp8TransposeVProgram(c));
  SAMPLES_ASSIGN_OR_RETURN(Program attention, Fp8FlashAttentionProgram(c));
  const std::vector<int64_t> shape = {c.B, c.S, c.H, c.D};
  Workload w;
  w.kernel = attention.name();
  w.shape = absl::StrCat("B=", c.B, " S=", c.S, " H=", c.H, " D=", c.D,
                         " fp8_e4m3->bf16");
  // Q and K in [-2, 2] and descales in [1, 2): scores of a few units, a
  // softmax far from uniform, so that P's e4m3 rounding and a wrong key
  // show.
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["Q"],
                           RandomInput(fp8_e4m3, shape, seed, 2.0));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["K"],
                           RandomInput(fp8_e4m3, shape, seed + 1, 2.0));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["V"],
                           RandomInput(fp8_e4m3, shape, seed + 2));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["descale_q"],
                           Descales(c.B, c.H, seed + 3, 1.0));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["descale_k"],
                           Descales(c.B, c.H, seed + 4, 1.0));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["descale_v"],
                           Descales(c.B, c.H, seed + 5, 0.5));
  w.tensors["Vt"] = Zeros(fp8_e4m3, {c.B, c.H, c.D, VtKeys(c.S)});
  w.tensors["O"] = Zeros(bf16, shape);
  w.steps.push_back({.program = transpose, .args = {"V", "Vt"}});
  w.steps.push_back(
      {.program = attention,
       .args = {"Q", "K", "Vt", "descale_q", "descale_k", "descale_v", "O"}});
  w.main_step = 1;
  w.outputs = {"O"};
  w.flops = 4.0 * c.B * c.H * double(c.S) * c.S * c.D * (c.causal ? 0.5 : 1);
  // Q, K, V once (and V^T written and read), O in bf16.
  const double elements = NumElements(shape);
  w.bytes = 5.0 * elements + 2.0 * elements;
  w.label = {.kernel = "flash_attention",
             .pass = "fwd",
             .variant = c.causal ? "causal" : "full",
             .dtype = "fp8_e4m3",
             .shape = {{"B", c.B}, {"S", c.S}, {"H", c.H}, {"D", c.D}},
             .size = absl::StrCat("B", c.B, " S", c.S, " H", c.H, " D", c.D)};
  const bool causal = c.causal;
  w.reference =
      [causal](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    const auto& t = w.tensors;
    HostTensor ref = ReferenceFp8Attention(
        t.at("Q"), t.at("K"), t.at("V"), t.at("descale_q"), t.at("descale_k"),
        t.at("descale_v"), causal, /*round_p=*/false);
    // P in e4m3 moves each output by a few % of max |V| where few keys
    // dominate: the tolerance is twice what rounding P (at the final row
    // max) moves the reference by, plus bf16's rounding (rtol). A wrong
    // key, mask or scale moves outputs by a large part of themselves.
    const std::vector<double> exact = ref.to_doubles();
    const std::vector<double> rounded =
        ReferenceFp8Attention(t.at("Q"), t.at("K"), t.at("V"),
                              t.at("descale_q"), t.at("descale_k"),
                              t.at("descale_v"), causal, /*round_p=*/true)
            .to_doubles();
    double p_error = 0;
    for (size_t e = 0; e < exact.size(); ++e)
      p_error = std::max(p_error, std::abs(exact[e] - rounded[e]));
    return std::vector<Expected>{
        {"O", std::move(ref), 1e-2, 2 * p_error + 1e-3}};
  };
  return w;
}

}  // namespace tessel::samples
