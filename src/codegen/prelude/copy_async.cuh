// tessel device prelude: asynchronous global -> shared copies (cp.async).
//
// Boundary rule of tessel: a read out of range yields zero, a store out of
// range is skipped. cp.async implements the first with its src-size operand:
// when `in_bounds` is false it reads 0 bytes and zero-fills the destination.
// The global pointer must still be a valid address (clamp it to the tensor's
// base when out of range); it is not dereferenced.
//
//   tessel::dev::cp_async<16>(&As[off], &A[row * K + col], row < M);
//   tessel::dev::cp_async_commit();
//   tessel::dev::cp_async_wait<kStages - 2>();
//   __syncthreads();
#pragma once

#include "types.cuh"

namespace tessel {
namespace dev {

// Copies kBytes (4, 8 or 16) from global memory to the 32-bit shared address
// smem_dst, asynchronously. 16-byte copies bypass L1 (.cg: the tile lives in
// shared memory anyway); 4- and 8-byte copies must use .ca. Main loops pass
// precomputed addresses (smem_addr of the buffer plus a byte offset) so that
// only the stage offset changes per iteration.
template <int kBytes>
__device__ __forceinline__ void cp_async(u32 smem_dst, const void* gmem_src,
                                         bool in_bounds = true) {
  static_assert(kBytes == 4 || kBytes == 8 || kBytes == 16,
                "cp.async copies 4, 8 or 16 bytes");
  const int src_size = in_bounds ? kBytes : 0;
  if constexpr (kBytes == 16) {
    asm volatile(
        "cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_dst),
        "l"(gmem_src), "r"(src_size)
        : "memory");
  } else {
    asm volatile(
        "cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_dst),
        "l"(gmem_src), "n"(kBytes), "r"(src_size)
        : "memory");
  }
}

// The same copy to a shared-memory pointer.
template <int kBytes>
__device__ __forceinline__ void cp_async(void* smem_dst, const void* gmem_src,
                                         bool in_bounds = true) {
  cp_async<kBytes>(smem_addr(smem_dst), gmem_src, in_bounds);
}

// Closes the group of cp.async issued since the last commit.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most kPending committed groups are still in flight. The
// waiting thread sees its own copies; a __syncthreads after it publishes
// every thread's copies to the block.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  static_assert(kPending >= 0, "cp.async.wait_group takes a count >= 0");
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Waits for every cp.async of this thread.
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

}  // namespace dev
}  // namespace tessel
