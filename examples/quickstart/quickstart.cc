// tessel quickstart: record a GEMM tile program, compile it, allocate and
// fill its tensors, launch it and check the result (docs/quickstart.md).
//
//   quickstart                 # the GPU when there is one, else the CPU
//   quickstart --target=cpu    # the CPU interpreter (no GPU needed)
//   quickstart --target=gpu    # device 0 (fails without one)
//
// Prints one "quickstart: ... ok" line; exit status 0 when the result
// matches, 1 on a mismatch, 2 on an error (bad flag, no GPU, compile error).
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>

#include "tessel/tessel.h"

namespace T = tessel;

namespace {

constexpr int M = 256, N = 256, K = 256;
constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32;

// 1. Record: C (f32) = A (f16) * B (f16), one 128x128 tile of C per block.
absl::StatusOr<T::Program> Gemm(int m, int n, int k) {
  T::ProgramBuilder p("quickstart_gemm");
  auto A = p.tensor("A", {m, k}, T::f16);
  auto B = p.tensor("B", {k, n}, T::f16);
  auto C = p.tensor("C", {m, n}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(n, kBlockN), T::ceildiv(m, kBlockM),
                     {.threads = 128});
    auto [bx, by] = kernel.block_index();
    auto As = T::alloc_shared({kBlockM, kBlockK}, T::f16);
    auto Bs = T::alloc_shared({kBlockK, kBlockN}, T::f16);
    auto acc = T::alloc_fragment({kBlockM, kBlockN}, T::f32);
    T::clear(acc);
    for (auto kk : T::Pipelined(T::ceildiv(k, kBlockK), {.num_stages = 3})) {
      T::copy(A(by * kBlockM, kk * kBlockK), As);  // extent taken from As
      T::copy(B(kk * kBlockK, bx * kBlockN), Bs);
      T::gemm(As, Bs, acc);
    }
    T::copy(acc, C(by * kBlockM, bx * kBlockN));
  }
  return p.finish();  // verified here; errors name this file's lines
}

// Small multiples of 1/4: exact in f16, and every sum of their products is
// exact in f32, so the GPU and the CPU must both match the reference.
double ValueA(int64_t i, int64_t j) { return ((i * 3 + j * 5) % 9 - 4) / 4.0; }
double ValueB(int64_t i, int64_t j) { return ((i * 7 + j) % 5 - 2) / 4.0; }

// 2-4. Compile for `target`, fill the inputs, launch, copy C back.
absl::Status Run(const T::Target& target, T::HostTensor& a, T::HostTensor& b,
                 T::HostTensor& c) {
  TESSEL_ASSIGN_OR_RETURN(T::Program program, Gemm(M, N, K));
  TESSEL_ASSIGN_OR_RETURN(T::CompiledKernel kernel,
                          T::compile(program, {.target = target}));
  if (target.kind() == T::Target::Kind::kCpu) {
    // The interpreter reads and writes host memory in place.
    return kernel.launch({T::TensorView::Contiguous(a.data(), T::f16, {M, K}),
                          T::TensorView::Contiguous(b.data(), T::f16, {K, N}),
                          T::TensorView::Contiguous(c.data(), T::f32, {M, N})});
  }
  // The GPU: device buffers, uploaded from the host tensors' bytes (a
  // HostTensor holds exactly the bytes a device tensor of its dtype does).
  TESSEL_ASSIGN_OR_RETURN(T::DeviceMemory da,
                          T::DeviceMemory::Allocate(a.num_bytes()));
  TESSEL_ASSIGN_OR_RETURN(T::DeviceMemory db,
                          T::DeviceMemory::Allocate(b.num_bytes()));
  TESSEL_ASSIGN_OR_RETURN(T::DeviceMemory dc,
                          T::DeviceMemory::Allocate(c.num_bytes()));
  TESSEL_RETURN_IF_ERROR(da.CopyFromHost(a.data(), a.num_bytes()));
  TESSEL_RETURN_IF_ERROR(db.CopyFromHost(b.data(), b.num_bytes()));
  TESSEL_RETURN_IF_ERROR(
      kernel.launch({T::TensorView::Contiguous(da.ptr(), T::f16, {M, K}),
                     T::TensorView::Contiguous(db.ptr(), T::f16, {K, N}),
                     T::TensorView::Contiguous(dc.ptr(), T::f32, {M, N})}));
  TESSEL_RETURN_IF_ERROR(T::Synchronize());
  return dc.CopyToHost(c.data(), c.num_bytes());
}

}  // namespace

int main(int argc, char** argv) {
  std::string want = "auto";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--target=cpu" || arg == "--target=gpu") {
      want = arg.substr(9);
    } else {
      std::cerr << "usage: quickstart [--target=cpu|gpu]\n";
      return 2;
    }
  }
  const std::string no_gpu = T::GpuUnavailableReason();  // "" with a GPU
  if (want == "auto") {
    want = no_gpu.empty() ? "gpu" : "cpu";
    if (want == "cpu") {
      std::cout << "quickstart: no GPU, running on the CPU interpreter ("
                << no_gpu << ")\n";
    }
  }
  // Target::detect() is device 0's arch ("sm_90a" on an H100/H200).
  const T::Target target =
      want == "cpu" ? T::Target::cpu() : T::Target::detect();

  T::HostTensor a(T::f16, {M, K}), b(T::f16, {K, N}), c(T::f32, {M, N});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < K; ++j) a.set({i, j}, ValueA(i, j));
  for (int64_t i = 0; i < K; ++i)
    for (int64_t j = 0; j < N; ++j) b.set({i, j}, ValueB(i, j));
  c.fill(NAN);  // every element must be written

  if (absl::Status s = Run(target, a, b, c); !s.ok()) {
    std::cerr << "quickstart: " << s << "\n";
    return 2;
  }

  // 5. Check against a float64 reference.
  int64_t wrong = 0;
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double want_ij = 0;
      for (int64_t k = 0; k < K; ++k) want_ij += ValueA(i, k) * ValueB(k, j);
      const double got = c.at({i, j});
      if (!(std::abs(got - want_ij) <= 1e-6) && wrong++ < 5) {
        std::cerr << "quickstart: C[" << i << ", " << j << "] = " << got
                  << ", expected " << want_ij << "\n";
      }
    }
  }
  const std::string what = "gemm " + std::to_string(M) + "x" +
                           std::to_string(N) + "x" + std::to_string(K) +
                           " on " + target.arch();
  if (wrong > 0) {
    std::cerr << "quickstart: " << what << ": MISMATCH in " << wrong << " of "
              << M * N << " elements\n";
    return 1;
  }
  std::cout << "quickstart: " << what << ": ok (" << M * N
            << " elements match)\n";
  return 0;
}
