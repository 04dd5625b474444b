#include "samples/decode_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "samples/sample_util.h"
#include "samples/status_macros.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

namespace T = tessel;

constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;

// Without num_stages, as many stages (3 down to 1) as the target's shared
// memory holds: 3 at D128 f16 take 112 KB, more than the 99 KB of sm_86,
// sm_89 and sm_120.
absl::StatusOr<Program> MakeDecodeAttention(const nlohmann::json& json,
                                            const Target& target) {
  SAMPLES_ASSIGN_OR_RETURN(DecodeAttentionConfig c,
                           DecodeAttentionConfigFromJson(json));
  if (json.contains("num_stages")) return DecodeAttentionProgram(c);
  for (;; --c.num_stages) {
    SAMPLES_ASSIGN_OR_RETURN(Program p, DecodeAttentionProgram(c));
    if (c.num_stages <= 1 || CheckSharedMemoryFits(p, target).ok()) return p;
  }
}

absl::StatusOr<Program> MakeDecodeCombine(const nlohmann::json& json) {
  SAMPLES_ASSIGN_OR_RETURN(DecodeAttentionConfig c,
                           DecodeAttentionConfigFromJson(json));
  return DecodeCombineProgram(c);
}

// Copies keys [key0, key0 + block_n) of a sequence (its block table row
// b, `pages` pages in use) for kv head `kv_head` into `tile`: one copy per
// page at pages no larger than the step, else the step's part of its page.
// The cache is seen flat, [num_pages * page_size, Hkv, D]: the copies' rows
// are then bounded one by one (cp.async with zero fill), where a page index
// of its own dimension would guard each copy whole (a synchronous copy). A
// page past the sequence's last one (the step's tail) is read as that last
// page: its keys are masked, and unused block-table entries need hold no
// valid page.
void GatherKeys(const Buffer& cache, const Buffer& table, const Expr& b,
                const Expr& pages, const Expr& key0, const Expr& kv_head,
                const Buffer& tile, const DecodeAttentionConfig& c) {
  const int P = c.page_size, bn = c.block_n;
  // The page's first row, looked up once per page and step.
  auto row_of = [&](const Expr& logical) {
    return T::let(table(b, T::max(T::min(logical, pages - 1), 0)) * P, "row");
  };
  if (P <= bn) {
    for (int j = 0; j < bn / P; ++j) {
      const Expr row = row_of(key0 / P + j);
      T::copy(cache(T::slice(row, row + P), kv_head, T::all),
              tile(T::slice(j * P, (j + 1) * P), T::all));
    }
  } else {
    const Expr row = row_of(key0 / P) + key0 % P;
    T::copy(cache(T::slice(row, row + bn), kv_head, T::all), tile);
  }
}

}  // namespace

int DecodeKvHeads(const DecodeAttentionConfig& c) {
  return c.heads_kv == 0 ? c.H : c.heads_kv;
}

int DecodeRows(const DecodeAttentionConfig& c) {
  return c.q_len * (c.H / std::max(DecodeKvHeads(c), 1));
}

int DecodeBlockM(const DecodeAttentionConfig& c) {
  if (c.block_m > 0) return c.block_m;
  // Below 64 rows the scheduler pads the gemms itself (one m16 tile a warp,
  // wgmma on sm_90a); the tiles keep the group's real rows.
  const int rows = DecodeRows(c);
  return rows < 64 ? rows : (rows + 63) / 64 * 64;
}

int DecodeSplits(const DecodeAttentionConfig& c, int sms, int blocks_per_sm) {
  const int64_t blocks = int64_t{c.B} * DecodeKvHeads(c);
  const int64_t slots = int64_t{std::max(sms, 1)} * std::max(blocks_per_sm, 1);
  const int steps =
      std::max(1, (c.max_pages * c.page_size + c.block_n - 1) / c.block_n);
  const int most = std::min(steps, 64);
  // A block's fixed cost, in steps: filling and draining its pipeline,
  // writing its partial rows for the combine.
  constexpr int kBlockSteps = 2;
  int best = 1;
  int64_t best_steps = std::numeric_limits<int64_t>::max();
  for (int s = 1; s <= most; ++s) {
    const int64_t waves = (blocks * s + slots - 1) / slots;
    const int64_t busiest = waves * ((steps + s - 1) / s + kBlockSteps);
    if (busiest < best_steps) best = s, best_steps = busiest;
  }
  return best;
}

absl::Status CheckDecodeAttentionConfig(const DecodeAttentionConfig& c) {
  const std::string k = "decode_attention";
  if (c.B <= 0 || c.q_len <= 0 || c.H <= 0 || c.D <= 0 || c.page_size <= 0 ||
      c.max_pages <= 0 || c.splits <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        k,
        ": B, q_len, H, D, page_size, max_pages and splits must be positive"));
  }
  if (c.heads_kv < 0 || (c.heads_kv > 0 && c.H % c.heads_kv != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        k, ": heads_kv=", c.heads_kv, " must divide H=", c.H, " (0 means H)"));
  }
  if (c.D % 16 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(k, ": D=", c.D, " must be a multiple of 16"));
  }
  const int P = c.page_size, bn = c.block_n;
  if (bn <= 0 || bn % 16 != 0 || (bn % P != 0 && P % bn != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        k, ": block_n=", bn, " must be a multiple of 16 and a multiple or ",
        "a divisor of page_size=", P));
  }
  if (c.dtype != f16 && c.dtype != bf16) {
    return absl::InvalidArgumentError(absl::StrCat(
        k, ": dtype ", DtypeName(c.dtype), " (Q, O) must be f16 or bf16"));
  }
  if (c.kv_dtype != c.dtype && c.kv_dtype != fp8_e4m3) {
    return absl::InvalidArgumentError(
        absl::StrCat(k, ": kv_dtype ", DtypeName(c.kv_dtype),
                     " must be the dtype of Q or fp8_e4m3"));
  }
  const int bm = DecodeBlockM(c);
  if (bm < DecodeRows(c) || (bm != DecodeRows(c) && bm % 16 != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        k, ": block_m=", bm, " must hold the ", DecodeRows(c),
        " query rows (q_len * H / heads_kv): those rows, or a multiple of 16"));
  }
  if (c.threads <= 0 || c.threads % 32 != 0 || c.num_stages < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(k, ": threads must be a positive multiple of 32"));
  }
  if (c.B > 65535 || DecodeKvHeads(c) > 65535 || c.splits > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat(k, ": B, heads_kv and splits must fit the grid (65535)"));
  }
  return absl::OkStatus();
}

std::string DecodeAttentionName(const DecodeAttentionConfig& c) {
  const int Hkv = DecodeKvHeads(c);
  const char* heads = Hkv == c.H ? "" : (Hkv == 1 ? "_mqa" : "_gqa");
  return absl::StrCat("decode_attention", heads, c.dtype == bf16 ? "_bf16" : "",
                      c.kv_dtype == fp8_e4m3 ? "_fp8kv" : "",
                      c.q_len > 1 ? absl::StrCat("_q", c.q_len) : "",
                      c.splits > 1 ? "_split" : "");
}

absl::StatusOr<Program> DecodeAttentionProgram(const DecodeAttentionConfig& c) {
  SAMPLES_RETURN_IF_ERROR(CheckDecodeAttentionConfig(c));
  const int Hkv = DecodeKvHeads(c), group = c.H / Hkv, rows = DecodeRows(c);
  const int bm = DecodeBlockM(c), bn = c.block_n, D = c.D, S = c.splits;
  const bool fp8 = c.kv_dtype == fp8_e4m3;
  // exp(x / sqrt(D)) = exp2(x * scale): scores are kept in log2 units.
  const double scale = kLog2e / std::sqrt(static_cast<double>(D));
  T::ProgramBuilder p(DecodeAttentionName(c));
  T::Expr cache_rows = p.dim("cache_rows");  // num_pages * page_size
  auto Q = p.tensor("Q", {c.B, c.q_len, c.H, D}, c.dtype);
  auto K = p.tensor("K_cache", {cache_rows, Hkv, D}, c.kv_dtype);
  auto V = p.tensor("V_cache", {cache_rows, Hkv, D}, c.kv_dtype);
  auto table = p.tensor("block_table", {c.B, c.max_pages}, i32);
  auto lens = p.tensor("seq_lens", {c.B}, i32);
  std::optional<T::Buffer> kv_scale;
  if (fp8) kv_scale = p.tensor("kv_scale", {2}, f32);
  std::optional<T::Buffer> O, O_partial, LSE_partial;
  if (S == 1) {
    O = p.tensor("O", {c.B, c.q_len, c.H, D}, c.dtype);
  } else {
    O_partial = p.tensor("O_partial", {c.B, Hkv, S, rows, D}, f32);
    LSE_partial = p.tensor("LSE_partial", {c.B, Hkv, rows, S}, f32);
  }
  {
    T::Kernel kernel(S, Hkv, c.B, {.threads = c.threads});
    auto [split, kv_head, b] = kernel.block_index();
    // The sequence's length, its pages and steps; this split's steps, an
    // equal share of the sequence's (none for a short sequence's last
    // splits).
    // Read once per block (block-uniform lets).
    const T::Expr len = T::let(lens(b), "len");
    const T::Expr pages = T::let(T::ceildiv(len, c.page_size), "pages");
    const T::Expr steps = T::let(T::ceildiv(len, bn), "steps");
    const T::Expr per_split =
        S == 1 ? steps : T::let(T::ceildiv(steps, S), "per_split");
    const T::Expr first = T::let(split * per_split, "first");
    const T::Expr count =
        S == 1 ? steps
               : T::let(T::max(T::min(steps - first, per_split), 0), "count");
    // Row i of the tiles: query token i / group of head kv_head * group +
    // i % group; rows from `rows` on are padding (zero queries).
    auto token = [&](const T::Expr& i) {
      return T::min(i / group, c.q_len - 1);
    };
    auto head = [&](const T::Expr& i) { return kv_head * group + i % group; };

    auto Q_shared = T::alloc_shared({bm, D}, c.dtype, "Q_shared");
    auto K_shared = T::alloc_shared({bn, D}, c.dtype, "K_shared");
    auto V_shared = T::alloc_shared({bn, D}, c.dtype, "V_shared");
    std::optional<T::Buffer> K_fp8, V_fp8;
    if (fp8) {
      K_fp8 = T::alloc_shared({bn, D}, fp8_e4m3, "K_fp8");
      V_fp8 = T::alloc_shared({bn, D}, fp8_e4m3, "V_fp8");
    }
    auto acc_s = T::alloc_fragment({bm, bn}, f32, "acc_s");
    auto p_cast = T::alloc_fragment({bm, bn}, c.dtype, "p_cast");
    auto acc_o = T::alloc_fragment({bm, D}, f32, "acc_o");
    auto row_max = T::alloc_fragment({bm}, f32, "row_max");
    auto prev_max = T::alloc_fragment({bm}, f32, "prev_max");
    auto rescale = T::alloc_fragment({bm}, f32, "rescale");
    auto row_sum = T::alloc_fragment({bm}, f32, "row_sum");
    auto denom = T::alloc_fragment({bm}, f32, "denom");
    const T::Expr neg_inf = -T::infinity(f32);

    for (auto [i, d] : T::Parallel(bm, D)) {
      Q_shared(i, d) = T::select(i < rows, Q(b, token(i), head(i), d),
                                 T::constant(0, c.dtype));
    }
    T::fill(acc_o, 0);
    T::fill(denom, 0);
    T::fill(row_max, neg_inf);
    // A row whose keys so far are all masked keeps the max -inf; its
    // exponentials are taken against 0 instead (no -inf - -inf).
    auto finite = [&](const T::Expr& m) {
      return T::select(m == neg_inf, T::Expr(0.0f), m);
    };
    for (auto k :
         T::Pipelined(count, {.num_stages = c.num_stages, .name = "k"})) {
      const T::Expr key0 = (first + k) * bn;
      GatherKeys(K, table, b, pages, key0, kv_head, fp8 ? *K_fp8 : K_shared, c);
      if (fp8) {
        for (auto [i, d] : T::Parallel(bn, D)) {
          K_shared(i, d) = T::cast((*K_fp8)(i, d), c.dtype);
        }
      }
      T::gemm(Q_shared, K_shared, acc_s,
              {.transpose_B = true,
               .clear_accum = true,
               .policy = T::GemmWarpPolicy::kFullRow});
      GatherKeys(V, table, b, pages, key0, kv_head, fp8 ? *V_fp8 : V_shared, c);
      if (fp8) {
        for (auto [i, d] : T::Parallel(bn, D)) {
          V_shared(i, d) = T::cast((*V_fp8)(i, d), c.dtype);
        }
      }
      // Query token t sees the keys up to its position len - q_len + t.
      const T::Expr score_scale =
          fp8 ? T::Expr((*kv_scale)(0) * static_cast<float>(scale))
              : T::Expr(static_cast<float>(scale));
      for (auto [i, j] : T::Parallel(bm, bn)) {
        T::Expr visible = key0 + j < len - c.q_len + 1 + token(i);
        acc_s(i, j) = T::select(visible, acc_s(i, j) * score_scale, neg_inf);
      }
      T::copy(row_max, prev_max);
      T::reduce_max(acc_s, row_max, {.dim = 1, .clear = false});
      for (auto i : T::Parallel(bm)) {
        rescale(i) = T::exp2(prev_max(i) - finite(row_max(i)));
      }
      for (auto [i, d] : T::Parallel(bm, D)) acc_o(i, d) *= rescale(i);
      for (auto [i, j] : T::Parallel(bm, bn)) {
        acc_s(i, j) = T::exp2(acc_s(i, j) - finite(row_max(i)));
      }
      T::reduce_sum(acc_s, row_sum, {.dim = 1});
      for (auto i : T::Parallel(bm)) {
        denom(i) = denom(i) * rescale(i) + row_sum(i);
      }
      T::copy(acc_s, p_cast);
      T::gemm(p_cast, V_shared, acc_o, {.policy = T::GemmWarpPolicy::kFullRow});
    }
    // Normalized rows; a row that saw no key is zeros.
    const T::Expr v_scale = fp8 ? T::Expr((*kv_scale)(1)) : T::Expr(1.0f);
    for (auto i : T::Parallel(bm)) {
      row_sum(i) = T::select(denom(i) > 0, v_scale / denom(i), T::Expr(0.0f));
    }
    if (S == 1) {
      for (auto [i, d] : T::Parallel(bm, D)) {
        T::If(i < rows, [&] {
          (*O)(b, token(i), head(i), d) = acc_o(i, d) * row_sum(i);
        });
      }
    } else {
      for (auto [i, d] : T::Parallel(bm, D)) {
        T::If(i < rows, [&] {
          (*O_partial)(b, kv_head, split, i, d) = acc_o(i, d) * row_sum(i);
        });
      }
      for (auto i : T::Parallel(bm)) {
        T::If(i < rows, [&] {
          (*LSE_partial)(b, kv_head, i, split) = T::select(
              denom(i) > 0, (T::log2(denom(i)) + row_max(i)) * kLn2, neg_inf);
        });
      }
    }
  }
  return p.finish();
}

absl::StatusOr<Program> DecodeCombineProgram(const DecodeAttentionConfig& c) {
  SAMPLES_RETURN_IF_ERROR(CheckDecodeAttentionConfig(c));
  if (c.splits < 2) {
    return absl::InvalidArgumentError(
        "decode_attention_combine: needs splits >= 2 (one split writes O)");
  }
  const int Hkv = DecodeKvHeads(c), group = c.H / Hkv, rows = DecodeRows(c);
  const int D = c.D, S = c.splits;
  T::ProgramBuilder p("decode_attention_combine");
  auto O_partial = p.tensor("O_partial", {c.B, Hkv, S, rows, D}, f32);
  auto LSE_partial = p.tensor("LSE_partial", {c.B, Hkv, rows, S}, f32);
  auto O = p.tensor("O", {c.B, c.q_len, c.H, D}, c.dtype);
  {
    // One block per query row (a split-KV launch has few sequences: one
    // block per kv head left most SMs idle); a thread sums 4 columns (one
    // 16-byte load a split) over a chunk of splits whose loads are all in
    // flight at once.
    const int threads = std::clamp((D / 4 + 31) / 32 * 32, 32, 128);
    T::Kernel kernel(rows, Hkv, c.B, {.threads = threads});
    auto [i, kv_head, b] = kernel.block_index();
    auto lse = T::alloc_fragment({1, S}, f32, "lse");
    auto lse_max = T::alloc_fragment({1}, f32, "lse_max");
    auto total = T::alloc_fragment({1}, f32, "total");
    auto weight = T::alloc_shared({S}, f32, "weight");
    auto acc = T::alloc_fragment({D}, f32, "acc");
    const T::Expr neg_inf = -T::infinity(f32);
    T::copy(LSE_partial(b, kv_head, i, 0), lse);
    T::reduce_max(lse, lse_max, {.dim = 1});
    // Splits that saw no key have -inf; a row no split saw is zeros.
    for (auto [r, s] : T::Parallel(1, S)) {
      lse(r, s) = T::select(lse_max(r) == neg_inf, T::Expr(0.0f),
                            T::exp(lse(r, s) - lse_max(r)));
    }
    T::reduce_sum(lse, total, {.dim = 1});
    for (auto [r, s] : T::Parallel(1, S)) {
      weight(s) = T::select(total(r) > 0, lse(r, s) / total(r), T::Expr(0.0f));
    }
    T::clear(acc);
    // Up to 16 splits a chunk: 16 independent loads a thread per step.
    const int chunk = std::min(S, 16), chunks = (S + chunk - 1) / chunk;
    for (auto n : T::Serial(chunks, {.name = "chunk"})) {
      for (auto d : T::Parallel(D)) {
        T::Expr sum = acc(d);
        for (int j = 0; j < chunk; ++j) {
          const T::Expr s = n * chunk + j;
          if (S % chunk == 0) {
            sum = sum + weight(s) * O_partial(b, kv_head, s, i, d);
          } else {
            // The last chunk's splits past S: clamped, weighted 0.
            const T::Expr in = T::min(s, S - 1);
            sum = sum + T::select(s < S, weight(in), T::Expr(0.0f)) *
                            O_partial(b, kv_head, in, i, d);
          }
        }
        acc(d) = sum;
      }
    }
    for (auto d : T::Parallel(D)) {
      O(b, i / group, kv_head * group + i % group, d) = acc(d);
    }
  }
  return p.finish();
}

absl::StatusOr<DecodeAttentionConfig> DecodeAttentionConfigFromJson(
    const nlohmann::json& json) {
  KernelParams params(json);
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  DecodeAttentionConfig c;
  SAMPLES_ASSIGN_OR_RETURN(c.B, params.IntInRange("B", 1, 65535));
  SAMPLES_ASSIGN_OR_RETURN(c.q_len, params.IntInRange("q_len", 1, 16, 1));
  SAMPLES_ASSIGN_OR_RETURN(c.H, params.IntInRange("H", 1, 1024));
  SAMPLES_ASSIGN_OR_RETURN(c.heads_kv,
                           params.IntInRange("heads_kv", 0, 1024, 0));
  SAMPLES_ASSIGN_OR_RETURN(c.D, params.IntInRange("D", 16, 512));
  SAMPLES_ASSIGN_OR_RETURN(
      c.page_size, params.IntInRange("page_size", 1, 1024, c.page_size));
  SAMPLES_ASSIGN_OR_RETURN(c.max_pages,
                           params.IntInRange("max_pages", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.splits, params.IntInRange("splits", 1, 1024, 1));
  SAMPLES_ASSIGN_OR_RETURN(c.dtype, params.Dtype("dtype", f16));
  SAMPLES_ASSIGN_OR_RETURN(c.kv_dtype, params.Dtype("kv_dtype", c.dtype));
  SAMPLES_ASSIGN_OR_RETURN(c.block_n,
                           params.IntInRange("block_n", 16, 256, c.block_n));
  SAMPLES_ASSIGN_OR_RETURN(c.block_m, params.IntInRange("block_m", 0, 256, 0));
  SAMPLES_ASSIGN_OR_RETURN(c.num_stages,
                           params.IntInRange("num_stages", 0, 8, c.num_stages));
  SAMPLES_ASSIGN_OR_RETURN(c.threads,
                           params.IntInRange("threads", 32, 1024, c.threads));
  SAMPLES_RETURN_IF_ERROR(params.CheckAllUsed());
  return c;
}

TESSEL_REGISTER_KERNEL(decode_attention, MakeDecodeAttention);
TESSEL_REGISTER_KERNEL(decode_attention_combine, MakeDecodeCombine);

}  // namespace tessel::samples
