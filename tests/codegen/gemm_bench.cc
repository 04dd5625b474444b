// f16 GEMM of the codegen against cuBLAS in the same process (H200 numbers
// in the report). Not a test: prints one JSON line per size.
//   tessel_gemm_bench [4096 8192 ...]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tessel/compile.h"
#include "tests/codegen/gpu_util.h"
#include "tests/codegen/test_programs.h"

namespace {

template <typename F>
double MedianMs(F&& run, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) run();
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> ms;
  for (int i = 0; i < reps; ++i) {
    cudaEventRecord(a);
    run();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float t = 0;
    cudaEventElapsedTime(&t, a, b);
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tessel;
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {4096, 8192};
  cublasHandle_t h;
  cublasCreate(&h);
  for (int n : sizes) {
    size_t elems = size_t(n) * n;
    std::vector<uint16_t> host(elems);
    std::vector<float> r = testing::Random(elems, 42);
    for (size_t i = 0; i < elems; ++i) host[i] = testing::ToHalfBits(r[i]);
    void *A, *B, *C, *Cref;
    cudaMalloc(&A, elems * 2);
    cudaMalloc(&B, elems * 2);
    cudaMalloc(&C, elems * 2);
    cudaMalloc(&Cref, elems * 2);
    cudaMemcpy(A, host.data(), elems * 2, cudaMemcpyHostToDevice);
    r = testing::Random(elems, 43);
    for (size_t i = 0; i < elems; ++i) host[i] = testing::ToHalfBits(r[i]);
    cudaMemcpy(B, host.data(), elems * 2, cudaMemcpyHostToDevice);
    absl::StatusOr<CompiledKernel> k = compile(testing::Gemm({.m = n,
                                                              .n = n,
                                                              .k = n,
                                                              .bm = 256,
                                                              .bn = 128,
                                                              .bk = 64,
                                                              .threads = 256,
                                                              .stages = 3,
                                                              .panel = 8}),
                                               {.target = Target::detect()});
    if (!k.ok()) {
      std::fprintf(stderr, "%s\n", std::string(k.status().message()).c_str());
      return 1;
    }
    std::vector<TensorView> t = {TensorView::Contiguous(A, f16, {n, n}),
                                 TensorView::Contiguous(B, f16, {n, n}),
                                 TensorView::Contiguous(C, f16, {n, n})};
    absl::Status st;
    auto run_tessel = [&] { st.Update(k->launch(t)); };
    const float alpha = 1, beta = 0;
    auto run_cublas = [&] {
      cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, B, CUDA_R_16F,
                   n, A, CUDA_R_16F, n, &beta, Cref, CUDA_R_16F, n,
                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    };
    double cublas0 = MedianMs(run_cublas, 10, 30);
    double ours = MedianMs(run_tessel, 10, 30);
    double cublas1 = MedianMs(run_cublas, 5, 30);
    double cublas = std::min(cublas0, cublas1);
    if (!st.ok()) {
      std::fprintf(stderr, "launch: %s\n", std::string(st.message()).c_str());
      return 1;
    }
    std::vector<uint16_t> c(elems), cr(elems);
    cudaMemcpy(c.data(), C, elems * 2, cudaMemcpyDeviceToHost);
    cudaMemcpy(cr.data(), Cref, elems * 2, cudaMemcpyDeviceToHost);
    double worst = 0, scale = 0;
    for (size_t i = 0; i < elems; ++i) {
      double a = testing::FromHalfBits(c[i]), b = testing::FromHalfBits(cr[i]);
      worst = std::max(worst, std::fabs(a - b));
      scale = std::max(scale, std::fabs(b));
    }
    double flops = 2.0 * n * n * double(n);
    std::printf(
        "{\"n\": %d, \"tessel_ms\": %.4f, \"cublas_ms\": %.4f, "
        "\"tessel_tflops\": %.1f, \"cublas_tflops\": %.1f, \"ratio\": %.3f, "
        "\"max_abs_diff_vs_cublas\": %.3g, \"max_abs_cublas\": %.3g, "
        "\"smem_bytes\": %d}\n",
        n, ours, cublas, flops / ours / 1e9, flops / cublas / 1e9,
        cublas / ours, worst, scale, k->shared_memory_bytes());
    std::fflush(stdout);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(Cref);
  }
  cublasDestroy(h);
  return 0;
}
