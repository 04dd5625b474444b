// tessel device prelude: shared-memory mbarriers and async-proxy fences.
//
// An mbarrier is a u64 in shared memory. It completes a phase once its
// expected arrivals (and, on sm_90, expected transaction bytes) are in;
// waiters poll with the parity of the phase they wait for.
//
//   __shared__ alignas(8) tessel::dev::u64 bar[kStages];
//   if (threadIdx.x == 0) {
//     for (int s = 0; s < kStages; ++s) tessel::dev::mbarrier_init(&bar[s],
//     128); tessel::dev::fence_barrier_init();
//   }
//   __syncthreads();
//   tessel::dev::mbarrier_arrive(&bar[i % kStages]);
//   tessel::dev::mbarrier_wait_parity(&bar[i % kStages], (i / kStages) % 2);
#pragma once

#include "types.cuh"

namespace tessel {
namespace dev {

// Sets the expected arrival count of a barrier (one thread, before use).
__device__ __forceinline__ void mbarrier_init(u64* bar, u32 arrive_count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(smem_addr(bar)),
               "r"(arrive_count)
               : "memory");
}

// Arrives once on the barrier; returns the phase state token.
__device__ __forceinline__ u64 mbarrier_arrive(u64* bar) {
  u64 state;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];\n"
               : "=l"(state)
               : "r"(smem_addr(bar))
               : "memory");
  return state;
}

// Makes the barrier track this thread's prior cp.async: the arrival happens
// when they land (.noinc: counted in the init arrive_count).
__device__ __forceinline__ void cp_async_mbarrier_arrive(u64* bar) {
  asm volatile(
      "cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(smem_addr(bar))
      : "memory");
}

// True once the phase with the given parity has completed (non-blocking).
__device__ __forceinline__ bool mbarrier_test_parity(u64* bar, u32 parity) {
  u32 done;
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      "  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
#else
      "  mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n"
#endif
      "  selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

// Blocks until the phase with the given parity has completed. On sm_90
// try_wait suspends in hardware for a while per poll; on sm_80 this spins.
__device__ __forceinline__ void mbarrier_wait_parity(u64* bar, u32 parity) {
  while (!mbarrier_test_parity(bar, parity)) {
  }
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define TESSEL_HAS_MBARRIER_TX 1

// Arrives once and adds tx_bytes to the transaction count the phase waits
// for (TMA copies complete them).
__device__ __forceinline__ void mbarrier_arrive_expect_tx(u64* bar,
                                                          u32 tx_bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(
                   smem_addr(bar)),
               "r"(tx_bytes)
               : "memory");
}

// Adds tx_bytes to the expected transaction count without arriving.
__device__ __forceinline__ void mbarrier_expect_tx(u64* bar, u32 tx_bytes) {
  asm volatile(
      "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(
          smem_addr(bar)),
      "r"(tx_bytes)
      : "memory");
}

// Orders this thread's generic-proxy shared-memory writes before later
// async-proxy accesses (TMA store, wgmma operand reads).
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Makes mbarrier_init visible to the async proxy and the cluster.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
#else
// sm_80: no async proxy; initialization is published by the __syncthreads
// that must follow it anyway.
__device__ __forceinline__ void fence_barrier_init() {}
#endif

}  // namespace dev
}  // namespace tessel
