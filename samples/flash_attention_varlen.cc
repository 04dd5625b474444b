#include "samples/flash_attention_varlen.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "samples/flash_attention_reference.h"
#include "samples/sample_util.h"
#include "samples/status_macros.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

namespace T = tessel;

constexpr double kLog2e = 1.4426950408889634;
// What O and LSE hold before the kernel: an element no block writes (or one
// written past a sequence's end) fails the check.
constexpr double kSentinel = 3.0;

// Without tile params, the target's tile and overlap (what the sample runs
// there), as the dense forward's factory does.
absl::StatusOr<Program> MakeFlashAttentionVarlen(const nlohmann::json& json,
                                                 const Target& target) {
  SAMPLES_ASSIGN_OR_RETURN(FlashAttentionConfig c,
                           FlashAttentionConfigFromJson(json));
  if (!json.contains("block_m") && !json.contains("block_n") &&
      !json.contains("threads") && !json.contains("num_stages")) {
    if (!json.contains("overlap")) c.overlap = DeviceOverlap(c, target.sm());
    c = WithDeviceTile(c, target.sm());
  }
  return FlashAttentionVarlenProgram(c);
}

}  // namespace

std::string FlashAttentionVarlenName(const FlashAttentionConfig& c) {
  return absl::StrCat("flash_attention_varlen", KvHeads(c) != c.H ? "_gqa" : "",
                      c.lse ? "_lse" : "", c.causal ? "_causal" : "");
}

absl::StatusOr<Program> FlashAttentionVarlenProgram(
    const FlashAttentionConfig& c) {
  SAMPLES_RETURN_IF_ERROR(
      CheckFlashAttentionConfig(c, "flash_attention_varlen"));
  if (c.align_end || c.mask_after) {
    return absl::InvalidArgumentError(
        "flash_attention_varlen: align_end and mask_after are the dense "
        "forward's options");
  }
  const int bm = c.block_m, bn = c.block_n, D = c.D;
  // exp(x / sqrt(D)) = exp2(x * scale).
  const double scale = kLog2e / std::sqrt(static_cast<double>(D));
  const int Hkv = KvHeads(c);
  T::ProgramBuilder p(FlashAttentionVarlenName(c));
  T::Expr total = p.dim("total");
  auto Q = p.tensor("Q", {total, c.H, D}, f16);
  auto K = p.tensor("K", {total, Hkv, D}, f16);
  auto V = p.tensor("V", {total, Hkv, D}, f16);
  auto cu_seqlens = p.tensor("cu_seqlens", {c.B + 1}, i32);
  auto O = p.tensor("O", {total, c.H, D}, f16);
  std::optional<T::Buffer> LSE;
  if (c.lse) LSE = p.tensor("LSE", {c.H, total}, f32);
  {
    T::Kernel kernel(T::ceildiv(c.S, bm), c.H, c.B, {.threads = c.threads});
    auto [block_x, by, bz] = kernel.block_index();
    T::Expr kv_head = Hkv == c.H ? by : by / (c.H / Hkv);
    // Sequence bz: its first token and its length (read where used: every
    // thread, the TMA producer included, sees the same values).
    T::Expr start = cu_seqlens(bz);
    T::Expr seqlen = cu_seqlens(bz + 1) - start;
    // Causal: the last query tiles have the most key blocks; run them
    // first (flash_attention.cc).
    const int q_tiles = (c.S + bm - 1) / bm;
    T::Expr bx = c.causal ? T::Expr(q_tiles - 1) - block_x : block_x;
    auto [Q_shared, K_shared, V_shared, acc_s, acc_s_cast, acc_o, scores_max,
          scores_max_prev, scores_scale, scores_sum, logsum] =
        AllocFlashBuffers(c);
    const T::Expr neg_inf = -T::infinity(f32);

    // The whole block exits when its query tile lies past the sequence's
    // end (the grid is sized for the longest sequence).
    T::If(bx * bm < seqlen, [&] {
      // Query rows past the end read the next sequence (or zeros): their
      // results are never stored.
      T::copy(Q(T::slice(start + bx * bm, start + (bx + 1) * bm), by, T::all),
              Q_shared);
      T::fill(acc_o, 0);
      T::fill(logsum, 0);
      T::fill(scores_max, neg_inf);
      T::Expr key_blocks = T::ceildiv(seqlen, bn);
      T::Expr loop_range =
          c.causal ? T::min(T::ceildiv((bx + 1) * bm, bn), key_blocks)
                   : key_blocks;
      // The forward's body, statement for statement: its order / stage
      // lists fit (FlashPipeline).
      for (auto k : T::Pipelined(loop_range, FlashPipeline(c))) {
        T::copy(
            K(T::slice(start + k * bn, start + (k + 1) * bn), kv_head, T::all),
            K_shared);
        // Keys past the sequence's end are another sequence's (or zeros):
        // full attention masks them; causal masks the keys after the query,
        // which covers them for every row that is stored (and a block that
        // holds them crosses the diagonal too).
        T::Expr crosses =
            c.causal ? (k + 1) * bn > bx * bm + 1 : (k + 1) * bn > seqlen;
        T::If(crosses, [&] {
          for (auto [i, j] : T::Parallel(bm, bn)) {
            T::Expr q_idx = bx * bm + i, k_idx = k * bn + j;
            T::Expr visible = c.causal ? q_idx >= k_idx : k_idx < seqlen;
            acc_s(i, j) = T::select(visible, T::Expr(0.0f), neg_inf);
          }
        }).Else([&] { T::clear(acc_s); });
        T::gemm(Q_shared, K_shared, acc_s,
                {.transpose_B = true, .policy = T::GemmWarpPolicy::kFullRow});
        T::copy(
            V(T::slice(start + k * bn, start + (k + 1) * bn), kv_head, T::all),
            V_shared);
        // The online softmax of flash_attention.cc. A masked key's P is 0,
        // so the other sequence's V rows add nothing.
        SoftmaxTimesV(
            acc_s, acc_s_cast, V_shared, acc_o,
            {scores_max, scores_max_prev, scores_scale, scores_sum, logsum}, bm,
            bn, D, scale);
      }
      // Only the sequence's own rows: a tile copy would clip at the
      // tensor's edge only. (The bounds on start + row keep a malformed
      // cu_seqlens inside the tensor.)
      auto stored = [&](const T::Expr& row) {
        return row < seqlen && start + row >= 0 && start + row < total;
      };
      for (auto i : T::Parallel(bm)) scores_scale(i) = 1.0f / logsum(i);
      for (auto [i, j] : T::Parallel(bm, D)) {
        T::Expr row = bx * bm + i;
        T::If(stored(row),
              [&] { O(start + row, by, j) = acc_o(i, j) * scores_scale(i); });
      }
      if (LSE) {
        const double ln_scale = 1.0 / std::sqrt(static_cast<double>(D));
        for (auto i : T::Parallel(bm)) {
          T::Expr row = bx * bm + i;
          T::If(stored(row), [&] {
            (*LSE)(by, start + row) =
                T::log(logsum(i)) + scores_max(i) * ln_scale;
          });
        }
      }
    });
  }
  return p.finish();
}

absl::StatusOr<std::vector<int>> ParseSeqlens(const std::string& text) {
  std::vector<int> out;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    int v = 0;
    if (!absl::SimpleAtoi(item, &v) || v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--varlen=", text,
                       ": expected sequence lengths (0 or more), as 1,17,300"));
    }
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> CumulativeSeqlens(
    const std::string& kernel, const std::vector<int>& seqlens, int pad) {
  if (seqlens.empty() || pad < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(kernel, ": no sequences, or negative padding"));
  }
  std::vector<int64_t> cu = {0};
  for (int s : seqlens) {
    if (s < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(kernel, ": sequence length ", s, " is negative"));
    }
    cu.push_back(cu.back() + s);
  }
  if (cu.back() + pad > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kernel, ": more tokens than int32 offsets hold"));
  }
  return cu;
}

absl::StatusOr<Workload> FlashAttentionVarlenWorkload(
    FlashAttentionConfig c, const std::vector<int>& seqlens, uint64_t seed,
    int pad) {
  SAMPLES_ASSIGN_OR_RETURN(
      const std::vector<int64_t> cu,
      CumulativeSeqlens("flash_attention_varlen", seqlens, pad));
  c.B = static_cast<int>(seqlens.size());
  c.S = *std::max_element(seqlens.begin(), seqlens.end());
  SAMPLES_ASSIGN_OR_RETURN(Program program, FlashAttentionVarlenProgram(c));
  const int Hkv = KvHeads(c);
  const int64_t total = cu.back() + pad;
  const std::vector<int64_t> shape = {total, c.H, c.D},
                             kv_shape = {total, Hkv, c.D};
  Workload w;
  w.kernel = FlashAttentionVarlenName(c);
  std::string lens;
  for (int s : seqlens) absl::StrAppend(&lens, lens.empty() ? "" : ",", s);
  w.shape = absl::StrCat(
      "seqlens=", lens, pad ? absl::StrCat("+pad", pad) : "", " H=", c.H,
      Hkv != c.H ? absl::StrCat(" Hkv=", Hkv) : "", " D=", c.D, " f16");
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["Q"], RandomInput(f16, shape, seed));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["K"],
                           RandomInput(f16, kv_shape, seed + 1));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["V"],
                           RandomInput(f16, kv_shape, seed + 2));
  HostTensor cu_t(i32, {c.B + 1});
  for (size_t b = 0; b < cu.size(); ++b) cu_t.set_flat_int(b, cu[b]);
  w.tensors["cu_seqlens"] = std::move(cu_t);
  SAMPLES_ASSIGN_OR_RETURN(
      w.tensors["O"],
      HostTensor::FromDoubles(
          f16, shape, std::vector<double>(NumElements(shape), kSentinel)));
  Step step{.program = program, .args = {"Q", "K", "V", "cu_seqlens", "O"}};
  step.pass_config.consumer_gemm_turns = c.gemm_turns;
  w.outputs = {"O"};
  if (c.lse) {
    SAMPLES_ASSIGN_OR_RETURN(
        w.tensors["LSE"],
        HostTensor::FromDoubles(f32, {c.H, total},
                                std::vector<double>(c.H * total, kSentinel)));
    step.args.push_back("LSE");
    w.outputs.push_back("LSE");
  }
  w.steps.push_back(std::move(step));
  // Q K^T and P V of each sequence; causal counts the visible half.
  double pairs = 0;
  for (int s : seqlens) pairs += double(s) * s;
  w.flops = 4.0 * c.H * pairs * c.D * (c.causal ? 0.5 : 1);
  w.bytes = 2.0 * (2 * NumElements(shape) + 2 * NumElements(kv_shape));
  w.label = FlashAttentionLabel(c, "fwd");
  w.label.variant = absl::StrCat("varlen_", c.causal ? "causal" : "full");
  w.label.shape = {{"B", c.B}, {"T", cu.back()}, {"H", c.H}};
  if (Hkv != c.H) w.label.shape.push_back({"Hkv", Hkv});
  w.label.shape.push_back({"D", c.D});
  w.label.size =
      absl::StrCat("B", c.B, " T", cu.back(), " H", c.H,
                   Hkv != c.H ? absl::StrCat(" Hkv", Hkv) : "", " D", c.D);
  const bool causal = c.causal, lse = c.lse;
  w.reference =
      [causal,
       lse](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    AttentionForward f = ReferenceVarlenAttentionForward(
        w.tensors.at("Q"), w.tensors.at("K"), w.tensors.at("V"),
        w.tensors.at("cu_seqlens"), causal, kSentinel);
    std::vector<Expected> out = {{"O", std::move(f.o), 1e-2, 1e-2}};
    if (lse) out.push_back({"LSE", std::move(f.lse), 1e-4, 1e-4});
    return out;
  };
  return w;
}

TESSEL_REGISTER_KERNEL(flash_attention_varlen, MakeFlashAttentionVarlen);

}  // namespace tessel::samples
