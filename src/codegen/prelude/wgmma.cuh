// tessel device prelude: Hopper warpgroup MMA (wgmma.mma_async, sm_90a).
//
// The codegen writes each wgmma.mma_async itself (its accumulator operand
// list grows with N); these are the instructions around it:
//
//   tl::wgmma_fence();               // registers written above are ready
//   ... wgmma.mma_async per k16 step (k32 for fp8: 32 bytes of K either
//       way), B through tl::wgmma_desc_sw128(...)
//   tl::wgmma_commit();
//   tl::wgmma_wait<0>();             // accumulators and B's reads are done
//
// Threads that wrote shared memory a wgmma will read call
// tl::fence_proxy_async() (mbarrier.cuh) before the barrier that publishes the
// writes.
#pragma once

#include "mbarrier.cuh"
#include "types.cuh"

namespace tessel {
namespace dev {

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending)
               : "memory");
}

// The shared-memory matrix descriptor of a SWIZZLE_128B tile whose swizzle
// atom (8 rows of 128 bytes, 1024-byte aligned) holds `smem_addr`:
//   bits 0-13 start address >> 4, 16-29 leading byte offset >> 4 (for an
//   M/N-major tile stored as 128-byte column atoms: the bytes between
//   atoms; else unused, one 16-byte unit), 32-45 stride byte offset >> 4
//   (between 8-row groups), 62-63 swizzle mode 1 (128 B). The probe
//   (tools/dev/hopper_gemm_probe.cu) checks LBO 8192 / SBO 1024 for
//   [64][128 B] atoms on the H200.
__device__ __forceinline__ unsigned long long wgmma_desc_sw128(
    u32 smem_addr, int atom_bytes, int group_bytes) {
  unsigned long long desc = (smem_addr & 0x3FFFFu) >> 4;
  desc |= static_cast<unsigned long long>((atom_bytes >> 4) & 0x3FFF) << 16;
  desc |= static_cast<unsigned long long>((group_bytes >> 4) & 0x3FFF) << 32;
  desc |= 1ull << 62;
  return desc;
}

// One atom (K-major, or M/N-major up to 64 elements): LBO unused.
__device__ __forceinline__ unsigned long long wgmma_desc_sw128(
    u32 smem_addr, int group_bytes) {
  return wgmma_desc_sw128(smem_addr, 16, group_bytes);
}

}  // namespace dev
}  // namespace tessel
