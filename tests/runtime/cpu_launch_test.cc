// Target::cpu() through the public entry points: compile() builds the
// interpreter's executable, launch() runs it on host memory in place. The
// tensor checks and their messages are the GPU launch's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessel/compile.h"
#include "tessel/interpret.h"
#include "tessel/tessel.h"
#include "tessel/testing.h"

namespace tessel {
namespace {

namespace T = tessel;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int kBlockM = 32, kBlockN = 32, kBlockK = 16;

// C (f32) = A (f16) B (f16); sizes fixed, or bound at launch when symbolic.
Program GemmProgram(int m, int n, int k, bool symbolic) {
  T::ProgramBuilder p("gemm");
  T::Expr M = symbolic ? p.dim("M") : T::Expr(m);
  T::Expr N = symbolic ? p.dim("N") : T::Expr(n);
  T::Expr K = symbolic ? p.dim("K") : T::Expr(k);
  auto A = p.tensor("A", {M, K}, T::f16);
  auto B = p.tensor("B", {K, N}, T::f16);
  auto C = p.tensor("C", {M, N}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(N, kBlockN), T::ceildiv(M, kBlockM),
                     {.threads = 128});
    auto [bx, by] = kernel.block_index();
    auto As = T::alloc_shared({kBlockM, kBlockK}, T::f16, "A_shared");
    auto Bs = T::alloc_shared({kBlockK, kBlockN}, T::f16, "B_shared");
    auto acc = T::alloc_fragment({kBlockM, kBlockN}, T::f32, "acc");
    T::clear(acc);
    for (auto kk : T::Pipelined(T::ceildiv(K, kBlockK), {.num_stages = 2})) {
      T::copy(A(by * kBlockM, kk * kBlockK), As);
      T::copy(B(kk * kBlockK, bx * kBlockN), Bs);
      T::gemm(As, Bs, acc);
    }
    T::copy(acc, C(by * kBlockM, bx * kBlockN));
  }
  absl::StatusOr<Program> prog = p.finish();
  EXPECT_TRUE(prog.ok()) << prog.status();
  return *prog;
}

// C (f32) += A B with the K loop cut into `split` slices, one per grid z,
// each block adding its partial tile with atomic_add.
Program SplitKProgram(int m, int n, int k, int split) {
  const int k_tiles = (k + kBlockK - 1) / kBlockK;
  const int tiles_per_split = (k_tiles + split - 1) / split;
  const int k_per_split = tiles_per_split * kBlockK;
  T::ProgramBuilder p("splitk");
  auto A = p.tensor("A", {m, k}, T::f16);
  auto B = p.tensor("B", {k, n}, T::f16);
  auto C = p.tensor("C", {m, n}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(n, kBlockN), T::ceildiv(m, kBlockM), split,
                     {.threads = 128});
    auto [bx, by, bz] = kernel.block_index();
    auto As = T::alloc_shared({kBlockM, kBlockK}, T::f16, "A_shared");
    auto Bs = T::alloc_shared({kBlockK, kBlockN}, T::f16, "B_shared");
    auto acc = T::alloc_fragment({kBlockM, kBlockN}, T::f32, "acc");
    T::clear(acc);
    for (auto kk : T::Pipelined(tiles_per_split, {.num_stages = 2})) {
      T::copy(A(by * kBlockM, bz * k_per_split + kk * kBlockK), As);
      T::copy(B(bz * k_per_split + kk * kBlockK, bx * kBlockN), Bs);
      T::gemm(As, Bs, acc);
    }
    T::atomic_add(C(by * kBlockM, bx * kBlockN), acc);
  }
  absl::StatusOr<Program> prog = p.finish();
  EXPECT_TRUE(prog.ok()) << prog.status();
  return *prog;
}

// base + A B in float64 from the stored values.
HostTensor ReferenceGemm(const HostTensor& a, const HostTensor& b,
                         double base = 0) {
  const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  HostTensor c(f64, {m, n});
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = base;
      for (int64_t p = 0; p < k; ++p) {
        sum += a.get_flat(i * k + p) * b.get_flat(p * n + j);
      }
      c.set_flat(i * n + j, sum);
    }
  }
  return c;
}

TensorView View(HostTensor& t) {
  return TensorView::Contiguous(t.data(), t.dtype(), t.shape());
}

CompiledKernel CompileForCpu(const Program& program) {
  absl::StatusOr<CompiledKernel> k =
      compile(program, {.target = Target::cpu()});
  EXPECT_TRUE(k.ok()) << k.status();
  return k.ok() ? *k : CompiledKernel();
}

HostTensor Random(DataType dtype, std::vector<int64_t> shape, uint64_t seed) {
  absl::StatusOr<HostTensor> t = testing::RandomTensor(dtype, shape, seed);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : HostTensor();
}

TEST(CpuTarget, DescribesTheKernel) {
  CompiledKernel k = CompileForCpu(GemmProgram(64, 64, 32, false));
  ASSERT_TRUE(k.valid());
  EXPECT_EQ(k.arch(), "cpu");
  EXPECT_EQ(k.name(), "gemm");
  EXPECT_EQ(k.threads(), 128);
  EXPECT_THAT(k.source(), IsEmpty());
  EXPECT_EQ(k.cubin_bytes(), 0u);
  EXPECT_THAT(k.lowered_ir(), HasSubstr("A_shared"));
}

TEST(CpuTarget, RaggedGemmMatchesFloat64) {
  const int m = 100, n = 72, k = 50;  // no size a multiple of its tile
  CompiledKernel kernel = CompileForCpu(GemmProgram(m, n, k, false));
  HostTensor a = Random(f16, {m, k}, 1), b = Random(f16, {k, n}, 2);
  HostTensor c(f32, {m, n});
  c.fill(-3);  // overwritten everywhere, ragged edges included
  ASSERT_TRUE(kernel.launch({View(a), View(b), View(c)}).ok());
  testing::ExpectAllClose(c, ReferenceGemm(a, b), 1e-5, 1e-5);
}

TEST(CpuTarget, SymbolicSizesBindPerLaunch) {
  CompiledKernel kernel = CompileForCpu(GemmProgram(0, 0, 0, true));
  struct Size {
    int m, n, k;
  };
  for (Size s : {Size{40, 33, 17}, Size{97, 64, 70}}) {
    SCOPED_TRACE(absl::StrCat(s.m, "x", s.n, "x", s.k));
    HostTensor a = Random(f16, {s.m, s.k}, 3), b = Random(f16, {s.k, s.n}, 4);
    HostTensor c(f32, {s.m, s.n});
    absl::Status st = kernel.launch({View(a), View(b), View(c)});
    ASSERT_TRUE(st.ok()) << st;
    testing::ExpectAllClose(c, ReferenceGemm(a, b), 1e-5, 1e-5);
  }
}

TEST(CpuTarget, SplitKAtomicsAddToWhatTheOutputHolds) {
  const int m = 70, n = 40, k = 90, split = 3;
  CompiledKernel kernel = CompileForCpu(SplitKProgram(m, n, k, split));
  HostTensor a = Random(f16, {m, k}, 5), b = Random(f16, {k, n}, 6);
  HostTensor c(f32, {m, n});
  c.fill(7);
  ASSERT_TRUE(kernel.launch({View(a), View(b), View(c)}).ok());
  testing::ExpectAllClose(c, ReferenceGemm(a, b, 7), 1e-5, 1e-5);
  // A second launch adds the product once more, as on the GPU.
  ASSERT_TRUE(kernel.launch({View(a), View(b), View(c)}).ok());
  HostTensor twice = ReferenceGemm(a, b);
  for (int64_t i = 0; i < twice.num_elements(); ++i) {
    twice.set_flat(i, 7 + 2 * twice.get_flat(i));
  }
  testing::ExpectAllClose(c, twice, 1e-5, 1e-5);
}

// The tensor checks are the GPU launch's: the same inputs give the same
// Status on both targets (the pointers are never dereferenced).
TEST(CpuTarget, TensorChecksMatchTheGpuLaunch) {
  Program program = GemmProgram(0, 0, 0, true);
  CompiledKernel cpu = CompileForCpu(program);
  absl::StatusOr<CompiledKernel> gpu =
      compile(program, {.target = Target::sm90a()});
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  const uint64_t p = 256;
  auto view = [&](DataType dtype, std::vector<int64_t> shape) {
    return TensorView::Contiguous(p, dtype, std::move(shape));
  };
  struct Case {
    std::vector<TensorView> tensors;
    std::string message;
  };
  std::vector<Case> cases = {
      {{view(f32, {64, 32}), view(f16, {32, 16}), view(f32, {64, 16})},
       "gemm: A: expected f16[M,K], got f32[64,32]"},
      {{view(f16, {64, 32}), view(f16, {48, 16}), view(f32, {64, 16})},
       "gemm: B: expected f16[K,N], got f16[48,16] (K is 32 from an earlier "
       "tensor)"},
      {{view(f16, {64, 32}), view(f16, {32, 16}), view(f32, {64, 16, 1})},
       "gemm: C: expected f32[M,N], got f32[64,16,1]"},
      {{view(f16, {64, 32}), view(f16, {32, 16})},
       "gemm: expected 3 tensors (A, B, C), got 2"},
      {{TensorView{p, f16, {64, 32}, {1, 1}}, view(f16, {32, 16}),
        view(f32, {64, 16})},
       "gemm: A f16[64,32] with strides [1,1]: dimensions 0 and 1 overlap"},
      {{view(f16, {64, 32}), TensorView{p, f16, {32, 16}, {16}},
        view(f32, {64, 16})},
       "gemm: B f16[32,16] with strides [16]: one stride per dimension (2) "
       "is needed"},
      {{view(f16, {64, 32}), view(f16, {32, 16}),
        TensorView{p, f32, {64, 16}, {-16, 1}}},
       "gemm: C f32[64,16] with strides [-16,1]: strides must be positive"},
  };
  for (const Case& c : cases) {
    absl::Status on_cpu = cpu.launch(c.tensors);
    absl::Status on_gpu = gpu->launch(c.tensors);
    EXPECT_EQ(on_cpu.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(on_cpu.message(), HasSubstr(c.message));
    EXPECT_EQ(on_cpu, on_gpu);
  }
}

TEST(CpuTarget, NullPointerIsRejected) {
  CompiledKernel kernel = CompileForCpu(GemmProgram(64, 64, 32, false));
  HostTensor a(f16, {64, 32}), c(f32, {64, 64});
  TensorView b = TensorView::Contiguous(uint64_t{0}, f16, {32, 64});
  absl::Status s = kernel.launch({View(a), b, View(c)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("gemm: B: null host pointer"));
}

TEST(CpuTarget, MisalignedPointerIsRejected) {
  // A scalar kernel never checked alignment: on the GPU an f16 or f32 read
  // at an odd address faults (misaligned address, a sticky error).
  CompiledKernel kernel = CompileForCpu(GemmProgram(64, 64, 32, false));
  HostTensor a(f16, {64, 32}), b(f16, {32, 64}), c(f32, {64, 64});
  TensorView shifted = View(c);
  shifted.data += 2;
  absl::Status s = kernel.launch({View(a), View(b), shifted});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("gemm: C: address 0x"));
  EXPECT_THAT(s.message(), HasSubstr("not a multiple of the 4-byte f32"));
}

TEST(CpuTarget, EmptyProgramIsRejected) {
  absl::StatusOr<CompiledKernel> k =
      compile(Program(), {.target = Target::cpu()});
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(k.status().message(), HasSubstr("the Program is empty"));
  absl::Status s = interpret(Program(), {});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("the Program is empty"));
}

// Y = 2 X over n f32 elements: X read, Y written.
Program ScaleProgram(int n) {
  T::ProgramBuilder p("scale");
  auto X = p.tensor("X", {n}, T::f32);
  auto Y = p.tensor("Y", {n}, T::f32);
  {
    T::Kernel kernel(1, {.threads = 128});
    auto x = T::alloc_fragment({n}, T::f32, "x");
    T::copy(X(0), x);
    for (auto i : T::Parallel(n)) x(i) = x(i) * 2.0f;
    T::copy(x, Y(0));
  }
  absl::StatusOr<Program> prog = p.finish();
  EXPECT_TRUE(prog.ok()) << prog.status();
  return *prog;
}

// Pages of this process for the host-memory checks, unmapped at the end.
class Pages {
 public:
  explicit Pages(int count)
      : bytes_(static_cast<size_t>(count) * sysconf(_SC_PAGESIZE)) {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    base_ = static_cast<std::byte*>(p);
  }
  ~Pages() { munmap(base_, bytes_); }
  std::byte* page(int i) const { return base_ + i * sysconf(_SC_PAGESIZE); }
  void Protect(int i, int prot) {
    ASSERT_EQ(mprotect(page(i), sysconf(_SC_PAGESIZE), prot), 0);
  }
  void Unmap(int i) { ASSERT_EQ(munmap(page(i), sysconf(_SC_PAGESIZE)), 0); }

 private:
  size_t bytes_;
  std::byte* base_;
};

// The interpreter works on the caller's memory in place: a pointer to
// nothing, to a freed or PROT_NONE page, or a view running off its mapping
// is refused with the parameter's name instead of crashing the process.
TEST(CpuTarget, PointersToUnmappedOrProtectedMemoryAreRejected) {
  constexpr int kN = 1024;  // 4 KiB: one page on x86-64 and most others
  ASSERT_GE(sysconf(_SC_PAGESIZE), kN * 4);
  CompiledKernel kernel = CompileForCpu(ScaleProgram(kN));
  HostTensor x = Random(f32, {kN}, 8), y(f32, {kN});
  Pages pages(4);
  pages.Protect(1, PROT_NONE);
  pages.Unmap(3);
  auto at = [](const void* p) {
    return TensorView::Contiguous(reinterpret_cast<uintptr_t>(p), f32, {kN});
  };
  struct Case {
    std::string what;
    TensorView x, y;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"a small integer", TensorView::Contiguous(uint64_t{0x1000}, f32, {kN}),
       View(y), "scale: X: f32[1024] at 0x1000: nothing is mapped at 0x1000"},
      {"an unmapped page", View(x), at(pages.page(3)),
       "scale: Y: f32[1024] at 0x"},
      {"a PROT_NONE page", at(pages.page(1)), View(y), "is not readable"},
      {"a view running into a PROT_NONE page", at(pages.page(0) + 64), View(y),
       "is not readable (4096 bytes from the pointer are needed)"},
      {"past the end of the address space",
       TensorView::Contiguous(~uint64_t{0} - 127, f32, {kN}), View(y),
       "its elements reach past the end of the address space"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    absl::Status s = kernel.launch({c.x, c.y});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr(c.message)) << s;
  }
  absl::Status unmapped = kernel.launch({View(x), at(pages.page(3))});
  EXPECT_THAT(unmapped.message(), HasSubstr("nothing is mapped")) << unmapped;
  EXPECT_THAT(kernel.launch({at(pages.page(1)), View(y)}).message(),
              HasSubstr("scale: X:"));
}

// Read-only memory is fine to read, not to write.
TEST(CpuTarget, ReadOnlyMemoryServesInputsNotOutputs) {
  constexpr int kN = 1024;
  ASSERT_GE(sysconf(_SC_PAGESIZE), kN * 4);
  CompiledKernel kernel = CompileForCpu(ScaleProgram(kN));
  HostTensor x = Random(f32, {kN}, 9), y(f32, {kN});
  Pages pages(1);
  std::memcpy(pages.page(0), x.data(), kN * 4);
  pages.Protect(0, PROT_READ);
  const TensorView read_only = TensorView::Contiguous(
      reinterpret_cast<uintptr_t>(pages.page(0)), f32, {kN});
  absl::Status s = kernel.launch({read_only, View(y)});
  ASSERT_TRUE(s.ok()) << s;
  for (int i = 0; i < kN; ++i) ASSERT_EQ(y.get_flat(i), 2 * x.get_flat(i));
  s = kernel.launch({View(x), read_only});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("scale: Y: f32[1024] at 0x"));
  EXPECT_THAT(s.message(),
              HasSubstr("is read-only and the kernel writes this tensor"));
}

TEST(CpuTarget, AStreamIsRejected) {
  CompiledKernel kernel = CompileForCpu(GemmProgram(64, 64, 32, false));
  HostTensor a(f16, {64, 32}), b(f16, {32, 64}), c(f32, {64, 64});
  CUstream_st* stream = reinterpret_cast<CUstream_st*>(uintptr_t{0x10});
  absl::Status s = kernel.launch({View(a), View(b), View(c)}, stream);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("no stream"));
}

TEST(CpuTarget, UserBugsNameTheSourceLine) {
  int line = 0;
  T::ProgramBuilder p("uninit");
  auto Y = p.tensor("Y", {16}, T::f32);
  {
    T::Kernel kernel(2);
    auto x = T::alloc_fragment({16}, T::f32, "x");
    line = __LINE__ + 1;
    T::copy(x, Y(0));  // x was never written
  }
  absl::StatusOr<Program> prog = p.finish();
  ASSERT_TRUE(prog.ok()) << prog.status();
  CompiledKernel kernel = CompileForCpu(*prog);
  HostTensor y(f32, {16});
  absl::Status s = kernel.launch({View(y)});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("uninit: copy at ", __FILE__,
                                                  ":", line, ": ")));
  EXPECT_THAT(s.message(), HasSubstr("reads x[0] before anything wrote it"));
}

}  // namespace
}  // namespace tessel
