// Programs with block-uniform scalars (T::let), shared by let_test.cc (the
// interpreter, the generated code) and let_gpu_test.cc (the GPU against
// the interpreter).
#ifndef TESSEL_TESTS_CODEGEN_LET_CASES_H_
#define TESSEL_TESTS_CODEGEN_LET_CASES_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "tessel/tessel.h"

namespace tessel::testing {

// A paged gather: block b multiplies its Q tile by each of its sequence's
// pages, found through a block table: Out[b] = sum over the first
// ceildiv(Lens[b], 64) pages p of Q[b] @ Cache[Table[b, p]]. The page
// count is a let in the Pipelined loop's extent, the page a let in the
// copy's start, and a let guards the store (a sequence of length 0 writes
// nothing).
inline absl::StatusOr<Program> PagedGatherProgram(int batch, int pages,
                                                  int max_pages,
                                                  int threads = 128) {
  namespace T = tessel;
  T::ProgramBuilder p("paged_gather");
  auto Q = p.tensor("Q", {batch, 64, 64}, T::f16);
  auto Cache = p.tensor("Cache", {pages, 64, 64}, T::f16);
  auto Table = p.tensor("Table", {batch, max_pages}, T::i32);
  auto Lens = p.tensor("Lens", {batch}, T::i32);
  auto Out = p.tensor("Out", {batch, 64, 64}, T::f32);
  {
    T::Kernel kernel(batch, {.threads = threads});
    auto [b] = kernel.block_index();
    auto len = T::let(Lens(b), "len");
    auto npages = T::let(T::ceildiv(len, 64), "npages");
    auto Qs = T::alloc_shared({64, 64}, T::f16, "Qs");
    auto Ks = T::alloc_shared({64, 64}, T::f16, "Ks");
    auto acc = T::alloc_fragment({64, 64}, T::f32, "acc");
    T::copy(Q(b, 0, 0), Qs);
    T::clear(acc);
    for (auto k : T::Pipelined(npages, {.num_stages = 2})) {
      auto page = T::let(Table(b, k), "page");
      T::copy(Cache(page, 0, 0), Ks);
      T::gemm(Qs, Ks, acc);
    }
    T::If(len > 0, [&] { T::copy(acc, Out(b, 0, 0)); });
  }
  return p.finish();
}

// A uniform guard around a gemm and its operand copy: pages past the
// sequence's end (k >= npages) are skipped inside a serial loop over the
// table's width.
inline absl::StatusOr<Program> GuardedGemmProgram(int batch, int pages,
                                                  int max_pages) {
  namespace T = tessel;
  T::ProgramBuilder p("guarded_gemm");
  auto Q = p.tensor("Q", {batch, 64, 64}, T::f16);
  auto Cache = p.tensor("Cache", {pages, 64, 64}, T::f16);
  auto Table = p.tensor("Table", {batch, max_pages}, T::i32);
  auto Lens = p.tensor("Lens", {batch}, T::i32);
  auto Out = p.tensor("Out", {batch, 64, 64}, T::f32);
  {
    T::Kernel kernel(batch, {.threads = 128});
    auto [b] = kernel.block_index();
    auto npages = T::let(T::ceildiv(Lens(b), 64), "npages");
    auto Qs = T::alloc_shared({64, 64}, T::f16, "Qs");
    auto Ks = T::alloc_shared({64, 64}, T::f16, "Ks");
    auto acc = T::alloc_fragment({64, 64}, T::f32, "acc");
    T::copy(Q(b, 0, 0), Qs);
    T::clear(acc);
    for (auto k : T::Serial(max_pages)) {
      auto page = T::let(Table(b, k), "page");
      T::If(k < npages, [&] {
        T::copy(Cache(page, 0, 0), Ks);
        T::gemm(Qs, Ks, acc);
      });
    }
    T::copy(acc, Out(b, 0, 0));
  }
  return p.finish();
}

// Arguments for either program: ragged lengths (0, 1, 64, 65, ...), each
// sequence's pages spread over the cache in a shuffled order.
struct PagedArgs {
  std::vector<HostTensor> tensors;  // Q, Cache, Table, Lens, Out
};
inline PagedArgs MakePagedArgs(int batch, int pages, int max_pages) {
  PagedArgs a;
  HostTensor q(DataType::kF16, {batch, 64, 64});
  for (int64_t i = 0; i < q.num_elements(); ++i)
    q.set_flat(i, 0.125 * static_cast<double>((i * 5) % 17) - 1.0);
  HostTensor cache(DataType::kF16, {pages, 64, 64});
  for (int64_t i = 0; i < cache.num_elements(); ++i)
    cache.set_flat(i, 0.0625 * static_cast<double>((i * 3) % 29) - 0.875);
  HostTensor table(DataType::kI32, {batch, max_pages});
  HostTensor lens(DataType::kI32, {batch});
  const int lengths[] = {0, 1, 64, 65, 300, 17, 128, 1000};
  for (int b = 0; b < batch; ++b) {
    const int len = std::min(lengths[b % 8], max_pages * 64);
    lens.set_flat(b, len);
    for (int k = 0; k < max_pages; ++k)
      table.set_flat(b * max_pages + k, (b * 7 + k * 13 + 3) % pages);
  }
  HostTensor out(DataType::kF32, {batch, 64, 64});
  for (int64_t i = 0; i < out.num_elements(); ++i) out.set_flat(i, -7.0);
  a.tensors.push_back(std::move(q));
  a.tensors.push_back(std::move(cache));
  a.tensors.push_back(std::move(table));
  a.tensors.push_back(std::move(lens));
  a.tensors.push_back(std::move(out));
  return a;
}

}  // namespace tessel::testing

#endif  // TESSEL_TESTS_CODEGEN_LET_CASES_H_
