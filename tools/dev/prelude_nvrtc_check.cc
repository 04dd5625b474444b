// Compiles a kernel that calls every function of the tessel device prelude
// with NVRTC, for sm_80 and sm_90a, the prelude handed over as headers by
// content (as the codegen will). Needs no GPU. Exit status 0 when both
// targets compile without a warning; otherwise the NVRTC log is printed.
//
//   tools/dev/build_nvrtc_check.sh && build/dev/prelude_nvrtc_check
//   build/dev/prelude_nvrtc_check <prelude dir> <cuda include dir>
#include <nvrtc.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

#ifndef TESSEL_PRELUDE_DIR
#define TESSEL_PRELUDE_DIR "src/codegen/prelude"
#endif

constexpr const char* kPreludeFiles[] = {
    "tessel_prelude.cuh", "types.cuh",      "atomics.cuh",
    "convert.cuh",        "copy_async.cuh", "ldmatrix.cuh",
    "math.cuh",           "mbarrier.cuh",   "mma.cuh",
    "rasterize.cuh",      "reduce.cuh",     "swizzle.cuh",
    "sync.cuh",
};

// Every prelude function, called so that the compiler cannot drop it (all
// results reach `out`). Not meant to run.
constexpr const char* kKernel = R"(
#include "tessel_prelude.cuh"

extern "C" __global__ void __launch_bounds__(128)
prelude_every_function(const __half* a, const __nv_bfloat16* b, float* out,
                       __half* out_h, __nv_bfloat16* out_b, int n) {
  extern __shared__ __align__(128) tl::u8 smem[];
  __shared__ alignas(8) tl::u64 bars[2];
  __shared__ float scratch[32];
  __half* tile = reinterpret_cast<__half*>(smem);
  const int lane = tl::lane_id();
  const int warp = tl::warp_id();

  // cp.async of each width, predicated, then commit / wait.
  const int row = threadIdx.x / 4, col = (threadIdx.x % 4) * 8;
  const int off = tl::swizzle_offset<32, 2>(row, col);
  tl::cp_async<16>(&tile[off], &a[row * 32 + col], row < n);
  tl::cp_async<8>(&tile[4096 + threadIdx.x * 4], &a[threadIdx.x * 4], true);
  tl::cp_async<4>(&tile[6144 + threadIdx.x * 2], &a[threadIdx.x * 2], false);
  tl::cp_async<16>(tl::smem_addr(tile) + 16384 + threadIdx.x * 16, &a[threadIdx.x * 8]);
  tl::cp_async_commit();
  tl::cp_async_wait<1>();
  tl::cp_async_wait<0>();
  tl::cp_async_wait_all();
  __syncthreads();

  // ldmatrix of every count, plain and transposed, into mma of every kind.
  const int lrow = lane % 16, lcol = (lane / 16) * 8;
  tl::u32 a4[4], b4[4], x1[1], x2[2], t1[1], t2[2];
  tl::ldmatrix_x4(a4, &tile[tl::swizzle_offset<32, 2>(lrow, lcol)]);
  tl::ldmatrix_x4_trans(b4, &tile[2048 + tl::swizzle_offset<64, 2>(lrow, lcol)]);
  tl::ldmatrix_x1(x1, &tile[tl::swizzle_offset<128, 2>(lane % 8, 0)]);
  tl::ldmatrix_x2(x2, &tile[tl::swizzle_offset<16, 2>(lane % 16, 0)]);
  tl::ldmatrix_x1_trans(t1, &tile[tl::linear_offset<8, 2>(lane % 8, 0)]);
  tl::ldmatrix_x2_trans(t2, &tile[tl::swizzle_offset<256, 2>(lane % 16, 0)]);
  const tl::u32 base = tl::smem_addr(tile);
  tl::u32 u4[4], u4t[4], u2[2], u2t[2];
  tl::ldmatrix_x4(u4, base + tl::swizzle_offset<64, 2>(lrow, lcol) * 2);
  tl::ldmatrix_x4_trans(u4t, base + 4096 + lane * 16);
  tl::ldmatrix_x2(u2, base + 8192 + (lane % 16) * 16);
  tl::ldmatrix_x2_trans(u2t, base + 12288 + (lane % 16) * 16);
  a4[0] ^= u4[0] ^ u4t[1] ^ u2[0] ^ u2t[1];
  float acc[4] = {}, acc_b[4] = {}, acc_t[4] = {};
  tl::u32 acc_h[2] = {0u, 0u};
  const tl::u32 bf[2] = {b4[0], b4[1]};
  tl::mma_m16n8k16_f16_f32(acc, a4, bf);
  tl::mma_m16n8k16_bf16_f32(acc_b, a4, x2);
  tl::mma_m16n8k16_f16_f16(acc_h, a4, t2);
  const tl::u32 ta[4] = {tl::to_tf32(acc[0]), tl::to_tf32(acc[1]), x1[0], t1[0]};
  const tl::u32 tb[2] = {tl::to_tf32(acc_b[0]), b4[2]};
  tl::mma_m16n8k8_tf32_f32(acc_t, ta, tb);

  // Conversions and math.
  const tl::u32 ph = tl::pack_f16x2(acc[0], acc[1]);
  const tl::u32 pb = tl::pack_bf16x2(acc_b[2], acc_b[3]);
  const float2 uh = tl::unpack_f16x2(ph ^ acc_h[0]);
  const float2 ub = tl::unpack_bf16x2(pb ^ acc_h[1] ^ b4[3]);
  float v = uh.x + uh.y + ub.x + ub.y + acc_t[0] + acc_t[3];
  v = tl::exp2_approx(v) + tl::exp_approx(v) + tl::log2_approx(v) +
      tl::rcp_approx(v) + tl::rsqrt_approx(v) + tl::tanh_approx(v) +
      tl::sigmoid_approx(v) + fmaxf(v, tl::neg_inf()) + tl::kLn2;
  v += tl::to_f32(tl::convert<__half>(v)) + tl::to_f32(tl::convert<__nv_bfloat16>(v)) +
       tl::to_f32(b[threadIdx.x]) + tl::convert<float>(v);

  // Reductions.
  v = tl::warp_reduce_sum(v) + tl::warp_reduce_max<4>(v) + tl::warp_reduce_min<8>(v);
  v += tl::block_reduce_sum(v, scratch);
  v += tl::block_reduce_max(v, scratch) + tl::block_reduce_min(v, scratch);
  v += static_cast<float>(tl::warp_reduce_sum<16>(static_cast<int>(v)));

  // mbarriers: init, arrive, cp.async arrive, wait by parity.
  if (threadIdx.x == 0) {
    tl::mbarrier_init(&bars[0], blockDim.x);
    tl::mbarrier_init(&bars[1], blockDim.x);
    tl::fence_barrier_init();
  }
  __syncthreads();
  tl::cp_async<16>(&tile[off + 8192], &a[row * 32 + col], true);
  tl::cp_async_mbarrier_arrive(&bars[1]);
  const tl::u64 token = tl::mbarrier_arrive(&bars[0]);
  tl::mbarrier_wait_parity(&bars[0], 0);
  tl::mbarrier_wait_parity(&bars[1], 0);
  v += tl::mbarrier_test_parity(&bars[0], 1) ? 1.0f : static_cast<float>(token & 1);
#ifdef TESSEL_HAS_MBARRIER_TX
  tl::mbarrier_arrive_expect_tx(&bars[0], 0);
  tl::mbarrier_expect_tx(&bars[1], 0);
  tl::fence_proxy_async();
#endif
#ifdef TESSEL_HAS_STMATRIX
  tl::stmatrix_x4(&tile[tl::swizzle_offset<64, 2>(lrow, lcol)], a4);
  tl::stmatrix_x4_trans(&tile[tl::swizzle_offset<64, 2>(lrow, lcol)], b4);
  tl::stmatrix_x2(&tile[tl::swizzle_offset<64, 2>(lrow, 0)], x2);
  tl::stmatrix_x1(&tile[tl::swizzle_offset<64, 2>(lane % 8, 0)], x1);
  tl::stmatrix_x4(base + lane * 16, u4);
  tl::stmatrix_x4_trans(base + 4096 + lane * 16, u4t);
#endif

  // Named barriers, rasterization, atomics.
  if (warp < 2) tl::named_barrier_sync(1, 64);
  else tl::named_barrier_arrive(1, 64);
  const tl::TileCoord t = tl::rasterize_grouped(blockIdx.x, 33, 17, 8);
  const tl::TileCoord t2d = tl::rasterize_grouped_2d(4);
  const int o = ((t.m + t2d.m) * 17 + t.n + t2d.n) * 4;
  tl::atomic_add_f32(&out[o], v);
  tl::atomic_add_f32x2(&out[o], make_float2(v, acc[2]));
  tl::atomic_add_f32x4(&out[o], make_float4(v, acc[3], acc_b[0], acc_b[1]));
  tl::atomic_add(&scratch[1], v);  // shared memory: the scalar form
  tl::atomic_add(&out[o + 1], v);
  tl::atomic_max(&out[o + 2], v);
  tl::atomic_add_f16(&out_h[o], __float2half(v));
  tl::atomic_add_f16x2(&out_h[o], __floats2half2_rn(v, v));
  tl::atomic_add_bf16(&out_b[o], __float2bfloat16(v));
  tl::atomic_add_bf16x2(&out_b[o], __floats2bfloat162_rn(v, v));
  tl::atomic_add(&out_h[o + 2], __float2half(v));
  tl::atomic_add(&out_b[o + 2], __float2bfloat16(v));
  tl::atomic_add(reinterpret_cast<int*>(out) + n, tl::ceil_div(n, 7) + tl::round_up(n, 8));
  tl::atomic_add(reinterpret_cast<double*>(out) + n, static_cast<double>(v));
  out[threadIdx.x] = tl::bit_cast<float>(ph) + scratch[0];
}
)";

bool ReadFile(const std::string& path, std::string* contents) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *contents = ss.str();
  return true;
}

std::string CudaIncludeDir() {
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* root = std::getenv(var))
      return std::string(root) + "/include";
  }
  return "/usr/local/cuda/include";
}

// Compiles kKernel for one architecture; prints the log and returns false on
// failure, prints the cubin size on success.
bool CompileFor(const std::string& arch, const std::vector<std::string>& names,
                const std::vector<std::string>& contents,
                const std::string& cuda_include) {
  std::vector<const char*> name_ptrs, content_ptrs;
  for (size_t i = 0; i < names.size(); ++i) {
    name_ptrs.push_back(names[i].c_str());
    content_ptrs.push_back(contents[i].c_str());
  }
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, kKernel, "prelude_check.cu",
                         static_cast<int>(names.size()), content_ptrs.data(),
                         name_ptrs.data()) != NVRTC_SUCCESS) {
    std::fprintf(stderr, "nvrtcCreateProgram failed\n");
    return false;
  }
  const std::string arch_opt = "-arch=" + arch;
  const std::string include_opt = "-I" + cuda_include;
  const char* opts[] = {arch_opt.c_str(), include_opt.c_str(), "-std=c++17",
                        "-default-device"};
  const nvrtcResult result = nvrtcCompileProgram(prog, 4, opts);
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  nvrtcGetProgramLog(prog, log.data());
  bool ok = result == NVRTC_SUCCESS;
  if (!ok) {
    std::fprintf(stderr, "[%s] FAILED: %s\n%s\n", arch.c_str(),
                 nvrtcGetErrorString(result), log.c_str());
  } else {
    size_t cubin_size = 0;
    nvrtcGetCUBINSize(prog, &cubin_size);
    std::printf("[%s] ok: cubin %zu bytes%s%s\n", arch.c_str(), cubin_size,
                log_size > 1 ? ", log:\n" : "",
                log_size > 1 ? log.c_str() : "");
    // The prelude must compile warning-free: a warning here is a failure.
    ok = cubin_size > 0 && log_size <= 1;
  }
  nvrtcDestroyProgram(&prog);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : TESSEL_PRELUDE_DIR;
  const std::string cuda_include = argc > 2 ? argv[2] : CudaIncludeDir();
  std::vector<std::string> names, contents;
  for (const char* file : kPreludeFiles) {
    std::string text;
    if (!ReadFile(dir + "/" + file, &text)) {
      std::fprintf(stderr, "cannot read %s/%s\n", dir.c_str(), file);
      return 2;
    }
    names.push_back(file);
    contents.push_back(std::move(text));
  }
  bool ok = true;
  for (const char* arch : {"sm_80", "sm_90a"}) {
    ok = CompileFor(arch, names, contents, cuda_include) && ok;
  }
  std::printf("%s\n", ok ? "prelude compiles for sm_80 and sm_90a" : "FAILED");
  return ok ? 0 : 1;
}
