// fp8 GEMM with fine-grained scales, DeepGEMM's (DeepSeek-V3 sec. 3.3):
// D = (A * sa) (B * sb)^T in bf16, A [M, K] and B [N, K] e4m3, A scaled per
// row and 128 of K, B per 128 x 128 block. Each 128-wide K step's wgmma
// result goes into a fresh f32 tile, which the consumers add into the main
// accumulator times sa[k, m] * sb[n / 128, k]: the tensor cores' fp8
// accumulation (about 14 bits) never runs longer than 128 products.
//
//   tessel::samples::Fp8BlockScaledGemmConfig c{.M = 4096, .N = 7168,
//                                               .K = 16384};
//   absl::StatusOr<tessel::Program> p =
//       tessel::samples::Fp8BlockScaledGemmProgram(c);
//   // parameters: A [M, K] e4m3, sa [K / 128, ScaleRows(M)] f32,
//   // B [N, K] e4m3, sb [ceildiv(N, 128), K / 128] f32, D [M, N] bf16.
//
// sa is stored transposed, one row of M scales per K block (DeepGEMM's
// TMA-aligned column-major scales, and torch._scaled_mm's outer-dim-major
// [M, K / 128] 1x128 scales, are these bytes), each row padded to a
// multiple of 4 floats so that it is whole 16-byte chunks: the producer
// loads a [1, block_m] box of it per K step with the A and B tiles. sb's
// row of the block's columns is loaded once per output tile. Rows past M
// and columns past N read zeros (the TMA's boundary) and are not stored.
// K must be a multiple of 128.
//
// On sm_90a this is the warp-specialized TMA kernel (a producer warpgroup,
// two consumer warpgroups each m64n128k32 wgmma); fp8 tensor cores need
// sm_89+ and tessel's fp8 gemm path is wgmma, so elsewhere the gemms run
// as FMA loops (CompiledKernel::schedule() says so) and the registered
// factory refuses archs other than sm_90a.
//
// Registered for tessel-warmup as "fp8_blockscaled_gemm" with params M, N,
// K and optional groups (the grouped contiguous kernel, M the padded
// total), block_m, block_n, num_stages, threads, panel, cluster (the grid
// for pairs; the manifest entry's pass_config.cluster_size 2 multicasts).
#ifndef TESSEL_SAMPLES_FP8_BLOCKSCALED_GEMM_H_
#define TESSEL_SAMPLES_FP8_BLOCKSCALED_GEMM_H_

#include <cstdint>
#include <source_location>
#include <vector>

#include "absl/status/statusor.h"
#include "samples/workload.h"
#include "tessel/tessel.h"

namespace tessel::samples {

// The scale granularity along K (and along N for B), and the K step.
inline constexpr int kFp8ScaleBlock = 128;

struct Fp8BlockScaledGemmConfig {
  int M = 0;
  int N = 0;
  int K = 0;  // a multiple of 128
  // 128 x 128 over two consumer warpgroups: 64 registers of accumulator and
  // 64 of the step's fresh tile a thread; 6 stages of 32.5 KB.
  int block_m = 128;
  int block_n = 128;
  int num_stages = 6;
  int threads = 256;
  int panel = 8;  // T::use_swizzle; 0: plain raster order
  // > 0: DeepGEMM's grouped contiguous layout (MoE prefill): B [groups, N,
  // K], sb [groups, ceildiv(N, 128), K / 128], and m_indices [M] i32 (a
  // parameter between sb and D) the group of each row of A and D. Each
  // group's rows are contiguous and padded to a multiple of block_m (M is
  // the padded total); a tile's group is its first row's, padding rows are
  // -1 (their tiles read zeros for B: D rows of 0).
  int groups = 0;
  // 2: the grid is built for clusters of two blocks (sm_90a,
  // PassConfig::cluster_size 2, which the workload's step sets): the dense
  // kernel pairs tiles along M (sharing B's tile) or N (sharing A's), the
  // grouped one along N (a pair along M may span two groups). Where every
  // pairable tile count is odd the grid takes one more tile there, which
  // reads zeros and stores nothing.
  int cluster = 1;
};

// sa's padded row length: M rounded up to a multiple of 4.
int64_t Fp8ScaleRows(int64_t M);

// The tile program; InvalidArgument naming `loc` (the caller's line) for a
// bad size or tile, K not a multiple of 128 among them.
absl::StatusOr<Program> Fp8BlockScaledGemmProgram(
    const Fp8BlockScaledGemmConfig& config,
    std::source_location loc = std::source_location::current());

// Random A, B (e4m3 in [-1, 1]) and scales (f32 in [0.5, 1.5)), D zeroed,
// one step, and the float64 reference of the dequantized inputs. With
// group_rows (grouped contiguous: config.groups and M are set from it),
// group g has group_rows[g] rows (0 allowed), each group padded with zero
// rows of A (m_indices -1) to a multiple of block_m.
absl::StatusOr<Workload> Fp8BlockScaledGemmWorkload(
    const Fp8BlockScaledGemmConfig& config, uint64_t seed = 1,
    const std::vector<int>& group_rows = {});

// D = sum over K blocks kb of sa[kb, m] sb[n / 128, kb] A[m, kb] . B[n, kb]
// in float64 (shapes as above); grouped (B [G, N, K]) with B and sb of
// group m_indices[m], 0 for rows of group -1.
HostTensor ReferenceFp8BlockScaledGemm(const HostTensor& a,
                                       const HostTensor& sa,
                                       const HostTensor& b,
                                       const HostTensor& sb,
                                       const HostTensor* m_indices = nullptr);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_FP8_BLOCKSCALED_GEMM_H_
