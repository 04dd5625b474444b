#include "samples/mla_decode.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "samples/decode_attention.h"
#include "samples/sample_util.h"
#include "samples/status_macros.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

namespace T = tessel;

constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;
constexpr double kSentinel = 3.0;  // O before the kernel

absl::Status CheckMlaConfig(const MlaDecodeConfig& c) {
  const std::string k = "mla_decode";
  if (c.B <= 0 || c.H <= 0 || c.d_qk <= 0 || c.d_v <= 0 || c.page_size <= 0 ||
      c.max_pages <= 0 || c.block_h <= 0 || c.block_n <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(k, ": sizes and tiles must be positive"));
  }
  if (c.d_v > c.d_qk || c.d_qk % 16 != 0 || c.d_v % 16 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(k, ": d_v=", c.d_v, " must be at most d_qk=", c.d_qk,
                     ", both multiples of 16"));
  }
  if (c.H % c.block_h != 0 || c.block_h % 16 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(k, ": block_h=", c.block_h,
                                                   " must divide H=", c.H,
                                                   " and be a multiple of 16"));
  }
  const int P = c.page_size, bn = c.block_n;
  if (bn % 16 != 0 || (bn % P != 0 && P % bn != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        k, ": block_n=", bn, " must be a multiple of 16 and a multiple or ",
        "a divisor of page_size=", P));
  }
  if (c.dtype != bf16 && c.dtype != f16) {
    return absl::InvalidArgumentError(absl::StrCat(
        k, ": dtype ", DtypeName(c.dtype), " must be bf16 or f16"));
  }
  if (c.v_split <= 0 || c.d_v % (16 * c.v_split) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(k, ": v_split=", c.v_split,
                                                   " must divide d_v=", c.d_v,
                                                   " into multiples of 16"));
  }
  if (c.splits <= 0 || c.splits > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat(k, ": splits=", c.splits, " must be in [1, 1024]"));
  }
  if (c.threads <= 0 || c.threads % 128 != 0 || c.B > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat(k, ": threads must be whole warpgroups, B at most 65535"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Program> MakeMlaDecode(const nlohmann::json& json) {
  KernelParams params(json);
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  MlaDecodeConfig c;
  SAMPLES_ASSIGN_OR_RETURN(c.B, params.IntInRange("B", 1, 65535));
  SAMPLES_ASSIGN_OR_RETURN(c.H, params.IntInRange("H", 1, 1024, c.H));
  SAMPLES_ASSIGN_OR_RETURN(c.d_qk, params.IntInRange("d_qk", 16, 1024, c.d_qk));
  SAMPLES_ASSIGN_OR_RETURN(c.d_v, params.IntInRange("d_v", 16, 1024, c.d_v));
  SAMPLES_ASSIGN_OR_RETURN(
      c.page_size, params.IntInRange("page_size", 1, 1024, c.page_size));
  SAMPLES_ASSIGN_OR_RETURN(c.max_pages,
                           params.IntInRange("max_pages", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.dtype, params.Dtype("dtype", c.dtype));
  SAMPLES_ASSIGN_OR_RETURN(c.block_h,
                           params.IntInRange("block_h", 16, 256, c.block_h));
  SAMPLES_ASSIGN_OR_RETURN(c.block_n,
                           params.IntInRange("block_n", 16, 256, c.block_n));
  SAMPLES_ASSIGN_OR_RETURN(c.num_stages,
                           params.IntInRange("num_stages", 0, 8, c.num_stages));
  SAMPLES_ASSIGN_OR_RETURN(c.threads,
                           params.IntInRange("threads", 128, 1024, c.threads));
  SAMPLES_ASSIGN_OR_RETURN(c.v_split,
                           params.IntInRange("v_split", 1, 16, c.v_split));
  SAMPLES_ASSIGN_OR_RETURN(c.splits,
                           params.IntInRange("splits", 1, 1024, c.splits));
  SAMPLES_RETURN_IF_ERROR(params.CheckAllUsed());
  return MlaDecodeProgram(c);
}

}  // namespace

absl::StatusOr<Program> MlaDecodeProgram(const MlaDecodeConfig& c) {
  SAMPLES_RETURN_IF_ERROR(CheckMlaConfig(c));
  const int bh = c.block_h, bn = c.block_n, P = c.page_size;
  const double scale = kLog2e / std::sqrt(static_cast<double>(c.d_qk));
  T::ProgramBuilder p(c.dtype == bf16 ? "mla_decode" : "mla_decode_f16");
  T::Expr cache_rows = p.dim("cache_rows");  // num_pages * page_size
  auto Q = p.tensor("Q", {c.B, c.H, c.d_qk}, c.dtype);
  auto KV = p.tensor("KV_cache", {cache_rows, c.d_qk}, c.dtype);
  auto table = p.tensor("block_table", {c.B, c.max_pages}, i32);
  auto lens = p.tensor("seq_lens", {c.B}, i32);
  const int S = c.splits, head_blocks = c.H / bh;
  std::optional<T::Buffer> O, O_partial, LSE_partial;
  if (S == 1) {
    O = p.tensor("O", {c.B, c.H, c.d_v}, c.dtype);
  } else {
    O_partial = p.tensor("O_partial", {c.B, head_blocks, S, bh, c.d_v}, T::f32);
    LSE_partial = p.tensor("LSE_partial", {c.B, head_blocks, bh, S}, T::f32);
  }
  const int dv = c.d_v / c.v_split;  // O columns of one block
  // The kernel's body, for a grid (v_split * head blocks, B) or, split,
  // (splits, v_split * head blocks, B).
  auto body = [&](const T::Expr& split, const T::Expr& block,
                  const T::Expr& b) {
    const bool split_v = c.v_split > 1;
    const T::Expr head_block = split_v ? block / c.v_split : block;
    const T::Expr part = split_v ? block % c.v_split : T::Expr(0);
    const T::Expr len = T::let(lens(b), "len");  // read once per block
    const T::Expr pages = T::let(T::ceildiv(len, P), "pages");
    // This split's steps of bn keys: [first, first + count).
    const T::Expr steps = T::ceildiv(len, bn);
    const T::Expr per_split =
        S == 1 ? steps : T::let(T::ceildiv(steps, S), "per_split");
    const T::Expr first =
        S == 1 ? T::Expr(0) : T::let(split * per_split, "first");
    const T::Expr count =
        S == 1 ? steps
               : T::let(T::max(T::min(steps - first, per_split), 0), "count");
    auto Q_shared = T::alloc_shared({bh, c.d_qk}, c.dtype, "Q_shared");
    auto KV_shared = T::alloc_shared({bn, c.d_qk}, c.dtype, "KV_shared");
    // One warpgroup (128 threads): each warp owns whole rows of the
    // scores, so P stays in registers (the A operand of P V) and the row
    // statistics in fragments. Over more warps P goes through shared
    // memory: with 64 rows over 8 warps no warp owns whole rows.
    const bool one_group = c.threads == 128;
    auto alloc = [&](T::Shape shape, DataType t, const char* name) {
      return one_group ? T::alloc_fragment(std::move(shape), t, name)
                       : T::alloc_shared(std::move(shape), t, name);
    };
    auto P_tile = alloc({bh, bn}, c.dtype, one_group ? "P_frag" : "P_shared");
    auto acc_s = T::alloc_fragment({bh, bn}, f32, "acc_s");
    auto acc_o = T::alloc_fragment({bh, dv}, f32, "acc_o");
    auto row_max = T::alloc_fragment({bh}, f32, "row_max");
    // Over more than one warpgroup the row statistics the rescale loops
    // read stay in shared memory: the reduce's rows and the accumulator's
    // rows sit on different threads (layout inference would refuse them).
    auto prev_max = alloc({bh}, f32, "prev_max");
    auto rescale = alloc({bh}, f32, "rescale");
    auto row_sum = T::alloc_fragment({bh}, f32, "row_sum");
    auto denom = T::alloc_fragment({bh}, f32, "denom");
    const T::Expr neg_inf = -T::infinity(f32);
    auto finite = [&](const T::Expr& m) {
      return T::select(m == neg_inf, T::Expr(0.0f), m);
    };
    T::copy(Q(b, head_block * bh, 0), Q_shared);
    T::fill(acc_o, 0);
    T::fill(denom, 0);
    T::fill(row_max, neg_inf);
    for (auto k :
         T::Pipelined(count, {.num_stages = c.num_stages, .name = "k"})) {
      const T::Expr key0 = S == 1 ? k * bn : (first + k) * bn;
      // The step's rows of the cache, page by page (decode_attention.cc's
      // gather: pages past the last one read as it and masked).
      auto row_of = [&](const T::Expr& logical) {
        return T::let(table(b, T::max(T::min(logical, pages - 1), 0)) * P,
                      "row");
      };
      if (P <= bn) {
        for (int j = 0; j < bn / P; ++j) {
          const T::Expr row = row_of(key0 / P + j);
          T::copy(KV(T::slice(row, row + P), T::all),
                  KV_shared(T::slice(j * P, (j + 1) * P), T::all));
        }
      } else {
        const T::Expr row = row_of(key0 / P) + key0 % P;
        T::copy(KV(T::slice(row, row + bn), T::all), KV_shared);
      }
      T::gemm(Q_shared, KV_shared, acc_s,
              {.transpose_B = true,
               .clear_accum = true,
               .policy = T::GemmWarpPolicy::kFullRow});
      for (auto [i, j] : T::Parallel(bh, bn)) {
        acc_s(i, j) = T::select(
            key0 + j < len, acc_s(i, j) * static_cast<float>(scale), neg_inf);
      }
      T::copy(row_max, prev_max);
      T::reduce_max(acc_s, row_max, {.dim = 1, .clear = false});
      for (auto i : T::Parallel(bh)) {
        rescale(i) = T::exp2(prev_max(i) - finite(row_max(i)));
      }
      for (auto [i, d] : T::Parallel(bh, dv)) acc_o(i, d) *= rescale(i);
      for (auto [i, j] : T::Parallel(bh, bn)) {
        acc_s(i, j) = T::exp2(acc_s(i, j) - finite(row_max(i)));
      }
      T::reduce_sum(acc_s, row_sum, {.dim = 1});
      for (auto i : T::Parallel(bh)) {
        denom(i) = denom(i) * rescale(i) + row_sum(i);
      }
      T::copy(acc_s, P_tile);
      // V: the latent's first d_v columns of the same rows (this block's
      // part of them; a constant slice per part, for the wgmma descriptor).
      auto pv = [&](int j) {
        T::gemm(P_tile, KV_shared(T::all, T::slice(j * dv, (j + 1) * dv)),
                acc_o, {.policy = T::GemmWarpPolicy::kFullRow});
      };
      if (!split_v) pv(0);
      for (int j = 0; split_v && j < c.v_split; ++j)
        T::If(part == j, [&] { pv(j); });
    }
    for (auto i : T::Parallel(bh)) {
      row_sum(i) = T::select(denom(i) > 0, 1.0f / denom(i), T::Expr(0.0f));
    }
    for (auto [i, d] : T::Parallel(bh, dv)) acc_o(i, d) *= row_sum(i);
    if (S == 1) {
      T::copy(acc_o,
              (*O)(b, head_block * bh, split_v ? part * dv : T::Expr(0)));
    } else {
      T::copy(acc_o, (*O_partial)(b, head_block, split, 0, part * dv));
      // The log-sum-exp (natural log) of each row's scores; -inf where the
      // split saw no key. The v_split blocks agree: the first writes it.
      // The max is read from prev_max (shared over two warpgroups, where
      // denom's and row_max's rows sit on different threads).
      T::copy(row_max, prev_max);
      T::If(part == 0, [&] {
        for (auto i : T::Parallel(bh)) {
          (*LSE_partial)(b, head_block, i, split) = T::select(
              denom(i) > 0,
              (T::log2(denom(i)) + prev_max(i)) * static_cast<float>(kLn2),
              neg_inf);
        }
      });
    }
  };
  // The blocks of one head block and sequence side by side (their key
  // tiles then meet in L2).
  if (S == 1) {
    T::Kernel kernel(c.v_split * head_blocks, c.B, {.threads = c.threads});
    auto [block, b] = kernel.block_index();
    body(T::Expr(0), block, b);
  } else {
    T::Kernel kernel(S, c.v_split * head_blocks, c.B, {.threads = c.threads});
    auto [split, block, b] = kernel.block_index();
    body(split, block, b);
  }
  return p.finish();
}

absl::StatusOr<Program> MlaDecodeCombineProgram(const MlaDecodeConfig& c) {
  SAMPLES_RETURN_IF_ERROR(CheckMlaConfig(c));
  // decode_attention's combine: the head blocks as its kv heads, each of
  // block_h query rows, d_v columns.
  return DecodeCombineProgram({.B = c.B,
                               .H = c.H,
                               .heads_kv = c.H / c.block_h,
                               .D = c.d_v,
                               .page_size = c.page_size,
                               .max_pages = c.max_pages,
                               .splits = c.splits,
                               .dtype = c.dtype,
                               .kv_dtype = c.dtype});
}

absl::StatusOr<Workload> MlaDecodeWorkload(MlaDecodeConfig c,
                                           const std::vector<int>& lens,
                                           uint64_t seed) {
  if (lens.empty() || c.page_size <= 0) {
    return absl::InvalidArgumentError("mla_decode: no sequences");
  }
  const int P = c.page_size;
  c.B = static_cast<int>(lens.size());
  const int longest = *std::max_element(lens.begin(), lens.end());
  c.max_pages = std::max({c.max_pages, (longest + P - 1) / P, 1});
  SAMPLES_ASSIGN_OR_RETURN(Program program, MlaDecodeProgram(c));
  int64_t used = 0, keys = 0;
  for (int len : lens) used += (len + P - 1) / P, keys += len;
  const int64_t num_pages = used + 1;
  std::vector<int64_t> order(num_pages);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
  HostTensor table(i32, {c.B, c.max_pages}), seq_lens(i32, {c.B});
  table.fill(-1);
  int64_t next = 0;
  for (int b = 0; b < c.B; ++b) {
    seq_lens.set_flat_int(b, lens[b]);
    for (int p = 0; p < (lens[b] + P - 1) / P; ++p)
      table.set_flat_int(int64_t(b) * c.max_pages + p, order[next++]);
  }
  Workload w;
  w.kernel = "mla_decode";
  w.shape =
      absl::StrCat("B=", c.B, " L<=", longest, " H=", c.H, " d_qk=", c.d_qk,
                   " d_v=", c.d_v, " page=", P, " ", DtypeName(c.dtype));
  const std::vector<int64_t> q_shape = {c.B, c.H, c.d_qk};
  const std::vector<int64_t> o_shape = {c.B, c.H, c.d_v};
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["Q"], RandomInput(c.dtype, q_shape, seed));
  SAMPLES_ASSIGN_OR_RETURN(
      w.tensors["KV_cache"],
      RandomInput(c.dtype, {num_pages, P, c.d_qk}, seed + 1));
  w.tensors["block_table"] = std::move(table);
  w.tensors["seq_lens"] = std::move(seq_lens);
  SAMPLES_ASSIGN_OR_RETURN(
      w.tensors["O"],
      HostTensor::FromDoubles(
          c.dtype, o_shape,
          std::vector<double>(NumElements(o_shape), kSentinel)));
  Step step{.program = program,
            .args = {"Q", Arg("KV_cache", {num_pages * P, c.d_qk}),
                     "block_table", "seq_lens"}};
  if (c.splits == 1) {
    step.args.push_back("O");
    w.steps.push_back(std::move(step));
  } else {
    // The workspace starts as the sentinel: every element is written (-inf
    // / 0 where a split saw no key) before the combine reads it.
    const int64_t head_blocks = c.H / c.block_h;
    const std::vector<int64_t> o_part = {c.B, head_blocks, c.splits, c.block_h,
                                         c.d_v};
    const std::vector<int64_t> lse_part = {c.B, head_blocks, c.block_h,
                                           c.splits};
    for (const auto& [name, shape] :
         {std::pair{"O_partial", o_part}, std::pair{"LSE_partial", lse_part}}) {
      SAMPLES_ASSIGN_OR_RETURN(
          w.tensors[name],
          HostTensor::FromDoubles(
              f32, shape, std::vector<double>(NumElements(shape), kSentinel)));
    }
    step.args.push_back("O_partial");
    step.args.push_back("LSE_partial");
    w.steps.push_back(std::move(step));
    SAMPLES_ASSIGN_OR_RETURN(Program combine, MlaDecodeCombineProgram(c));
    w.steps.push_back(
        {.program = combine,
         .args = {"O_partial", "LSE_partial", Arg("O", {c.B, 1, c.H, c.d_v})}});
  }
  w.outputs = {"O"};
  w.bytes = double(keys) * c.d_qk * dtype_bytes(c.dtype);  // rows read once
  w.label = BenchLabel{.kernel = "mla_decode",
                       .dtype = DtypeName(c.dtype),
                       .shape = {{"B", c.B}, {"L", longest}, {"H", c.H}},
                       .size = absl::StrCat("B", c.B, " L", longest, " H", c.H),
                       .flops = 2.0 * keys * c.H * (c.d_qk + c.d_v)};
  w.reference = [](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    const HostTensor& q = w.tensors.at("Q");
    const HostTensor& kv = w.tensors.at("KV_cache");
    const HostTensor& table = w.tensors.at("block_table");
    const HostTensor& lens = w.tensors.at("seq_lens");
    const int64_t B = q.shape()[0], H = q.shape()[1], Dqk = q.shape()[2];
    const int64_t P = kv.shape()[1], max_pages = table.shape()[1];
    const int64_t Dv = w.tensors.at("O").shape()[2];
    const std::vector<double> qv = q.to_doubles(), cv = kv.to_doubles();
    std::vector<double> out(B * H * Dv, 0.0);
    ParallelFor(B * H, [&](int64_t idx) {
      const int64_t b = idx / H, len = lens.get_flat_int(b);
      if (len <= 0) return;
      auto row = [&](int64_t key) {
        return (table.get_flat_int(b * max_pages + key / P) * P + key % P) *
               Dqk;
      };
      std::vector<double> s(len);
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < len; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < Dqk; ++e)
          dot += qv[idx * Dqk + e] * cv[row(j) + e];
        s[j] = dot / std::sqrt(static_cast<double>(Dqk));
        m = std::max(m, s[j]);
      }
      double sum = 0;
      for (double& x : s) sum += (x = std::exp(x - m));
      for (int64_t j = 0; j < len; ++j)
        for (int64_t e = 0; e < Dv; ++e)
          out[idx * Dv + e] += s[j] / sum * cv[row(j) + e];
    });
    return std::vector<Expected>{
        {"O", F64Tensor(w.tensors.at("O").shape(), std::move(out)), 1e-2,
         1e-2}};
  };
  return w;
}

TESSEL_REGISTER_KERNEL(mla_decode, MakeMlaDecode);

}  // namespace tessel::samples
