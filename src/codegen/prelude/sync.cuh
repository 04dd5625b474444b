// tessel device prelude: barriers below and beside __syncthreads.
//
// Named barriers let a subset of warps meet (warp-specialized kernels: the
// consumer warpgroups without the producer). `count` is the number of
// threads taking part, a multiple of 32. Barrier 0 is __syncthreads'.
//
//   tessel::dev::named_barrier_sync(1, 256);  // the two consumer warpgroups
#pragma once

#include "types.cuh"

namespace tessel {
namespace dev {

__device__ __forceinline__ void named_barrier_sync(int id, int count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

__device__ __forceinline__ void named_barrier_arrive(int id, int count) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

// Lane index within the warp, and warp index within the block, read so the
// compiler knows they are warp-uniform where it can.
__device__ __forceinline__ int lane_id() { return threadIdx.x % 32; }
__device__ __forceinline__ int warp_id() {
  return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 32), 0);
}

// v, which every lane of the warp holds alike, read from lane 0 so the
// compiler knows it too: what is computed from it stays in uniform
// registers (a wgmma descriptor from the warpgroup index: no R2UR per
// wgmma). The whole warp must be here.
__device__ __forceinline__ int warp_uniform(int v) {
  return __shfl_sync(0xffffffffu, v, 0);
}

}  // namespace dev
}  // namespace tessel
