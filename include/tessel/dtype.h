// Element types of tensors, tiles and expressions.
//
//   auto A = p.tensor("A", {M, K}, tessel::f16);
//   if (tessel::is_float(A.dtype())) ...
//   std::cout << tessel::dtype_name(tessel::bf16);   // "bf16"
#ifndef TESSEL_DTYPE_H_
#define TESSEL_DTYPE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace tessel {

enum class DataType : uint8_t {
  kBool,
  kI8,
  kU8,
  kI16,
  kI32,
  kU32,
  kI64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kF8E4M3,  // fp8, 4 exponent bits, 3 mantissa bits (no infinities)
  kF8E5M2,  // fp8, 5 exponent bits, 2 mantissa bits
};

inline constexpr DataType bool_ = DataType::kBool;
inline constexpr DataType i8 = DataType::kI8;
inline constexpr DataType u8 = DataType::kU8;
inline constexpr DataType i16 = DataType::kI16;
inline constexpr DataType i32 = DataType::kI32;
inline constexpr DataType u32 = DataType::kU32;
inline constexpr DataType i64 = DataType::kI64;
inline constexpr DataType f16 = DataType::kF16;
inline constexpr DataType bf16 = DataType::kBF16;
inline constexpr DataType f32 = DataType::kF32;
inline constexpr DataType f64 = DataType::kF64;
inline constexpr DataType fp8_e4m3 = DataType::kF8E4M3;
inline constexpr DataType fp8_e5m2 = DataType::kF8E5M2;

// One of the enumerators above (a number cast to DataType need not be): what
// the builder, HostTensor and launch() check before they use a dtype.
bool dtype_valid(DataType t);
// Storage size in bits (bool counts as 8: it is stored as a byte).
int dtype_bits(DataType t);
inline int dtype_bytes(DataType t) { return dtype_bits(t) / 8; }
// Floating point: f16, bf16, f32, f64 and both fp8 kinds.
bool is_float(DataType t);
// Integers, signed or not; bool is not an integer.
bool is_int(DataType t);
bool is_signed_int(DataType t);
bool is_unsigned_int(DataType t);
inline bool is_bool(DataType t) { return t == DataType::kBool; }
// Short name: "bool", "i8", ..., "f16", "bf16", "fp8_e4m3".
std::string_view dtype_name(DataType t);
// Inverse of dtype_name (which also takes "e4m3" / "e5m2" for the fp8
// kinds); nullopt for an unknown name.
std::optional<DataType> dtype_from_name(std::string_view name);

}  // namespace tessel

#endif  // TESSEL_DTYPE_H_
