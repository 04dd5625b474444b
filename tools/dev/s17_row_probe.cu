// Session 17 probe: can an rmsnorm row (f16, 4096 x 8192) beat the LDG.128
// form tessel generates (and Inductor's kernel, at the same speed under ncu)?
// Variants of one kernel: plain 16-byte loads; loads with the L2::256B
// prefetch hint or L1 / L2 eviction priorities; the row brought in by a bulk
// copy (TMA, 1-D) and written back by a bulk store. Built with nvcc on the GPU
// machine, timed by ncu.
#include <cuda_fp16.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

constexpr int N = 8192, THREADS = 512, PER = N / THREADS;  // 16 halves

__device__ __forceinline__ float block_sum(float v, float* red) {
  for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;
  __syncthreads();
  float s = 0;
#pragma unroll
  for (int i = 0; i < THREADS / 32; ++i) s += red[i];
  return s;
}

// Eight halves at `v` into x[c * 8 ...], as floats.
__device__ __forceinline__ void widen(const uint4& v, float* x) {
  const half2* h = reinterpret_cast<const half2*>(&v);
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    float2 f = __half22float2(h[e]);
    x[2 * e] = f.x;
    x[2 * e + 1] = f.y;
  }
}

// The row's sum of squares, then y = x * rstd * w in 16-byte stores at
// `out` (global or shared), chunk c at out + (c * THREADS + t) * 8.
__device__ __forceinline__ void scale_store(const float* x, const half2* w,
                                            float* red, half* out) {
  const int t = threadIdx.x;
  float s = 0;
#pragma unroll
  for (int i = 0; i < PER; ++i) s += x[i] * x[i];
  const float r = rsqrtf(block_sum(s, red) / N + 1e-6f);
#pragma unroll
  for (int c = 0; c < 2; ++c) {
    uint4 o;
    half2* oh = reinterpret_cast<half2*>(&o);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float2 wf = __half22float2(w[c * 4 + e]);
      oh[e] = __floats2half2_rn(x[c * 8 + 2 * e] * r * wf.x,
                                x[c * 8 + 2 * e + 1] * r * wf.y);
    }
    *reinterpret_cast<uint4*>(out + (c * THREADS + t) * 8) = o;
  }
}

template <int HINT>
__device__ __forceinline__ uint4 load16(const void* p) {
  uint4 r;
  if (HINT == 0) {
    r = *reinterpret_cast<const uint4*>(p);
  } else if (HINT == 1) {
    asm volatile("ld.global.nc.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  } else if (HINT == 2) {
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  } else if (HINT == 3) {
    asm volatile("ld.global.nc.L1::evict_first.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  } else if (HINT == 4) {
    asm volatile("ld.global.nc.L1::evict_last.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  } else {
    // L2 evict_first through a cache policy (Inductor's streaming loads).
    uint64_t pol;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;"
                 : "=l"(pol));
    asm volatile(
        "ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, "
        "[%4], %5;"
        : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
        : "l"(p), "l"(pol));
  }
  return r;
}

template <int HINT, int WHINT>
__global__ void __launch_bounds__(THREADS)
    rms_ldg(const half* X, const half* W, half* Y) {
  __shared__ float red[THREADS / 32];
  const int row = blockIdx.x, t = threadIdx.x;
  float x[PER];
  half2 w[PER / 2];
#pragma unroll
  for (int c = 0; c < 2; ++c) {
    widen(load16<HINT>(X + (size_t)row * N + (c * THREADS + t) * 8), &x[c * 8]);
    uint4 wv = load16<WHINT>(W + (c * THREADS + t) * 8);
    const half2* wh = reinterpret_cast<const half2*>(&wv);
#pragma unroll
    for (int e = 0; e < 4; ++e) w[c * 4 + e] = wh[e];
  }
  scale_store(x, w, red, Y + (size_t)row * N);
}

// The row through shared memory by bulk copies (cp.async.bulk, 1-D).
__global__ void __launch_bounds__(THREADS)
    rms_bulk(const half* X, const half* W, half* Y) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ float red[THREADS / 32];
  __shared__ __align__(8) uint64_t bar;
  half* row_s = reinterpret_cast<half*>(smem);
  const int row = blockIdx.x, t = threadIdx.x;
  const uint32_t bar_a = (uint32_t)__cvta_generic_to_shared(&bar);
  const uint32_t row_a = (uint32_t)__cvta_generic_to_shared(row_s);
  if (t == 0) {
    asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(bar_a));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  if (t == 0) {
    asm volatile(
        "mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"(bar_a),
        "r"(N * 2));
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
        "[%0], [%1], %2, [%3];" ::"r"(row_a),
        "l"(X + (size_t)row * N), "r"(N * 2), "r"(bar_a)
        : "memory");
  }
  half2 w[PER / 2];
#pragma unroll
  for (int c = 0; c < 2; ++c) {
    uint4 wv = *reinterpret_cast<const uint4*>(W + (c * THREADS + t) * 8);
    const half2* wh = reinterpret_cast<const half2*>(&wv);
#pragma unroll
    for (int e = 0; e < 4; ++e) w[c * 4 + e] = wh[e];
  }
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], 0; "
        "selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(bar_a)
        : "memory");
  }
  float x[PER];
#pragma unroll
  for (int c = 0; c < 2; ++c) {
    widen(*reinterpret_cast<const uint4*>(row_s + (c * THREADS + t) * 8),
          &x[c * 8]);
  }
  scale_store(x, w, red, row_s);

  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (t == 0) {
    asm volatile(
        "cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(
            Y + (size_t)row * N),
        "r"(row_a), "r"(N * 2)
        : "memory");
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
}

__global__ void copy16(const uint4* X, uint4* Y, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) Y[i] = X[i];
}

int main() {
  const int M = 4096;
  const size_t n = (size_t)M * N;
  std::vector<half> hx(n), hw(N);
  for (size_t i = 0; i < n; ++i)
    hx[i] = __float2half((float)((i * 2654435761u) % 1000) / 500.f - 1.f);
  for (int i = 0; i < N; ++i) hw[i] = __float2half(0.5f + (i % 7) * 0.1f);
  half *X, *W, *Y;
  cudaMalloc(&X, n * 2);
  cudaMalloc(&W, N * 2);
  cudaMalloc(&Y, n * 2);
  cudaMemcpy(X, hx.data(), n * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(W, hw.data(), N * 2, cudaMemcpyHostToDevice);
  cudaFuncSetAttribute(rms_bulk, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       N * 2);
  std::vector<half> ref(n), got(n);
  // Checks against a host rmsnorm of row 0..7.
  auto check = [&](const char* name) {
    cudaMemcpy(got.data(), Y, n * 2, cudaMemcpyDeviceToHost);
    double worst = 0;
    for (int r = 0; r < M; r += 97) {
      double ss = 0;
      for (int j = 0; j < N; ++j) {
        double v = __half2float(hx[(size_t)r * N + j]);
        ss += v * v;
      }
      double rs = 1 / std::sqrt(ss / N + 1e-6);
      for (int j = 0; j < N; ++j) {
        double e =
            __half2float(hx[(size_t)r * N + j]) * rs * __half2float(hw[j]);
        worst = std::fmax(worst,
                          std::fabs(e - __half2float(got[(size_t)r * N + j])));
      }
    }
    printf("%-12s max err %.4f %s\n", name, worst,
           worst < 2e-2 ? "pass" : "FAIL");
    cudaMemset(Y, 0, n * 2);
  };
  for (int rep = 0; rep < 10; ++rep) {
    rms_ldg<0, 0><<<M, THREADS>>>(X, W, Y);
    if (!rep) check("ldg");
    rms_ldg<1, 0><<<M, THREADS>>>(X, W, Y);
    if (!rep) check("ldg_l2_256");
    rms_ldg<2, 0><<<M, THREADS>>>(X, W, Y);
    if (!rep) check("x_l1_na");
    rms_ldg<3, 4><<<M, THREADS>>>(X, W, Y);
    if (!rep) check("x_l1_first_w_last");
    rms_ldg<2, 4><<<M, THREADS>>>(X, W, Y);
    if (!rep) check("x_na_w_last");
    rms_ldg<5, 0><<<M, THREADS>>>(X, W, Y);
    if (!rep) check("x_l2_first");
    rms_ldg<5, 4><<<M, THREADS>>>(X, W, Y);
    if (!rep) check("x_l2_first_w_last");
    rms_bulk<<<M, THREADS, N * 2>>>(X, W, Y);
    if (!rep) check("bulk");
    copy16<<<(n / 8 + 127) / 128, 128>>>((const uint4*)X, (uint4*)Y, n / 8);
  }
  cudaError_t e = cudaDeviceSynchronize();
  printf("done: %s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
