#include "samples/linear_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "samples/sample_util.h"
#include "samples/status_macros.h"
#include "samples/tensor_ops.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

namespace T = tessel;

absl::Status CheckConfig(const LinearAttentionConfig& c) {
  if (c.B <= 0 || c.S <= 0 || c.H <= 0 || c.DK <= 0 || c.DV <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("linear_attention: sizes must be positive, got B=", c.B,
                     " S=", c.S, " H=", c.H, " DK=", c.DK, " DV=", c.DV));
  }
  if (c.chunk <= 0 || c.block_k <= 0 || c.block_v <= 0 || c.threads <= 0) {
    return absl::InvalidArgumentError(
        "linear_attention: chunk, block_k, block_v and threads must be "
        "positive");
  }
  if (c.threads % 32 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("linear_attention: threads=", c.threads,
                     " must be a multiple of 32 (whole warps)"));
  }
  if (c.num_stages < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "linear_attention: num_stages must be >= 0, got ", c.num_stages));
  }
  if (int64_t{c.B} * c.H > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("linear_attention: B*H = ", int64_t{c.B} * c.H,
                     " exceeds the grid's z limit (65535)"));
  }
  return absl::OkStatus();
}

// The chunk loops' stage count; below 2 they run serial (a Pipelined loop's
// num_stages 0 would mean the pass's default).
int Stages(const LinearAttentionConfig& c) {
  return c.num_stages < 2 ? 1 : c.num_stages;
}

// Seeded random inputs, in [-1, -1/32] U [1/32, 1] (never zero), drawn in
// blocks of 2^20 elements with a generator each, in parallel: a bench-size
// tensor (67M elements) takes a fraction of a second where RandomInput's one
// sequential generator takes many. Made once per (dtype, shape, seed) in a
// process, so a tile sweep builds all its workloads on the same inputs.
absl::StatusOr<HostTensor> Input(DataType dtype, std::vector<int64_t> shape,
                                 uint64_t seed) {
  static std::mutex mu;
  static auto* made =
      new std::map<std::tuple<int, std::vector<int64_t>, uint64_t>,
                   HostTensor>();
  auto key = std::make_tuple(static_cast<int>(dtype), shape, seed);
  std::lock_guard<std::mutex> lock(mu);
  auto it = made->find(key);
  if (it == made->end()) {
    SAMPLES_ASSIGN_OR_RETURN(HostTensor t,
                             HostTensor::Create(dtype, std::move(shape)));
    constexpr int64_t kBlock = int64_t{1} << 20;
    const int64_t n = t.num_elements();
    ParallelFor((n + kBlock - 1) / kBlock, [&](int64_t block) {
      std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + block);
      for (int64_t i = block * kBlock; i < std::min(n, (block + 1) * kBlock);
           ++i) {
        const uint64_t bits = rng();
        const double magnitude = 1.0 / 32 + static_cast<double>(bits >> 11) *
                                                0x1.0p-53 * (31.0 / 32);
        t.set_flat(i, (bits & 1) ? -magnitude : magnitude);
      }
    });
    it = made->emplace(std::move(key), std::move(t)).first;
  }
  return it->second;
}

// A tensor full of 3 (no kernel writes it by chance: an element left
// unwritten fails the check), filled at memcpy speed.
HostTensor Sentinel(DataType dtype, std::vector<int64_t> shape) {
  HostTensor t(dtype, std::move(shape));
  if (t.num_elements() == 0) return t;
  t.set_flat(0, 3);
  std::byte* d = t.data();
  for (size_t done = dtype_bytes(dtype); done < t.num_bytes();) {
    const size_t n = std::min(done, t.num_bytes() - done);
    std::memcpy(d + done, d, n);
    done += n;
  }
  return t;
}

float Scale(const LinearAttentionConfig& c) {
  return 1.0f / std::sqrt(static_cast<float>(c.DK));
}

// Whether one block covers all of DK (forward O, backward dV: no sum over
// DK tiles) or all of DV (backward dQ, dK).
bool OneKTile(const LinearAttentionConfig& c) { return c.block_k >= c.DK; }
bool OneVTile(const LinearAttentionConfig& c) { return c.block_v >= c.DV; }

// The forward kernel; with `mbarriers`, the load stage and the compute stage
// of each chunk meet at mbarrier i % 2 (the seed's fused_chunk_kernel).
// The staged tiles q, k, v are only written by their copies (the scale is
// applied to the s and o fragments instead of to q in place), so the chunk
// loop is software-pipelined: chunk i+1 loads while chunk i computes.
// With `emit_state`, the kernel also writes its final state (sum over all
// chunks of k^T v, f32 [B*H, DK, DV]) for BackwardFromState.
absl::StatusOr<Program> Forward(const LinearAttentionConfig& c, bool mbarriers,
                                bool emit_state = false) {
  SAMPLES_RETURN_IF_ERROR(CheckConfig(c));
  const int C = c.chunk, BK = std::min(c.block_k, c.DK),
            BV = std::min(c.block_v, c.DV), H = c.H;
  constexpr int kStages = 2;
  const float scale = Scale(c);
  const bool direct = OneKTile(c);
  T::ProgramBuilder p(mbarriers    ? "linear_attention_fwd_mbarrier"
                      : emit_state ? "linear_attention_fwd_state"
                                   : "linear_attention_fwd");
  auto Q = p.tensor("Q", {c.B, c.S, H, c.DK}, f16);
  auto K = p.tensor("K", {c.B, c.S, H, c.DK}, f16);
  auto V = p.tensor("V", {c.B, c.S, H, c.DV}, f16);
  auto O = p.tensor("O", {c.B, c.S, H, c.DV}, direct ? f16 : f32);
  std::optional<T::Buffer> state;
  if (emit_state) state = p.tensor("State", {c.B * H, c.DK, c.DV}, f32);
  {
    T::Kernel kernel(T::ceildiv(c.DV, BV), T::ceildiv(c.DK, BK), c.B * H,
                     {.threads = c.threads});
    auto [i_v, i_k, i_bh] = kernel.block_index();
    T::Expr i_b = i_bh / H, i_h = i_bh % H;
    auto q = T::alloc_shared({C, BK}, f16, "q");
    auto k = T::alloc_shared({C, BK}, f16, "k");
    auto v = T::alloc_shared({C, BV}, f16, "v");
    auto h = T::alloc_fragment({BK, BV}, f32, "h");
    auto h_shared = T::alloc_shared({BK, BV}, f16, "h_shared");
    auto s = T::alloc_fragment({C, C}, f32, "s");
    auto s_shared = T::alloc_shared({C, C}, f16, "s_shared");
    auto o = T::alloc_fragment({C, BV}, f32, "o");
    std::optional<T::Buffer> o_shared, o_tile;
    if (direct) {
      o_tile = T::alloc_shared({C, BV}, f16, "o_tile");
      T::annotate_layout(*o_tile, T::make_swizzled_layout(*o_tile));
    } else {
      o_shared = T::alloc_shared({C, BV}, f32, "o_shared");
      T::annotate_layout(*o_shared, T::make_swizzled_layout(*o_shared));
    }
    T::use_swizzle(10);
    if (mbarriers) T::create_list_of_mbarrier({c.threads, c.threads});
    T::clear(h);
    auto k_cols = [&] { return T::slice(i_k * BK, (i_k + 1) * BK); };
    auto v_cols = [&] { return T::slice(i_v * BV, (i_v + 1) * BV); };
    const T::Expr chunks = T::ceildiv(c.S, C);
    auto o_rows = [&](T::Expr i) {
      return O(i_b, T::slice(i * C, (i + 1) * C), i_h, v_cols());
    };
    for (auto i : T::Pipelined(
             0, chunks,
             {.num_stages = mbarriers ? kStages : Stages(c), .name = "i"})) {
      auto rows = T::slice(i * C, (i + 1) * C);
      // Stage 1: load the chunk.
      T::copy(Q(i_b, rows, i_h, k_cols()), q);
      T::copy(K(i_b, rows, i_h, k_cols()), k);
      T::copy(V(i_b, rows, i_h, v_cols()), v);
      // The previous chunk's output leaves here, after the barrier the loop
      // starts with anyway: no barrier of its own between o_tile's stores
      // and its copy to O.
      if (direct) T::If(i > 0, [&] { T::copy(*o_tile, o_rows(i - 1)); });
      if (mbarriers) {
        T::mbarrier_arrive(i % kStages);
        T::mbarrier_wait_parity(i % kStages, (i / kStages) % 2);
      }
      // Stage 2: o = scale (q h + mask(q k^T) v);  h += k^T v. The
      // fragments go to shared memory by whole-tile copies (packed stores),
      // and both before one barrier; s and h go unscaled (as h in fla) and
      // the scale comes last, so the three gemms after the barrier are
      // adjacent: on wgmma they run as one batch.
      T::gemm(q, k, s, {.transpose_B = true, .clear_accum = true});
      for (auto [r, col] : T::Parallel(C, C))
        s(r, col) = T::select(r >= col, s(r, col), 0);
      T::copy(s, s_shared);
      T::copy(h, h_shared);
      T::gemm(q, h_shared, o, {.clear_accum = true});
      T::gemm(s_shared, v, o);
      T::gemm(k, v, h, {.transpose_A = true});
      for (auto [r, col] : T::Parallel(C, BV)) o(r, col) = o(r, col) * scale;
      if (direct) {
        // Through shared memory: whole 16-byte rows to global memory.
        T::copy(o, *o_tile);
      } else {
        T::copy(o, *o_shared);
        // Blocks of every DK tile add into the same O tile.
        T::atomic_add(O(i_b, rows, i_h, v_cols()), *o_shared);
      }
    }
    if (direct) T::copy(*o_tile, o_rows(chunks - 1));
    if (state) T::copy(h, (*state)(i_bh, k_cols(), v_cols()));
  }
  return p.finish();
}

// fla's chunked form, step (a)+(b): per (DV tile, DK tile, batch*head), a
// pipelined sweep over the chunks that stores the state before each chunk
// (the exclusive prefix of k^T v), times scale, in f16:
// States[(b*H + h) * NT + i] = scale * sum_{j < i} K_j^T V_j.
absl::StatusOr<Program> ChunkStates(const LinearAttentionConfig& c) {
  SAMPLES_RETURN_IF_ERROR(CheckConfig(c));
  const int C = c.chunk, BK = std::min(c.block_k, c.DK),
            BV = std::min(c.block_v, c.DV), H = c.H;
  const int NT = (c.S + C - 1) / C;
  const float scale = Scale(c);
  T::ProgramBuilder p("linear_attention_chunk_states");
  auto K = p.tensor("K", {c.B, c.S, H, c.DK}, f16);
  auto V = p.tensor("V", {c.B, c.S, H, c.DV}, f16);
  auto States = p.tensor("States", {c.B * H * NT, c.DK, c.DV}, f16);
  {
    T::Kernel kernel(T::ceildiv(c.DV, BV), T::ceildiv(c.DK, BK), c.B * H,
                     {.threads = c.threads});
    auto [i_v, i_k, i_bh] = kernel.block_index();
    T::Expr i_b = i_bh / H, i_h = i_bh % H;
    auto k = T::alloc_shared({C, BK}, f16, "k");
    auto v = T::alloc_shared({C, BV}, f16, "v");
    auto h = T::alloc_fragment({BK, BV}, f32, "h");
    auto h_shared = T::alloc_shared({BK, BV}, f16, "h_shared");
    T::clear(h);
    auto k_cols = [&] { return T::slice(i_k * BK, (i_k + 1) * BK); };
    auto v_cols = [&] { return T::slice(i_v * BV, (i_v + 1) * BV); };
    for (auto i : T::Pipelined(0, NT, {.num_stages = Stages(c), .name = "i"})) {
      auto rows = T::slice(i * C, (i + 1) * C);
      T::copy(K(i_b, rows, i_h, k_cols()), k);
      T::copy(V(i_b, rows, i_h, v_cols()), v);
      for (auto [r, col] : T::Parallel(BK, BV))
        h_shared(r, col) = h(r, col) * scale;
      T::copy(h_shared, States(i_bh * NT + i, k_cols(), v_cols()));
      T::gemm(k, v, h, {.transpose_A = true});
    }
  }
  return p.finish();
}

// Step (c): every (DV tile, chunk, batch*head) at once,
// o = scale mask(q k^T) v + q States (no loop: the chunks are independent
// once their states are known). One block holds all of DK.
absl::StatusOr<Program> ChunkOutput(const LinearAttentionConfig& c) {
  SAMPLES_RETURN_IF_ERROR(CheckConfig(c));
  const int C = c.chunk, DK = c.DK, BV = std::min(c.block_v, c.DV), H = c.H;
  const int NT = (c.S + C - 1) / C;
  const float scale = Scale(c);
  T::ProgramBuilder p("linear_attention_chunk_output");
  auto Q = p.tensor("Q", {c.B, c.S, H, DK}, f16);
  auto K = p.tensor("K", {c.B, c.S, H, DK}, f16);
  auto V = p.tensor("V", {c.B, c.S, H, c.DV}, f16);
  auto States = p.tensor("States", {c.B * H * NT, DK, c.DV}, f16);
  auto O = p.tensor("O", {c.B, c.S, H, c.DV}, f16);
  {
    T::Kernel kernel(T::ceildiv(c.DV, BV), NT, c.B * H, {.threads = c.threads});
    auto [i_v, i, i_bh] = kernel.block_index();
    T::Expr i_b = i_bh / H, i_h = i_bh % H;
    auto q = T::alloc_shared({C, DK}, f16, "q");
    auto k = T::alloc_shared({C, DK}, f16, "k");
    auto v = T::alloc_shared({C, BV}, f16, "v");
    auto h = T::alloc_shared({DK, BV}, f16, "h");
    auto s = T::alloc_fragment({C, C}, f32, "s");
    auto s_shared = T::alloc_shared({C, C}, f16, "s_shared");
    auto o = T::alloc_fragment({C, BV}, f32, "o");
    auto rows = T::slice(i * C, (i + 1) * C);
    auto v_cols = T::slice(i_v * BV, (i_v + 1) * BV);
    T::copy(Q(i_b, rows, i_h, T::all), q);
    T::copy(K(i_b, rows, i_h, T::all), k);
    T::copy(V(i_b, rows, i_h, v_cols), v);
    T::copy(States(i_bh * NT + i, T::all, v_cols), h);
    T::gemm(q, k, s, {.transpose_B = true, .clear_accum = true});
    for (auto [r, col] : T::Parallel(C, C))
      s_shared(r, col) = T::select(r >= col, s(r, col) * scale, 0);
    T::gemm(s_shared, v, o, {.clear_accum = true});
    T::gemm(q, h, o);
    T::copy(o, O(i_b, rows, i_h, v_cols));
  }
  return p.finish();
}

absl::StatusOr<LinearAttentionConfig> ReadConfig(const KernelParams& params) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  LinearAttentionConfig c;
  SAMPLES_ASSIGN_OR_RETURN(c.B, params.IntInRange("B", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.S, params.IntInRange("S", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.H, params.IntInRange("H", 1, kMax));
  SAMPLES_ASSIGN_OR_RETURN(c.DK, params.IntInRange("DK", 1, 1024));
  SAMPLES_ASSIGN_OR_RETURN(c.DV, params.IntInRange("DV", 1, 1024, c.DK));
  SAMPLES_ASSIGN_OR_RETURN(c.chunk, params.IntInRange("chunk", 1, 256, 64));
  SAMPLES_ASSIGN_OR_RETURN(c.block_k, params.IntInRange("block_k", 1, 256, 64));
  SAMPLES_ASSIGN_OR_RETURN(c.block_v, params.IntInRange("block_v", 1, 256, 64));
  SAMPLES_ASSIGN_OR_RETURN(c.threads,
                           params.IntInRange("threads", 32, 1024, 128));
  SAMPLES_ASSIGN_OR_RETURN(c.num_stages,
                           params.IntInRange("num_stages", 0, 8, 2));
  SAMPLES_RETURN_IF_ERROR(params.CheckAllUsed());
  return c;
}

}  // namespace

LinearAttentionConfig WithDeviceTile(LinearAttentionConfig c, int sm) {
  // Blocks of all of D need sm_80's 163 KB at D = 128 (even in one stage).
  const int d = std::max(c.DK, c.DV);
  const bool whole = d <= 64 || sm <= 0 || MaxSharedBytes(sm) >= 163 * 1024;
  if (c.block_k == 0) c.block_k = whole ? c.DK : std::min(c.DK, 64);
  if (c.block_v == 0) c.block_v = whole ? c.DV : std::min(c.DV, 64);
  if (c.threads == 0) c.threads = whole && d > 64 ? 256 : 128;
  return c;
}

namespace {

// A registry factory: the JSON params read into a config, then `Build`.
// Without tile params, the target's tile (WithDeviceTile, what the sample
// runs there).
// Without an explicit num_stages the pipeline is as deep as the default (2)
// where the tiles fit the target's shared memory and shallower where they
// do not (the D = 128 backward on sm_80).
template <absl::StatusOr<Program> (*Build)(const LinearAttentionConfig&)>
absl::StatusOr<Program> MakeFromJson(const nlohmann::json& json,
                                     const Target& target) {
  SAMPLES_ASSIGN_OR_RETURN(LinearAttentionConfig c,
                           ReadConfig(KernelParams(json)));
  if (!json.contains("block_k") && !json.contains("block_v") &&
      !json.contains("threads")) {
    c.block_k = c.block_v = c.threads = 0;
    c = WithDeviceTile(c, target.sm());
  }
  const bool stages_given = json.contains("num_stages");
  for (;; --c.num_stages) {
    SAMPLES_ASSIGN_OR_RETURN(Program program, Build(c));
    if (stages_given || c.num_stages <= 1 ||
        CheckSharedMemoryFits(program, target).ok()) {
      return program;
    }
  }
}

// ------------------------------------------------------------ references

// Element (b, s, h, d) of a [B, S, H, D] row-major array.
struct Bshd {
  const std::vector<double>& data;
  int64_t S, H, D;
  double operator()(int64_t b, int64_t s, int64_t h, int64_t d) const {
    return data[((b * S + s) * H + h) * D + d];
  }
};

// out[b, t, h, :] = scale * sum over u in the causal range of t (u <= t when
// forward, u >= t otherwise) of (x_t . y_u) z_u, through a state sum_u
// y_u z_u^T (Dy x Dz), in float64. The forward and the three gradients are
// all of this form.
std::vector<double> CausalScan(const HostTensor& x, const HostTensor& y,
                               const HostTensor& z, double scale,
                               bool forward) {
  const int64_t B = x.shape()[0], S = x.shape()[1], H = x.shape()[2];
  const int64_t Dx = x.shape()[3], Dz = z.shape()[3];
  std::vector<double> xv = x.to_doubles(), yv = y.to_doubles(),
                      zv = z.to_doubles();
  Bshd X{xv, S, H, Dx}, Y{yv, S, H, Dx}, Z{zv, S, H, Dz};
  std::vector<double> out(B * S * H * Dz);
  ParallelFor(B * H, [&](int64_t bh) {
    const int64_t b = bh / H, h = bh % H;
    std::vector<double> state(Dx * Dz, 0.0);
    for (int64_t step = 0; step < S; ++step) {
      const int64_t t = forward ? step : S - 1 - step;
      for (int64_t i = 0; i < Dx; ++i)
        for (int64_t j = 0; j < Dz; ++j)
          state[i * Dz + j] += Y(b, t, h, i) * Z(b, t, h, j);
      for (int64_t j = 0; j < Dz; ++j) {
        double sum = 0;
        for (int64_t i = 0; i < Dx; ++i)
          sum += X(b, t, h, i) * state[i * Dz + j];
        out[((b * S + t) * H + h) * Dz + j] = scale * sum;
      }
    }
  });
  return out;
}

double ForwardFlops(const LinearAttentionConfig& c) {
  // Per (block, chunk): q k^T, s v, k^T v, q h (the kernel's gemms, masked
  // halves included).
  const double C = c.chunk, BK = c.block_k, BV = c.block_v;
  const double blocks = double((c.DV + c.block_v - 1) / c.block_v) *
                        ((c.DK + c.block_k - 1) / c.block_k) * c.B * c.H;
  const double chunks = (c.S + c.chunk - 1) / c.chunk;
  return 2.0 * blocks * chunks * (C * C * BK + C * C * BV + 2 * C * BK * BV);
}

double BackwardFlops(const LinearAttentionConfig& c) {
  const double C = c.chunk, BK = c.block_k, BV = c.block_v;
  const double blocks = double((c.DV + c.block_v - 1) / c.block_v) *
                        ((c.DK + c.block_k - 1) / c.block_k) * c.B * c.H;
  const double chunks = (c.S + c.chunk - 1) / c.chunk;
  // Per (block, chunk), the kernel's gemms: dQ sweep dO v^T, ds k, v^T k,
  // dO h; dK/dV sweep v dO^T, ds q, v dh^T, k q^T, ds dO, k dh, q^T dO.
  const double per = (C * C * BV + C * C * BK + 2 * C * BK * BV) +
                     (2 * C * C * BV + 2 * C * C * BK + 3 * C * BK * BV);
  return 2.0 * blocks * chunks * per;
}

// The label bench/device.py pairs with fla's records; FLOPs as the peers
// count them: fwd 4 B H S D (64 + D), bwd twice that.
BenchLabel Label(const LinearAttentionConfig& c, std::string pass,
                 std::string impl) {
  const double fwd = 4.0 * c.B * c.H * double(c.S) * c.DK * (64 + c.DV);
  const double factor = pass == "fwd" ? 1 : pass == "bwd" ? 2 : 3;
  return {
      .kernel = "linear_attention",
      .impl = std::move(impl),
      .pass = std::move(pass),
      .variant = "causal",
      .dtype = "f16",
      .shape = {{"B", c.B}, {"S", c.S}, {"H", c.H}, {"DK", c.DK}, {"DV", c.DV}},
      .size = c.DK == c.DV
                  ? absl::StrCat("B", c.B, " S", c.S, " H", c.H, " D", c.DK)
                  : absl::StrCat("B", c.B, " S", c.S, " H", c.H, " DK", c.DK,
                                 " DV", c.DV),
      .flops = factor * fwd};
}

std::string ShapeString(const LinearAttentionConfig& c) {
  return absl::StrCat("B=", c.B, " S=", c.S, " H=", c.H, " DK=", c.DK,
                      " DV=", c.DV, " f16");
}

}  // namespace

absl::StatusOr<Program> LinearAttentionForwardProgram(
    const LinearAttentionConfig& c) {
  return Forward(c, /*mbarriers=*/false);
}

absl::StatusOr<Program> LinearAttentionForwardMbarrierProgram(
    const LinearAttentionConfig& c) {
  return Forward(c, /*mbarriers=*/true);
}

absl::StatusOr<Program> LinearAttentionChunkStatesProgram(
    const LinearAttentionConfig& c) {
  return ChunkStates(c);
}

absl::StatusOr<Program> LinearAttentionChunkOutputProgram(
    const LinearAttentionConfig& c) {
  return ChunkOutput(c);
}

PassConfig LinearAttentionMbarrierPassConfig() {
  PassConfig config;
  config.disable_tma_lower = true;
  config.disable_warp_specialized = true;
  return config;
}

namespace {

// The backward kernel: the dQ sweep, the dK/dV sweep, or both in one block
// after the other (the seed's fused kernel). Every form takes the same
// parameters, so the split form is two steps with the same arguments.
absl::StatusOr<Program> Backward(const LinearAttentionConfig& c, bool dq_sweep,
                                 bool dkdv_sweep) {
  SAMPLES_RETURN_IF_ERROR(CheckConfig(c));
  const int C = c.chunk, BK = std::min(c.block_k, c.DK),
            BV = std::min(c.block_v, c.DV), H = c.H;
  const float scale = Scale(c);
  // dQ and dK are sums over the DV tiles, dV over the DK tiles: one tile
  // means the block owns the whole sum and writes f16 directly.
  const bool dqk_direct = OneVTile(c), dv_direct = OneKTile(c);
  T::ProgramBuilder p(!dkdv_sweep ? "linear_attention_bwd_dq"
                      : !dq_sweep ? "linear_attention_bwd_dkdv"
                                  : "linear_attention_bwd");
  auto Q = p.tensor("Q", {c.B, c.S, H, c.DK}, f16);
  auto K = p.tensor("K", {c.B, c.S, H, c.DK}, f16);
  auto V = p.tensor("V", {c.B, c.S, H, c.DV}, f16);
  auto dO = p.tensor("dO", {c.B, c.S, H, c.DV}, f16);
  auto dQ = p.tensor("dQ", {c.B, c.S, H, c.DK}, dqk_direct ? f16 : f32);
  auto dK = p.tensor("dK", {c.B, c.S, H, c.DK}, dqk_direct ? f16 : f32);
  auto dV = p.tensor("dV", {c.B, c.S, H, c.DV}, dv_direct ? f16 : f32);
  {
    T::Kernel kernel(T::ceildiv(c.DV, BV), T::ceildiv(c.DK, BK), c.B * H,
                     {.threads = c.threads});
    auto [i_v, i_k, i_bh] = kernel.block_index();
    T::Expr i_b = i_bh / H, i_h = i_bh % H;
    auto ds = T::alloc_fragment({C, C}, f32, "ds");
    auto ds_shared = T::alloc_shared({C, C}, f16, "ds_shared");
    T::use_swizzle(10);
    auto num_chunks = T::ceildiv(c.S, C);
    auto k_cols = [&] { return T::slice(i_k * BK, (i_k + 1) * BK); };
    auto v_cols = [&] { return T::slice(i_v * BV, (i_v + 1) * BV); };
    // Where a gradient tile leaves: an f16 tile (coalesced 16-byte rows)
    // when the block owns the sum, else an f32 one added with atomic_add.
    auto out_tile = [&](int cols, bool direct, const char* name) {
      T::Buffer t = T::alloc_shared({C, cols}, direct ? f16 : f32, name);
      T::annotate_layout(t, T::make_swizzled_layout(t));
      return t;
    };
    auto store = [&](T::Buffer tile, T::Buffer staging, bool direct,
                     T::BufferRef out) {
      T::copy(tile, staging);
      if (direct) {
        T::copy(staging, out);
      } else {
        T::atomic_add(out, staging);
      }
    };
    // The masked products and the states go to shared memory unscaled by
    // whole-tile copies (packed stores); the scale is applied to the
    // fragments instead. Each sweep stages its own tiles (a buffer shared
    // by the two loops would keep both serial).
    if (dq_sweep) {
      // dQ: forward sweep over the chunks, state h = sum v^T k.
      auto dq = T::alloc_fragment({C, BK}, f32, "dq");
      auto k1 = T::alloc_shared({C, BK}, f16, "k1");
      auto v1 = T::alloc_shared({C, BV}, f16, "v1");
      auto do1 = T::alloc_shared({C, BV}, f16, "do1");
      auto h = T::alloc_fragment({BV, BK}, f32, "h");
      auto h_shared = T::alloc_shared({BV, BK}, f16, "h_shared");
      auto dq_out = out_tile(BK, dqk_direct, "dq_out");
      T::clear(h);
      for (auto i : T::Pipelined(0, num_chunks,
                                 {.num_stages = Stages(c), .name = "i"})) {
        auto rows = T::slice(i * C, (i + 1) * C);
        T::copy(K(i_b, rows, i_h, k_cols()), k1);
        T::copy(V(i_b, rows, i_h, v_cols()), v1);
        T::copy(dO(i_b, rows, i_h, v_cols()), do1);
        // dq = scale (dO h + mask(dO v^T) k), scaled last (the gemms after
        // the barrier stay adjacent, as in the forward)
        T::gemm(do1, v1, ds, {.transpose_B = true, .clear_accum = true});
        for (auto [r, col] : T::Parallel(C, C))
          ds(r, col) = T::select(r >= col, ds(r, col), 0);
        T::copy(ds, ds_shared);
        T::copy(h, h_shared);
        T::gemm(do1, h_shared, dq, {.clear_accum = true});
        T::gemm(ds_shared, k1, dq);
        T::gemm(v1, k1, h, {.transpose_A = true});
        for (auto [r, col] : T::Parallel(C, BK))
          dq(r, col) = dq(r, col) * scale;
        store(dq, dq_out, dqk_direct, dQ(i_b, rows, i_h, k_cols()));
      }
    }
    if (dkdv_sweep) {
      // dK, dV: reverse sweep, state dh = sum q^T dO.
      auto dk = T::alloc_fragment({C, BK}, f32, "dk");
      auto dv = T::alloc_fragment({C, BV}, f32, "dv");
      auto s = T::alloc_fragment({C, C}, f32, "s");
      auto s_shared = T::alloc_shared({C, C}, f16, "s_shared");
      auto q2 = T::alloc_shared({C, BK}, f16, "q2");
      auto k2 = T::alloc_shared({C, BK}, f16, "k2");
      auto v2 = T::alloc_shared({C, BV}, f16, "v2");
      auto do2 = T::alloc_shared({C, BV}, f16, "do2");
      auto dh = T::alloc_fragment({BK, BV}, f32, "dh");
      auto dh_shared = T::alloc_shared({BK, BV}, f16, "dh_shared");
      auto dk_out = out_tile(BK, dqk_direct, "dk_out");
      auto dv_out = out_tile(BV, dv_direct, "dv_out");
      T::clear(dh);
      for (auto i : T::Pipelined(0, num_chunks,
                                 {.num_stages = Stages(c), .name = "i"})) {
        T::Expr start = num_chunks - 1 - i;
        auto rows = T::slice(start * C, (start + 1) * C);
        T::copy(Q(i_b, rows, i_h, k_cols()), q2);
        T::copy(K(i_b, rows, i_h, k_cols()), k2);
        T::copy(V(i_b, rows, i_h, v_cols()), v2);
        T::copy(dO(i_b, rows, i_h, v_cols()), do2);
        // dk = scale (v dh^T + mask_upper(v dO^T) q)
        // dv = scale (k dh + mask_upper(k q^T) dO);  dh += q^T dO
        // Both masked products first, then the five gemms that read them
        // and dh back to back (one wgmma batch), the scale last.
        T::gemm(v2, do2, ds, {.transpose_B = true, .clear_accum = true});
        T::gemm(k2, q2, s, {.transpose_B = true, .clear_accum = true});
        // Two loops: the gemms may lay ds and s out differently.
        for (auto [r, col] : T::Parallel(C, C))
          ds(r, col) = T::select(r <= col, ds(r, col), 0);
        for (auto [r, col] : T::Parallel(C, C))
          s(r, col) = T::select(r <= col, s(r, col), 0);
        T::copy(ds, ds_shared);
        T::copy(s, s_shared);
        T::copy(dh, dh_shared);
        T::gemm(v2, dh_shared, dk, {.transpose_B = true, .clear_accum = true});
        T::gemm(ds_shared, q2, dk);
        T::gemm(k2, dh_shared, dv, {.clear_accum = true});
        T::gemm(s_shared, do2, dv);
        T::gemm(q2, do2, dh, {.transpose_A = true});
        for (auto [r, col] : T::Parallel(C, BK))
          dk(r, col) = dk(r, col) * scale;
        for (auto [r, col] : T::Parallel(C, BV))
          dv(r, col) = dv(r, col) * scale;
        store(dk, dk_out, dqk_direct, dK(i_b, rows, i_h, k_cols()));
        store(dv, dv_out, dv_direct, dV(i_b, rows, i_h, v_cols()));
      }
    }
  }
  return p.finish();
}

// The backward in one reverse sweep, from the forward's final state
// H = sum over all chunks of k^T v. The dQ sweep's state before chunk j,
// sum_{i<j} k_i^T v_i, is H minus the chunks from j on, which this sweep
// has just seen: one pass over q, k, v, dO yields all three gradients (the
// two-sweep forms read k, v and dO twice). The masked products are built
// once each: mask_upper(v dO^T) = mask_lower(dO v^T)^T. One block owns a
// whole (batch, head).
absl::StatusOr<Program> BackwardFromState(const LinearAttentionConfig& c) {
  SAMPLES_RETURN_IF_ERROR(CheckConfig(c));
  if (!OneKTile(c) || !OneVTile(c)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "linear_attention_bwd_state: one block owns the whole state: needs "
        "block_k >= DK and block_v >= DV, got block_k=",
        c.block_k, " block_v=", c.block_v, " for DK=", c.DK, " DV=", c.DV));
  }
  const int C = c.chunk, DK = c.DK, DV = c.DV, H = c.H;
  const float scale = Scale(c);
  T::ProgramBuilder p("linear_attention_bwd_state");
  auto Q = p.tensor("Q", {c.B, c.S, H, DK}, f16);
  auto K = p.tensor("K", {c.B, c.S, H, DK}, f16);
  auto V = p.tensor("V", {c.B, c.S, H, DV}, f16);
  auto dO = p.tensor("dO", {c.B, c.S, H, DV}, f16);
  auto State = p.tensor("State", {c.B * H, DK, DV}, f32);
  auto dQ = p.tensor("dQ", {c.B, c.S, H, DK}, f16);
  auto dK = p.tensor("dK", {c.B, c.S, H, DK}, f16);
  auto dV = p.tensor("dV", {c.B, c.S, H, DV}, f16);
  {
    T::Kernel kernel(1, 1, c.B * H, {.threads = c.threads});
    auto [i_v, i_k, i_bh] = kernel.block_index();
    (void)i_v, (void)i_k;
    T::Expr i_b = i_bh / H, i_h = i_bh % H;
    auto q = T::alloc_shared({C, DK}, f16, "q");
    auto k = T::alloc_shared({C, DK}, f16, "k");
    auto v = T::alloc_shared({C, DV}, f16, "v");
    auto d_o = T::alloc_shared({C, DV}, f16, "do");
    // d = mask_lower(dO v^T), e = mask_upper(k q^T), and their f16 tiles.
    auto d = T::alloc_fragment({C, C}, f32, "d");
    auto e = T::alloc_fragment({C, C}, f32, "e");
    auto d_shared = T::alloc_shared({C, C}, f16, "d_shared");
    auto e_shared = T::alloc_shared({C, C}, f16, "e_shared");
    // g: the dQ state before the chunk (H minus the chunks seen); t: the
    // chunk's k^T v; dh: the dK/dV state, sum of q^T dO after the chunk.
    auto g = T::alloc_fragment({DK, DV}, f32, "g");
    auto t = T::alloc_fragment({DK, DV}, f32, "t");
    auto dh = T::alloc_fragment({DK, DV}, f32, "dh");
    auto g_shared = T::alloc_shared({DK, DV}, f16, "g_shared");
    auto dh_shared = T::alloc_shared({DK, DV}, f16, "dh_shared");
    auto dq = T::alloc_fragment({C, DK}, f32, "dq");
    auto dk = T::alloc_fragment({C, DK}, f32, "dk");
    auto dv = T::alloc_fragment({C, DV}, f32, "dv");
    auto out_tile = [&](int cols, const char* name) {
      T::Buffer tile = T::alloc_shared({C, cols}, f16, name);
      T::annotate_layout(tile, T::make_swizzled_layout(tile));
      return tile;
    };
    auto dq_out = out_tile(DK, "dq_out");
    auto dk_out = out_tile(DK, "dk_out");
    auto dv_out = out_tile(DV, "dv_out");
    T::use_swizzle(10);
    T::copy(State(i_bh, T::slice(0, DK), T::slice(0, DV)), g);
    T::clear(dh);
    auto num_chunks = T::ceildiv(c.S, C);
    for (auto i :
         T::Pipelined(0, num_chunks, {.num_stages = Stages(c), .name = "i"})) {
      T::Expr start = num_chunks - 1 - i;
      auto rows = T::slice(start * C, (start + 1) * C);
      T::copy(Q(i_b, rows, i_h, T::slice(0, DK)), q);
      T::copy(K(i_b, rows, i_h, T::slice(0, DK)), k);
      T::copy(V(i_b, rows, i_h, T::slice(0, DV)), v);
      T::copy(dO(i_b, rows, i_h, T::slice(0, DV)), d_o);
      T::gemm(d_o, v, d, {.transpose_B = true, .clear_accum = true});
      T::gemm(k, q, e, {.transpose_B = true, .clear_accum = true});
      T::gemm(k, v, t, {.transpose_A = true, .clear_accum = true});
      for (auto [r, col] : T::Parallel(C, C))
        d(r, col) = T::select(r >= col, d(r, col), 0);
      for (auto [r, col] : T::Parallel(C, C))
        e(r, col) = T::select(r <= col, e(r, col), 0);
      for (auto [r, col] : T::Parallel(DK, DV))
        g(r, col) = g(r, col) - t(r, col);
      T::copy(d, d_shared);
      T::copy(e, e_shared);
      T::copy(g, g_shared);
      T::copy(dh, dh_shared);
      // dq = scale (dO g^T + d k)
      T::gemm(d_o, g_shared, dq, {.transpose_B = true, .clear_accum = true});
      T::gemm(d_shared, k, dq);
      // dk = scale (v dh^T + d^T q)
      T::gemm(v, dh_shared, dk, {.transpose_B = true, .clear_accum = true});
      T::gemm(d_shared, q, dk, {.transpose_A = true});
      // dv = scale (k dh + e dO)
      T::gemm(k, dh_shared, dv, {.clear_accum = true});
      T::gemm(e_shared, d_o, dv);
      // dh += q^T dO
      T::gemm(q, d_o, dh, {.transpose_A = true});
      for (auto [r, col] : T::Parallel(C, DK)) {
        dq(r, col) = dq(r, col) * scale;
        dk(r, col) = dk(r, col) * scale;
      }
      for (auto [r, col] : T::Parallel(C, DV)) dv(r, col) = dv(r, col) * scale;
      T::copy(dq, dq_out);
      T::copy(dk, dk_out);
      T::copy(dv, dv_out);
      T::copy(dq_out, dQ(i_b, rows, i_h, T::slice(0, DK)));
      T::copy(dk_out, dK(i_b, rows, i_h, T::slice(0, DK)));
      T::copy(dv_out, dV(i_b, rows, i_h, T::slice(0, DV)));
    }
  }
  return p.finish();
}

}  // namespace

absl::StatusOr<Program> LinearAttentionForwardWithStateProgram(
    const LinearAttentionConfig& c) {
  return Forward(c, /*mbarriers=*/false, /*emit_state=*/true);
}
absl::StatusOr<Program> LinearAttentionBackwardFromStateProgram(
    const LinearAttentionConfig& c) {
  return BackwardFromState(c);
}

absl::StatusOr<Program> LinearAttentionBackwardProgram(
    const LinearAttentionConfig& c) {
  return Backward(c, true, true);
}
absl::StatusOr<Program> LinearAttentionBackwardDqProgram(
    const LinearAttentionConfig& c) {
  return Backward(c, true, false);
}
absl::StatusOr<Program> LinearAttentionBackwardDkDvProgram(
    const LinearAttentionConfig& c) {
  return Backward(c, false, true);
}

HostTensor ReferenceLinearAttentionForward(const HostTensor& q,
                                           const HostTensor& k,
                                           const HostTensor& v) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.shape()[3]));
  return F64Tensor(v.shape(), CausalScan(q, k, v, scale, /*forward=*/true));
}

LinearAttentionGrads ReferenceLinearAttentionBackward(const HostTensor& q,
                                                      const HostTensor& k,
                                                      const HostTensor& v,
                                                      const HostTensor& d_o) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.shape()[3]));
  // dQ_t = scale sum_{u<=t} (dO_t . v_u) k_u
  // dK_t = scale sum_{u>=t} (v_t . dO_u) q_u
  // dV_t = scale sum_{u>=t} (k_t . q_u) dO_u
  return {F64Tensor(q.shape(), CausalScan(d_o, v, k, scale, true)),
          F64Tensor(k.shape(), CausalScan(v, d_o, q, scale, false)),
          F64Tensor(v.shape(), CausalScan(k, q, d_o, scale, false))};
}

absl::StatusOr<Workload> LinearAttentionForwardWorkload(
    const LinearAttentionConfig& c, bool mbarrier_variant, uint64_t seed) {
  SAMPLES_ASSIGN_OR_RETURN(
      Program fwd, mbarrier_variant ? LinearAttentionForwardMbarrierProgram(c)
                                    : LinearAttentionForwardProgram(c));
  const int64_t n_o = int64_t{c.B} * c.S * c.H * c.DV;
  Workload w;
  w.kernel = mbarrier_variant ? "linear_attention_fwd_mbarrier"
                              : "linear_attention_fwd";
  w.shape = ShapeString(c);
  std::vector<int64_t> qk = {c.B, c.S, c.H, c.DK}, vo = {c.B, c.S, c.H, c.DV};
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["Q"], Input(f16, qk, seed));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["K"], Input(f16, qk, seed + 1));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["V"], Input(f16, vo, seed + 2));
  Step step{.program = fwd, .args = {"Q", "K", "V", "O"}};
  if (mbarrier_variant) step.pass_config = LinearAttentionMbarrierPassConfig();
  if (OneKTile(c)) {
    // One DK tile: the kernel writes O (f16) itself.
    w.tensors["O"] = Sentinel(f16, vo);  // every element must be written
    w.main_step = 0;
    w.steps.push_back(step);
  } else {
    // The host wrapper: zero O_acc, add every DK tile into it, cast.
    SAMPLES_ASSIGN_OR_RETURN(Program zero, ZeroProgram(n_o, f32));
    SAMPLES_ASSIGN_OR_RETURN(Program cast, CastProgram(n_o, f32, f16));
    w.tensors["O_acc"] = Sentinel(f32, vo);  // the zeroing step must run
    w.tensors["O"] = Zeros(f16, vo);
    w.steps.push_back({.program = zero, .args = {Arg("O_acc", {n_o})}});
    step.args = {"Q", "K", "V", "O_acc"};
    w.main_step = static_cast<int>(w.steps.size());
    w.steps.push_back(step);
    w.steps.push_back(
        {.program = cast, .args = {Arg("O_acc", {n_o}), Arg("O", {n_o})}});
  }
  w.outputs = {"O"};
  w.label = Label(c, "fwd", mbarrier_variant ? "tessel:mbarrier" : "tessel");
  w.flops = ForwardFlops(c);
  w.bytes = 2.0 * (2.0 * c.B * c.S * c.H * c.DK) + 2.0 * 2 * n_o;
  w.reference = [](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    return std::vector<Expected>{ExpectedNear(
        "O", ReferenceLinearAttentionForward(
                 w.tensors.at("Q"), w.tensors.at("K"), w.tensors.at("V")))};
  };
  return w;
}

absl::StatusOr<Workload> LinearAttentionChunkedForwardWorkload(
    const LinearAttentionConfig& c, uint64_t seed) {
  SAMPLES_ASSIGN_OR_RETURN(Program states, ChunkStates(c));
  SAMPLES_ASSIGN_OR_RETURN(Program output, ChunkOutput(c));
  const int64_t nt = (c.S + c.chunk - 1) / c.chunk;
  Workload w;
  w.kernel = "linear_attention_fwd_chunked";
  w.shape = ShapeString(c);
  std::vector<int64_t> qk = {c.B, c.S, c.H, c.DK}, vo = {c.B, c.S, c.H, c.DV};
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["Q"], Input(f16, qk, seed));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["K"], Input(f16, qk, seed + 1));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["V"], Input(f16, vo, seed + 2));
  w.tensors["States"] = HostTensor(f16, {c.B * c.H * nt, c.DK, c.DV});
  w.tensors["O"] = Sentinel(f16, vo);  // every element must be written
  w.steps.push_back({.program = states, .args = {"K", "V", "States"}});
  w.main_step = 1;
  w.steps.push_back(
      {.program = output, .args = {"Q", "K", "V", "States", "O"}});
  w.outputs = {"O"};
  w.label = Label(c, "fwd", "tessel:chunked");
  w.flops = ForwardFlops(c);
  const double n_o = double(c.B) * c.S * c.H * c.DV;
  const double n_states = double(c.B) * c.H * nt * c.DK * c.DV;
  w.bytes =
      2.0 * (3.0 * c.B * c.S * c.H * c.DK) + 2.0 * 2 * n_o + 2.0 * 2 * n_states;
  w.reference = [](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    return std::vector<Expected>{ExpectedNear(
        "O", ReferenceLinearAttentionForward(
                 w.tensors.at("Q"), w.tensors.at("K"), w.tensors.at("V")))};
  };
  return w;
}

absl::StatusOr<Workload> LinearAttentionBackwardWorkload(
    const LinearAttentionConfig& c, uint64_t seed) {
  std::vector<Program> kernels;
  if (c.split_backward) {
    SAMPLES_ASSIGN_OR_RETURN(Program dq, LinearAttentionBackwardDqProgram(c));
    SAMPLES_ASSIGN_OR_RETURN(Program dkdv,
                             LinearAttentionBackwardDkDvProgram(c));
    kernels = {std::move(dq), std::move(dkdv)};
  } else {
    SAMPLES_ASSIGN_OR_RETURN(Program bwd, LinearAttentionBackwardProgram(c));
    kernels = {std::move(bwd)};
  }
  const int64_t n_k = int64_t{c.B} * c.S * c.H * c.DK;
  const int64_t n_v = int64_t{c.B} * c.S * c.H * c.DV;
  std::vector<int64_t> qk = {c.B, c.S, c.H, c.DK}, vo = {c.B, c.S, c.H, c.DV};
  Workload w;
  w.kernel = "linear_attention_bwd";
  w.shape = ShapeString(c);
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["Q"], Input(f16, qk, seed));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["K"], Input(f16, qk, seed + 1));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["V"], Input(f16, vo, seed + 2));
  SAMPLES_ASSIGN_OR_RETURN(w.tensors["dO"], Input(f16, vo, seed + 3));
  struct Grad {
    const char* acc;
    const char* out;
    int64_t n;
    std::vector<int64_t> shape;
    bool direct;  // the kernel writes f16 itself (one tile owns the sum)
  };
  const Grad grads[] = {{"dQ_acc", "dQ", n_k, qk, OneVTile(c)},
                        {"dK_acc", "dK", n_k, qk, OneVTile(c)},
                        {"dV_acc", "dV", n_v, vo, OneKTile(c)}};
  // The host wrapper: gradients summed over tiles start at zero in f32 ...
  for (const Grad& g : grads) {
    w.tensors[g.out] = Sentinel(f16, g.shape);  // every element must be written
    if (g.direct) continue;
    SAMPLES_ASSIGN_OR_RETURN(Program zero, ZeroProgram(g.n, f32));
    w.tensors[g.acc] = Sentinel(f32, g.shape);  // the zeroing step must run
    w.steps.push_back({.program = zero, .args = {Arg(g.acc, {g.n})}});
  }
  // ... the kernel adds into them (or writes the direct ones) ...
  w.main_step = static_cast<int>(w.steps.size());
  for (Program& kernel : kernels) {
    Step step{.program = std::move(kernel), .args = {"Q", "K", "V", "dO"}};
    for (const Grad& g : grads) step.args.push_back(g.direct ? g.out : g.acc);
    w.steps.push_back(std::move(step));
  }
  // ... and they are converted to f16.
  for (const Grad& g : grads) {
    w.outputs.push_back(g.out);
    if (g.direct) continue;
    SAMPLES_ASSIGN_OR_RETURN(Program cast, CastProgram(g.n, f32, f16));
    w.steps.push_back(
        {.program = cast, .args = {Arg(g.acc, {g.n}), Arg(g.out, {g.n})}});
  }
  w.label = Label(c, "bwd", "tessel");
  w.flops = BackwardFlops(c);
  w.bytes = 2.0 * (2 * n_k + 2 * n_v) + 2.0 * (2 * n_k + n_v);
  w.reference = [](const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    LinearAttentionGrads g =
        ReferenceLinearAttentionBackward(w.tensors.at("Q"), w.tensors.at("K"),
                                         w.tensors.at("V"), w.tensors.at("dO"));
    return std::vector<Expected>{ExpectedNear("dQ", std::move(g.dq)),
                                 ExpectedNear("dK", std::move(g.dk)),
                                 ExpectedNear("dV", std::move(g.dv))};
  };
  return w;
}

// The forward with its state and the one-sweep backward: one tile over DK
// and DV, up to 64 x 64 (at D = 128 its staged tiles do not fit sm_80's
// shared memory; the two sweeps do).
bool UsesStateBackward(const LinearAttentionConfig& c,
                       const LinearAttentionConfig& bwd) {
  return bwd.state_backward && OneKTile(c) && OneVTile(c) && OneKTile(bwd) &&
         OneVTile(bwd) && c.DK <= 64 && c.DV <= 64;
}

absl::StatusOr<Workload> LinearAttentionForwardBackwardWorkload(
    const LinearAttentionConfig& c, uint64_t seed) {
  return LinearAttentionForwardBackwardWorkload(c, c, seed);
}

absl::StatusOr<Workload> LinearAttentionForwardBackwardWorkload(
    const LinearAttentionConfig& c, const LinearAttentionConfig& bwd_config,
    uint64_t seed) {
  if (c.B != bwd_config.B || c.S != bwd_config.S || c.H != bwd_config.H ||
      c.DK != bwd_config.DK || c.DV != bwd_config.DV) {
    return absl::InvalidArgumentError(
        absl::StrCat("linear_attention fwd+bwd: the backward's sizes (",
                     ShapeString(bwd_config), ") differ from the forward's (",
                     ShapeString(c), ")"));
  }
  SAMPLES_ASSIGN_OR_RETURN(Workload w,
                           LinearAttentionForwardWorkload(c, false, seed));
  SAMPLES_ASSIGN_OR_RETURN(Workload bwd,
                           LinearAttentionBackwardWorkload(bwd_config, seed));
  // Same seeds: Q, K, V are the same tensors in both.
  for (auto& [name, t] : bwd.tensors) w.tensors.insert_or_assign(name, t);
  for (Step& s : bwd.steps) w.steps.push_back(std::move(s));
  for (std::string& o : bwd.outputs) w.outputs.push_back(std::move(o));
  w.kernel = "linear_attention_fwd_bwd";
  w.flops += bwd.flops;
  w.bytes += bwd.bytes;
  if (UsesStateBackward(c, bwd_config)) {
    // Two kernels: the forward with its final state, the one-sweep backward
    // from it (same tensors, same outputs).
    SAMPLES_ASSIGN_OR_RETURN(Program fwd,
                             LinearAttentionForwardWithStateProgram(c));
    SAMPLES_ASSIGN_OR_RETURN(
        Program bwd_state, LinearAttentionBackwardFromStateProgram(bwd_config));
    w.tensors["State"] = Sentinel(f32, {int64_t{c.B} * c.H, c.DK, c.DV});
    w.steps = {{.program = fwd, .args = {"Q", "K", "V", "O", "State"}},
               {.program = bwd_state,
                .args = {"Q", "K", "V", "dO", "State", "dQ", "dK", "dV"}}};
    w.main_step = 0;
  }
  w.label = Label(c, "fwd+bwd", "tessel");
  auto fwd_reference = w.reference;
  auto bwd_reference = bwd.reference;
  w.reference =
      [fwd_reference, bwd_reference](
          const Workload& w) -> absl::StatusOr<std::vector<Expected>> {
    SAMPLES_ASSIGN_OR_RETURN(std::vector<Expected> all, fwd_reference(w));
    SAMPLES_ASSIGN_OR_RETURN(std::vector<Expected> grads, bwd_reference(w));
    for (Expected& e : grads) all.push_back(std::move(e));
    return all;
  };
  return w;
}

TESSEL_REGISTER_KERNEL(linear_attention_fwd,
                       MakeFromJson<LinearAttentionForwardProgram>);
TESSEL_REGISTER_KERNEL(linear_attention_fwd_mbarrier,
                       MakeFromJson<LinearAttentionForwardMbarrierProgram>);
TESSEL_REGISTER_KERNEL(linear_attention_bwd,
                       MakeFromJson<LinearAttentionBackwardProgram>);
TESSEL_REGISTER_KERNEL(linear_attention_bwd_dq,
                       MakeFromJson<LinearAttentionBackwardDqProgram>);
TESSEL_REGISTER_KERNEL(linear_attention_bwd_dkdv,
                       MakeFromJson<LinearAttentionBackwardDkDvProgram>);
TESSEL_REGISTER_KERNEL(linear_attention_fwd_state,
                       MakeFromJson<LinearAttentionForwardWithStateProgram>);
TESSEL_REGISTER_KERNEL(linear_attention_bwd_state,
                       MakeFromJson<LinearAttentionBackwardFromStateProgram>);
TESSEL_REGISTER_KERNEL(linear_attention_chunk_states,
                       MakeFromJson<ChunkStates>);
TESSEL_REGISTER_KERNEL(linear_attention_chunk_output,
                       MakeFromJson<ChunkOutput>);

}  // namespace tessel::samples
