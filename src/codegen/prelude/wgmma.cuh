// tessel device prelude: Hopper warpgroup MMA (wgmma.mma_async, sm_90a).
//
// The codegen writes each wgmma.mma_async itself (its accumulator operand
// list grows with N); these are the instructions around it:
//
//   tl::wgmma_fence();               // registers written above are ready
//   ... wgmma.mma_async per k16 step (k32 for fp8: 32 bytes of K either
//       way), B through tl::wgmma_desc_sw128(...) once, each step's
//       descriptor tl::wgmma_desc_add(base, offset >> 4)
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
//   [64][128 B] atoms on the H200. Built as two 32-bit words: the high one
//   is a constant.
__device__ __forceinline__ unsigned long long wgmma_desc_sw128(
    u32 smem_addr, int atom_bytes, int group_bytes) {
  const u32 lo = ((smem_addr & 0x3FFFFu) >> 4) |
                 ((static_cast<u32>(atom_bytes >> 4) & 0x3FFFu) << 16);
  const u32 hi = (static_cast<u32>(group_bytes >> 4) & 0x3FFFu) | (1u << 30);
  return (static_cast<unsigned long long>(hi) << 32) | lo;
}

// One atom (K-major, or M/N-major up to 64 elements): LBO unused.
__device__ __forceinline__ unsigned long long wgmma_desc_sw128(
    u32 smem_addr, int group_bytes) {
  return wgmma_desc_sw128(smem_addr, 16, group_bytes);
}

// The descriptor of the tile `units` 16-byte units past `desc`'s (a k step,
// an N piece, the next m64 rows): what wgmma_desc_sw128 gives for its
// address, as one 32-bit add to the start address field instead of
// building it again (CUTLASS's descriptor iterator does the same). No carry
// leaves bits 0-13: a shared address is below 2^18 (228 KB on sm_90), so
// the field holds addr >> 4 whole and base + units is the field of the
// valid address base + 16 units (units may be negative: no borrow either).
__device__ __forceinline__ unsigned long long wgmma_desc_add(
    unsigned long long desc, int units) {
  const u32 lo = static_cast<u32>(desc) + static_cast<u32>(units);
  return (desc & 0xFFFFFFFF00000000ull) | lo;
}

}  // namespace dev
}  // namespace tessel
