// tessel device prelude: warp and block reductions.
//
// warp_reduce_* combine values across kWidth consecutive lanes (a power of
// two <= 32) with butterfly shuffles; every lane of the group gets the
// result. kWidth = 4 reduces across the 4 lanes that share an mma
// accumulator row. block_reduce_* combine across the whole block through a
// shared scratch array of one value per warp, and return the result in
// every thread; they contain __syncthreads, so call them from every thread.
//
//   float row_max = tessel::dev::warp_reduce_max<4>(local_max);
//   __shared__ float scratch[32];
//   float total = tessel::dev::block_reduce_sum(partial, scratch);
#pragma once

#include "minmax.cuh"
#include "types.cuh"

namespace tessel {
namespace dev {

struct SumOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return a + b;
  }
};
// tl::max / tl::min: the element-wise order (minmax.cuh) for every type.
struct MaxOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return max(a, b);
  }
};
struct MinOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return min(a, b);
  }
};

template <int kWidth, typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
  static_assert(kWidth >= 1 && kWidth <= 32 && (kWidth & (kWidth - 1)) == 0,
                "warp reduction width is a power of two <= 32");
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset /= 2) {
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset, kWidth));
  }
  return v;
}

template <int kWidth = 32, typename T>
__device__ __forceinline__ T warp_reduce_sum(T v) {
  return warp_reduce<kWidth>(v, SumOp{});
}
template <int kWidth = 32, typename T>
__device__ __forceinline__ T warp_reduce_max(T v) {
  return warp_reduce<kWidth>(v, MaxOp{});
}
template <int kWidth = 32, typename T>
__device__ __forceinline__ T warp_reduce_min(T v) {
  return warp_reduce<kWidth>(v, MinOp{});
}

// The exclusive prefix sum of v over the lanes of each group of kWidth
// (a power of two <= 32): lanes below this one, or above it with kReverse
// (a reversed scan). The row scans of cumsum over register tiles.
//
//   float before = tessel::dev::warp_scan_exclusive_sum<32, false>(total);
template <int kWidth, bool kReverse, typename T>
__device__ __forceinline__ T warp_scan_exclusive_sum(T v) {
  static_assert(kWidth >= 1 && kWidth <= 32 && (kWidth & (kWidth - 1)) == 0,
                "warp scan width is a power of two <= 32");
  const int lane = threadIdx.x % kWidth;
  T incl = v;
#pragma unroll
  for (int d = 1; d < kWidth; d *= 2) {
    T o = kReverse ? __shfl_down_sync(0xffffffffu, incl, d, kWidth)
                   : __shfl_up_sync(0xffffffffu, incl, d, kWidth);
    if (kReverse ? lane + d < kWidth : lane >= d) incl = incl + o;
  }
  T prev = kReverse ? __shfl_down_sync(0xffffffffu, incl, 1, kWidth)
                    : __shfl_up_sync(0xffffffffu, incl, 1, kWidth);
  const bool first = kReverse ? lane == kWidth - 1 : lane == 0;
  return first ? T(0) : prev;
}

// v of the last lane of each group of kWidth (the first with kReverse): after
// an exclusive scan, that lane's before + v is its group's total, which the
// row scans of cumsum carry into their next chunk with one shuffle.
//
//   float carry = tessel::dev::warp_group_last<32, false>(before + total);
template <int kWidth, bool kReverse, typename T>
__device__ __forceinline__ T warp_group_last(T v) {
  return __shfl_sync(0xffffffffu, v, kReverse ? 0 : kWidth - 1, kWidth);
}

// scratch holds at least blockDim / 32 values. The trailing __syncthreads
// lets the caller reuse scratch right away.
template <typename T, typename Op>
__device__ __forceinline__ T block_reduce(T v, T* scratch, Op op) {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int num_warps = (blockDim.x + 31) / 32;
  v = warp_reduce<32>(v, op);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  T total = scratch[0];
  for (int w = 1; w < num_warps; ++w) total = op(total, scratch[w]);
  __syncthreads();
  return total;
}

template <typename T>
__device__ __forceinline__ T block_reduce_sum(T v, T* scratch) {
  return block_reduce(v, scratch, SumOp{});
}
template <typename T>
__device__ __forceinline__ T block_reduce_max(T v, T* scratch) {
  return block_reduce(v, scratch, MaxOp{});
}
template <typename T>
__device__ __forceinline__ T block_reduce_min(T v, T* scratch) {
  return block_reduce(v, scratch, MinOp{});
}

}  // namespace dev
}  // namespace tessel
