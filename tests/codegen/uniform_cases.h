// A grouped-rows kernel whose blocks find their group by a serial scan
// into a block-uniform variable (T::alloc_uniform), shared by
// uniform_test.cc (the interpreter, the generated code) and
// uniform_gpu_test.cc (the GPU against the interpreter).
#ifndef TESSEL_TESTS_CODEGEN_UNIFORM_CASES_H_
#define TESSEL_TESTS_CODEGEN_UNIFORM_CASES_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "tessel/tessel.h"

namespace tessel::testing {

// Rows [Offsets[g], Offsets[g+1]) belong to group g (whole blocks of 64
// rows): block b scans Offsets for the group of its rows, then
// Out[b*64 : +64] = X[b*64 : +64] @ W[group] in a pipelined loop over K,
// guarded by the group (blocks past Offsets[G] write nothing). The group
// is a copy start (W's tile), a guard around copies and gemms, and read
// inside a Pipelined loop. Unguarded, the loop is the kernel's own (sm_90a
// would warp-specialize it) and blocks past Offsets[G] read W past its end
// (zeros: the boundary rule) and write zeros.
inline absl::StatusOr<Program> GroupedRowsProgram(int groups, int blocks,
                                                  bool guarded = true) {
  namespace T = tessel;
  T::ProgramBuilder p("grouped_rows");
  auto X = p.tensor("X", {blocks * 64, 128}, T::f16);
  auto W = p.tensor("W", {groups, 128, 64}, T::f16);
  auto Offsets = p.tensor("Offsets", {groups + 1}, T::i32);
  auto Out = p.tensor("Out", {blocks * 64, 64}, T::f32);
  {
    T::Kernel kernel(blocks, {.threads = 128});
    auto [b] = kernel.block_index();
    auto group = T::alloc_uniform(T::i32, "group");
    group = 0;
    for (auto g : T::Serial(groups))
      T::If(Offsets(g + 1) <= b * 64, [&] { group = g + 1; });
    auto Xs = T::alloc_shared({64, 32}, T::f16, "Xs");
    auto Ws = T::alloc_shared({32, 64}, T::f16, "Ws");
    auto acc = T::alloc_fragment({64, 64}, T::f32, "acc");
    auto rows = [&] {
      T::clear(acc);
      for (auto k : T::Pipelined(4, {.num_stages = 2})) {
        T::copy(X(b * 64, k * 32), Xs);
        T::copy(W(group, k * 32, 0), Ws);
        T::gemm(Xs, Ws, acc);
      }
      T::copy(acc, Out(b * 64, 0));
    };
    if (guarded) {
      T::If(group < groups, rows);
    } else {
      rows();
    }
  }
  return p.finish();
}

// X, W, Offsets (groups of 2, 0, 3, 1, ... blocks; the last blocks in no
// group), Out filled with -7.
inline std::vector<HostTensor> MakeGroupedRowsArgs(int groups, int blocks) {
  HostTensor x(DataType::kF16, {blocks * 64, 128});
  for (int64_t i = 0; i < x.num_elements(); ++i)
    x.set_flat(i, 0.125 * static_cast<double>((i * 5) % 17) - 1.0);
  HostTensor w(DataType::kF16, {groups, 128, 64});
  for (int64_t i = 0; i < w.num_elements(); ++i)
    w.set_flat(i, 0.0625 * static_cast<double>((i * 3) % 29) - 0.875);
  HostTensor offsets(DataType::kI32, {groups + 1});
  const int sizes[] = {2, 0, 3, 1};
  int row = 0;
  offsets.set_flat(0, 0);
  for (int g = 0; g < groups; ++g) {
    row += 64 * sizes[g % 4];
    if (row > (blocks - 1) * 64) row = (blocks - 1) * 64;
    offsets.set_flat(g + 1, row);
  }
  HostTensor out(DataType::kF32, {blocks * 64, 64});
  for (int64_t i = 0; i < out.num_elements(); ++i) out.set_flat(i, -7.0);
  std::vector<HostTensor> args;
  args.push_back(std::move(x));
  args.push_back(std::move(w));
  args.push_back(std::move(offsets));
  args.push_back(std::move(out));
  return args;
}

}  // namespace tessel::testing

#endif  // TESSEL_TESTS_CODEGEN_UNIFORM_CASES_H_
