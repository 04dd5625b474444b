// Programs that reinterpret bits (T::bitcast), shared by bitcast_test.cc
// (the interpreter against std::bit_cast, the generated code) and
// bitcast_gpu_test.cc (the GPU against the interpreter).
#ifndef TESSEL_TESTS_CODEGEN_BITCAST_CASES_H_
#define TESSEL_TESTS_CODEGEN_BITCAST_CASES_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "tessel/tessel.h"

namespace tessel::testing {

constexpr int kBitcastN = 256;

// 32-bit words and f16 -> bf16: Bits = X's bits (i32), Next = the float
// after X (its u32 bits + 1), Sign = X's sign bit, AsBf16 = H's bits as
// bf16. Every dtype here the PTX emitter spells.
inline absl::StatusOr<Program> Bitcast32Program() {
  namespace T = tessel;
  T::ProgramBuilder p("bitcast32");
  auto X = p.tensor("X", {kBitcastN}, T::f32);
  auto H = p.tensor("H", {kBitcastN}, T::f16);
  auto Bits = p.tensor("Bits", {kBitcastN}, T::i32);
  auto Next = p.tensor("Next", {kBitcastN}, T::f32);
  auto Sign = p.tensor("Sign", {kBitcastN}, T::u32);
  auto AsBf16 = p.tensor("AsBf16", {kBitcastN}, T::bf16);
  {
    T::Kernel kernel(kBitcastN / 128, {.threads = 128});
    auto [bx] = kernel.block_index();
    for (auto i : T::Parallel(128)) {
      T::Expr j = bx * 128 + i;
      Bits(j) = T::bitcast(X(j), T::i32);
      T::Expr u = T::bitcast(X(j), T::u32);
      Next(j) = T::bitcast(u + T::cast(1, T::u32), T::f32);
      Sign(j) = u >> T::cast(31, T::u32);
      AsBf16(j) = T::bitcast(H(j), T::bf16);
    }
  }
  return p.finish();
}

// 16-bit values: HBits = H's bits (i16), Back = HBits read as f16 again,
// FromBf16 = B's bits as f16.
inline absl::StatusOr<Program> Bitcast16Program() {
  namespace T = tessel;
  T::ProgramBuilder p("bitcast16");
  auto H = p.tensor("H", {kBitcastN}, T::f16);
  auto B = p.tensor("B", {kBitcastN}, T::bf16);
  auto HBits = p.tensor("HBits", {kBitcastN}, T::i16);
  auto Back = p.tensor("Back", {kBitcastN}, T::f16);
  auto FromBf16 = p.tensor("FromBf16", {kBitcastN}, T::f16);
  {
    T::Kernel kernel(kBitcastN / 128, {.threads = 128});
    auto [bx] = kernel.block_index();
    for (auto i : T::Parallel(128)) {
      T::Expr j = bx * 128 + i;
      T::Expr bits = T::bitcast(H(j), T::i16);
      HBits(j) = bits;
      Back(j) = T::bitcast(bits, T::f16);
      FromBf16(j) = T::bitcast(B(j), T::f16);
    }
  }
  return p.finish();
}

// Values with every sign, zeros, subnormals and large magnitudes.
inline double BitcastValue(int i) {
  const double v[] = {0.0, -0.0, 1.0, -1.5, 3.14159, 1e-6, -65504.0, 0.1};
  return v[i % 8] * (1 + (i / 8) % 5);
}

inline std::vector<HostTensor> MakeBitcast32Args() {
  HostTensor x(DataType::kF32, {kBitcastN}), h(DataType::kF16, {kBitcastN});
  for (int i = 0; i < kBitcastN; ++i) {
    x.set_flat(i, BitcastValue(i) * 1e3);
    h.set_flat(i, BitcastValue(i + 3));
  }
  std::vector<HostTensor> a;
  a.push_back(std::move(x));
  a.push_back(std::move(h));
  a.emplace_back(DataType::kI32, std::vector<int64_t>{kBitcastN});
  a.emplace_back(DataType::kF32, std::vector<int64_t>{kBitcastN});
  a.emplace_back(DataType::kU32, std::vector<int64_t>{kBitcastN});
  a.emplace_back(DataType::kBF16, std::vector<int64_t>{kBitcastN});
  return a;
}

inline std::vector<HostTensor> MakeBitcast16Args() {
  HostTensor h(DataType::kF16, {kBitcastN}), b(DataType::kBF16, {kBitcastN});
  for (int i = 0; i < kBitcastN; ++i) {
    h.set_flat(i, BitcastValue(i));
    b.set_flat(i, BitcastValue(i + 5) * 1e-3);
  }
  std::vector<HostTensor> a;
  a.push_back(std::move(h));
  a.push_back(std::move(b));
  a.emplace_back(DataType::kI16, std::vector<int64_t>{kBitcastN});
  a.emplace_back(DataType::kF16, std::vector<int64_t>{kBitcastN});
  a.emplace_back(DataType::kF16, std::vector<int64_t>{kBitcastN});
  return a;
}

}  // namespace tessel::testing

#endif  // TESSEL_TESTS_CODEGEN_BITCAST_CASES_H_
