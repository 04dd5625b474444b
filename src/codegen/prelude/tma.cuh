// tessel device prelude: the Tensor Memory Accelerator and warp-specialized
// register budgets (sm_90).
//
// A load moves one box of a tensor map (jit/tensor_map.h) into shared memory
// and completes on an mbarrier that expects the box's bytes:
//
// clang-format off
//   extern "C" __global__ void k(const __grid_constant__ tl::TmaDescriptor a) {
//     __shared__ alignas(1024) tl::f16 tile[128 * 64];
//     __shared__ alignas(8) tl::u64 full;
//     if (threadIdx.x == 0) { tl::mbarrier_init(&full, 1); tl::fence_barrier_init(); }
//     __syncthreads();
//     if (threadIdx.x == 0) {
//       tl::mbarrier_arrive_expect_tx(&full, sizeof(tile));
//       tl::tma_load(tile, &a, &full, /*c0=*/k0, /*c1=*/m0);
//     }
//     tl::mbarrier_wait_parity(&full, 0);
//   }
// clang-format on
//
// Coordinates are in elements, innermost first. A load's box may lie partly
// outside the tensor on any side: missing elements load as zeros. A store's
// box may run past the far edges (those elements are dropped) but must start
// at coordinates >= 0: a negative store origin faults on the H200. Shared
// tiles need 128-byte alignment, 1024 with a 128-byte swizzle.
#pragma once

#include "mbarrier.cuh"
#include "types.cuh"

namespace tessel {
namespace dev {

// A CUtensorMap as a kernel parameter: `const __grid_constant__
// TmaDescriptor` (its address must stay a parameter-space address).
struct alignas(64) TmaDescriptor {
  u64 opaque[16];
};

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900

__device__ __forceinline__ u64 tma_desc_addr(const TmaDescriptor* desc) {
  return reinterpret_cast<u64>(desc);
}

// Fetches the descriptor into the TMA unit's cache ahead of the first copy.
__device__ __forceinline__ void tma_prefetch_descriptor(
    const TmaDescriptor* desc) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(tma_desc_addr(desc))
               : "memory");
}

// Loads into the shared address dst (tl::smem_addr); c0 innermost.
__device__ __forceinline__ void tma_load(u32 dst, const TmaDescriptor* desc,
                                         u64* bar, int c0) {
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::"
      "bytes [%0], [%1, {%3}], [%2];\n" ::"r"(dst),
      "l"(tma_desc_addr(desc)), "r"(smem_addr(bar)), "r"(c0)
      : "memory");
}

__device__ __forceinline__ void tma_load(u32 dst, const TmaDescriptor* desc,
                                         u64* bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::"
      "bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
      "l"(tma_desc_addr(desc)), "r"(smem_addr(bar)), "r"(c0), "r"(c1)
      : "memory");
}

__device__ __forceinline__ void tma_load(u32 dst, const TmaDescriptor* desc,
                                         u64* bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::"
      "bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
      "l"(tma_desc_addr(desc)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

__device__ __forceinline__ void tma_load(u32 dst, const TmaDescriptor* desc,
                                         u64* bar, int c0, int c1, int c2,
                                         int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::"
      "bytes [%0], [%1, {%3, %4, %5, %6}], [%2];\n" ::"r"(dst),
      "l"(tma_desc_addr(desc)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2),
      "r"(c3)
      : "memory");
}

__device__ __forceinline__ void tma_load(u32 dst, const TmaDescriptor* desc,
                                         u64* bar, int c0, int c1, int c2,
                                         int c3, int c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::"
      "bytes [%0], [%1, {%3, %4, %5, %6, %7}], [%2];\n" ::"r"(dst),
      "l"(tma_desc_addr(desc)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2),
      "r"(c3), "r"(c4)
      : "memory");
}

// The same into a shared pointer.
template <typename... Coords>
__device__ __forceinline__ void tma_load(void* dst, const TmaDescriptor* desc,
                                         u64* bar, Coords... coords) {
  tma_load(smem_addr(dst), desc, bar, coords...);
}

// Stores a shared tile (written before by this thread's or others' generic
// stores, published by fence_proxy_async + a barrier) to the box at c0, c1
// (both >= 0).
__device__ __forceinline__ void tma_store(const TmaDescriptor* desc,
                                          const void* src, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], "
      "[%1];\n" ::"l"(tma_desc_addr(desc)),
      "r"(smem_addr(src)), "r"(c0), "r"(c1)
      : "memory");
}

// The same from a shared address (tl::smem_addr).
__device__ __forceinline__ void tma_store(const TmaDescriptor* desc, u32 src,
                                          int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], "
      "[%1];\n" ::"l"(tma_desc_addr(desc)),
      "r"(src), "r"(c0), "r"(c1)
      : "memory");
}

// Adds `bytes` (a multiple of 16) of f32 at src (shared) into dst (global),
// both 16-byte aligned, as one bulk reduction by the TMA unit (each element
// added atomically at L2). It reads src asynchronously: tma_store_commit,
// then tma_store_wait_read before src is written again.
__device__ __forceinline__ void bulk_reduce_add_f32(float* dst,
                                                    const float* src,
                                                    u32 bytes) {
  asm volatile(
      "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], "
      "[%1], %2;\n" ::"l"(dst),
      "r"(smem_addr(src)), "r"(bytes)
      : "memory");
}

__device__ __forceinline__ void tma_store_commit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// Waits until at most kPending store groups still read shared memory.
template <int kPending>
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending)
               : "memory");
}

// Waits until at most kPending store groups are incomplete (writes visible).
template <int kPending>
__device__ __forceinline__ void tma_store_wait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Warp specialization: a warpgroup gives registers back (producers) or takes
// them (consumers). Every warp of the warpgroup executes it; the count is a
// multiple of 8 in [24, 256].
template <int kRegisters>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

template <int kRegisters>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

#endif

}  // namespace dev
}  // namespace tessel
