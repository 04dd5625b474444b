// Helpers of the GPU tests: device tensors from host vectors, f16 on the
// host, comparison against float64 references.
#ifndef TESSEL_TESTS_CODEGEN_GPU_UTIL_H_
#define TESSEL_TESTS_CODEGEN_GPU_UTIL_H_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstring>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "jit/device_buffer.h"
#include "jit/driver_api.h"
#include "tessel/runtime.h"

namespace tessel::testing {

inline bool HaveGpu() {
  auto d = jit::Driver();
  if (!d.ok()) return false;
  int n = 0;
  return (*d)->cuDeviceGetCount(&n) == CUDA_SUCCESS && n > 0;
}

inline std::vector<float> Random(size_t n, uint32_t seed, float lo = -1,
                                 float hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

inline uint16_t ToHalfBits(float f) {
  __half h = __float2half_rn(f);
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
inline uint16_t ToBf16Bits(float f) {
  __nv_bfloat16 h = __float2bfloat16_rn(f);
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
inline float FromBf16Bits(uint16_t b) {
  __nv_bfloat16 h;
  std::memcpy(&h, &b, 2);
  return __bfloat162float(h);
}
inline float FromHalfBits(uint16_t b) {
  __half h;
  std::memcpy(&h, &b, 2);
  return __half2float(h);
}
inline bool IsFp8(DataType t) {
  return t == DataType::kF8E4M3 || t == DataType::kF8E5M2;
}
inline __nv_fp8_interpretation_t Fp8Kind(DataType t) {
  return t == DataType::kF8E4M3 ? __NV_E4M3 : __NV_E5M2;
}
// Round to nearest even, saturating to the largest finite value.
inline uint8_t ToFp8Bits(float f, DataType t) {
  return __nv_cvt_float_to_fp8(f, __NV_SATFINITE, Fp8Kind(t));
}
inline float FromFp8Bits(uint8_t b, DataType t) {
  __half h = __nv_cvt_fp8_to_halfraw(b, Fp8Kind(t));
  return __half2float(h);
}

// A device tensor holding host data (f32, f16, bf16 or fp8).
struct DeviceTensor {
  jit::DeviceBuffer buffer;
  TensorView view;

  static DeviceTensor From(const std::vector<float>& host, DataType t,
                           std::vector<int64_t> shape) {
    DeviceTensor d;
    size_t bytes = host.size() * dtype_bytes(t);
    d.buffer = *jit::DeviceBuffer::Allocate(bytes);
    if (t == DataType::kF16 || t == DataType::kBF16) {
      std::vector<uint16_t> h(host.size());
      for (size_t i = 0; i < host.size(); ++i)
        h[i] = t == DataType::kF16 ? ToHalfBits(host[i]) : ToBf16Bits(host[i]);
      (void)d.buffer.CopyFromHost(h.data(), bytes);
    } else if (IsFp8(t)) {
      std::vector<uint8_t> h(host.size());
      for (size_t i = 0; i < host.size(); ++i) h[i] = ToFp8Bits(host[i], t);
      (void)d.buffer.CopyFromHost(h.data(), bytes);
    } else {
      (void)d.buffer.CopyFromHost(host.data(), bytes);
    }
    d.view = TensorView::Contiguous(d.buffer.ptr(), t, std::move(shape));
    return d;
  }
  std::vector<float> ToHost() const {
    size_t n = 1;
    for (int64_t s : view.shape) n *= s;
    std::vector<float> out(n);
    if (view.dtype == DataType::kF16 || view.dtype == DataType::kBF16) {
      std::vector<uint16_t> h(n);
      (void)buffer.CopyToHost(h.data(), n * 2);
      for (size_t i = 0; i < n; ++i)
        out[i] = view.dtype == DataType::kF16 ? FromHalfBits(h[i])
                                              : FromBf16Bits(h[i]);
    } else {
      (void)buffer.CopyToHost(out.data(), n * 4);
    }
    return out;
  }
};

// Host values as the device sees them after rounding to t.
inline std::vector<float> Rounded(std::vector<float> v, DataType t) {
  if (t == DataType::kF16)
    for (float& x : v) x = FromHalfBits(ToHalfBits(x));
  if (t == DataType::kBF16)
    for (float& x : v) x = FromBf16Bits(ToBf16Bits(x));
  if (IsFp8(t))
    for (float& x : v) x = FromFp8Bits(ToFp8Bits(x, t), t);
  return v;
}

// max |x - ref| / max(1, max |ref|).
inline double MaxRelError(const std::vector<float>& x,
                          const std::vector<double>& ref) {
  double worst = 0, scale = 1;
  for (double r : ref) scale = std::max(scale, std::fabs(r));
  for (size_t i = 0; i < x.size(); ++i)
    worst = std::max(worst, std::fabs(double(x[i]) - ref[i]));
  return worst / scale;
}

}  // namespace tessel::testing

#endif  // TESSEL_TESTS_CODEGEN_GPU_UTIL_H_
