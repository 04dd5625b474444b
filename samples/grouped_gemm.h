// MoE grouped GEMM with the group sizes on the device: the rows of G groups
// (experts) concatenated in A, offsets [G + 1] i32 marking where each group
// starts, and one weight matrix per group.
//
//   C[r, :] = A[r, :] B[g]^T   for offsets[g] <= r < offsets[g + 1]
//
//   tessel::samples::GroupedGemmConfig c{.N = 4096, .K = 4096, .G = 8};
//   absl::StatusOr<tessel::Program> p = GroupedGemmProgram(c);
//   // parameters: A [M, K], B [G, N, K] (or [G, K, N] with
//   // b_k_major = false), offsets [G + 1] i32, C [M, N]; f16 or bf16 in
//   // and out, f32 accumulation. M is symbolic (bound at launch), so one
//   // kernel serves every batch; offsets[G] <= M, rows of no group are not
//   // written.
//
// The grid does not depend on the group sizes: ceildiv(N, block_n) x
// (M / block_m + G) blocks, where group g's m-tiles take the slots from
// offsets[g] / block_m + g on (slots that no group's tile takes exit
// at once). Each block finds its group with T::lets read from offsets (a
// count of the groups starting at or before its slot), so the copies'
// starts are lets, which the sm_90a TMA producer takes (docs/samples.md).
//
// Registered for tessel-warmup as "grouped_gemm" (params N, K, G and
// optional in_dtype, b_k_major, block_m, block_n, block_k, num_stages,
// threads, panel: T::use_swizzle's panel, 0 (default) for none).
#ifndef TESSEL_SAMPLES_GROUPED_GEMM_H_
#define TESSEL_SAMPLES_GROUPED_GEMM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "samples/gemm.h"
#include "samples/workload.h"

namespace tessel::samples {

struct GroupedGemmConfig {
  int M = 0;  // rows of A and C (the workload's; the kernel binds them)
  int N = 0;
  int K = 0;
  int G = 0;  // groups
  DataType in_dtype = f16;
  // B [G, N, K] (true; nn.Linear's weight layout, K-major as wgmma reads
  // both operands) or [G, K, N].
  bool b_k_major = true;
  GemmTile tile = {.block_m = 128,
                   .block_n = 256,
                   .block_k = 64,
                   .num_stages = 4,
                   .threads = 256,
                   .panel = 0};
};

// The default tile of sm_<sm>: where Hopper's shared memory is (sm_90,
// sm_100) 128x256x64 in 4 stages (192 KB; on sm_90a two consumer
// warpgroups of m64n256 wgmma and a TMA producer); elsewhere 128x128x32 in
// 4 stages (64 KB, which sm_86 / sm_89 / sm_120 hold too). 128 rows: a group's
// ragged last tile wastes at most 127.
GemmTile GroupedGemmTile(int sm);

// The grid's m-slots: M / block_m + G (each group takes ceildiv(rows,
// block_m) slots from offsets[g] / block_m + g on).
int GroupedGemmSlots(const GroupedGemmConfig& config);

absl::StatusOr<Program> GroupedGemmProgram(const GroupedGemmConfig& config);

// Random A and B (seeded), offsets from `group_rows` (c.G becomes their
// count; c.M their sum plus `pad` rows of no group), C filled with a
// sentinel (a row of no group, or a store past a group's end, fails the
// check); one step; float64 reference per group.
absl::StatusOr<Workload> GroupedGemmWorkload(GroupedGemmConfig config,
                                             const std::vector<int>& group_rows,
                                             uint64_t seed = 1, int pad = 0);

// G ragged group sizes averaging about `mean` rows (seeded, the same on
// every machine): a quarter of them 0 or 1 when `with_empty`, the others
// drawn from [mean / 2, 3 mean / 2] and not multiples of 64. The bench
// peer (bench/peers.py grouped_gemm) draws the same sizes.
std::vector<int> RaggedGroupRows(int G, int mean, bool with_empty,
                                 uint64_t seed);

// "0,1,130" -> {0, 1, 130}: sizes >= 0.
absl::StatusOr<std::vector<int>> ParseGroupRows(const std::string& text);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_GROUPED_GEMM_H_
