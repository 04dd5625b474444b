// tessel device prelude: a pair of blocks in a thread-block cluster
// (sm_90), as the warp-specialized GEMM runs them (PassConfig::cluster_size):
// each block loads half of a tile both need and the TMA multicasts it into
// both blocks' shared memory, completing on the same mbarrier of each.
//
// clang-format off
//   if (threadIdx.x == 0) { tl::mbarrier_init(&empty, 2 * warps); tl::fence_barrier_init(); }
//   __syncthreads();
//   tl::cluster_sync();                    // the peer's barriers exist now
//   ...
//   tl::tma_load_multicast(half, &map, &full, 0b11, c0, c1 + rank * rows / 2);
//   ...
//   tl::mbarrier_arrive_pair(&empty);      // this block's and the peer's
// clang-format on
#pragma once

#include "mbarrier.cuh"
#include "tma.cuh"
#include "types.cuh"

namespace tessel {
namespace dev {

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900

// This block's rank in its cluster.
__device__ __forceinline__ u32 cluster_block_rank() {
  u32 rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

// Every thread of every block of the cluster arrives, then waits: what the
// blocks wrote before (mbarrier inits) is visible to all after.
__device__ __forceinline__ void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;\n" ::
          : "memory");
}

// In a cluster of two: lane 0 of the calling warp arrives on `bar` of this
// block, lane 1 on the same barrier of the other block. Such a barrier
// counts two arrivals per warp that calls this, over both blocks.
__device__ __forceinline__ void mbarrier_arrive_pair(u64* bar) {
  const u32 lane = threadIdx.x % 32;
  if (lane < 2) {
    u32 remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
                 : "=r"(remote)
                 : "r"(smem_addr(bar)), "r"(cluster_block_rank() ^ lane));
    asm volatile(
        "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(
            remote)
        : "memory");
  }
}

// tma_load (tma.cuh) into the shared address dst of every block in `mask`
// (bit i: rank i), each completing on its barrier at bar's address.
__device__ __forceinline__ void tma_load_multicast(u32 dst,
                                                   const TmaDescriptor* desc,
                                                   u64* bar, u16 mask, int c0,
                                                   int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::"
      "bytes.multicast::cluster [%0], [%1, {%4, %5}], [%2], %3;\n" ::"r"(dst),
      "l"(tma_desc_addr(desc)), "r"(smem_addr(bar)), "h"(mask), "r"(c0), "r"(c1)
      : "memory");
}

__device__ __forceinline__ void tma_load_multicast(u32 dst,
                                                   const TmaDescriptor* desc,
                                                   u64* bar, u16 mask, int c0,
                                                   int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::"
      "bytes.multicast::cluster [%0], [%1, {%4, %5, %6}], [%2], %3;\n" ::"r"(
          dst),
      "l"(tma_desc_addr(desc)), "r"(smem_addr(bar)), "h"(mask), "r"(c0),
      "r"(c1), "r"(c2)
      : "memory");
}

__device__ __forceinline__ void tma_load_multicast(u32 dst,
                                                   const TmaDescriptor* desc,
                                                   u64* bar, u16 mask, int c0,
                                                   int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::"
      "bytes.multicast::cluster [%0], [%1, {%4, %5, %6, %7}], [%2], %3;\n" ::
          "r"(dst),
      "l"(tma_desc_addr(desc)), "r"(smem_addr(bar)), "h"(mask), "r"(c0),
      "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}

#endif

}  // namespace dev
}  // namespace tessel
