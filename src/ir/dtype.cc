#include "tessel/dtype.h"

#include <array>

namespace tessel {
namespace {

struct DTypeInfo {
  DataType type;
  std::string_view name;
  int bits;
};

constexpr std::array<DTypeInfo, 13> kInfos = {{
    {DataType::kBool, "bool", 8},
    {DataType::kI8, "i8", 8},
    {DataType::kU8, "u8", 8},
    {DataType::kI16, "i16", 16},
    {DataType::kI32, "i32", 32},
    {DataType::kU32, "u32", 32},
    {DataType::kI64, "i64", 64},
    {DataType::kF16, "f16", 16},
    {DataType::kBF16, "bf16", 16},
    {DataType::kF32, "f32", 32},
    {DataType::kF64, "f64", 64},
    {DataType::kF8E4M3, "fp8_e4m3", 8},
    {DataType::kF8E5M2, "fp8_e5m2", 8},
}};

// An invalid value (a number cast to DataType) names itself "invalid" in the
// errors that reject it, rather than reading past the table.
constexpr DTypeInfo kInvalid = {DataType::kBool, "invalid", 8};

const DTypeInfo& Info(DataType t) {
  return dtype_valid(t) ? kInfos[static_cast<int>(t)] : kInvalid;
}

}  // namespace

bool dtype_valid(DataType t) { return static_cast<size_t>(t) < kInfos.size(); }

int dtype_bits(DataType t) { return Info(t).bits; }

bool is_float(DataType t) {
  switch (t) {
    case DataType::kF16:
    case DataType::kBF16:
    case DataType::kF32:
    case DataType::kF64:
    case DataType::kF8E4M3:
    case DataType::kF8E5M2:
      return true;
    default:
      return false;
  }
}

bool is_signed_int(DataType t) {
  return t == DataType::kI8 || t == DataType::kI16 || t == DataType::kI32 ||
         t == DataType::kI64;
}

bool is_unsigned_int(DataType t) {
  return t == DataType::kU8 || t == DataType::kU32;
}

bool is_int(DataType t) { return is_signed_int(t) || is_unsigned_int(t); }

std::string_view dtype_name(DataType t) { return Info(t).name; }

std::optional<DataType> dtype_from_name(std::string_view name) {
  for (const DTypeInfo& info : kInfos) {
    if (info.name == name) return info.type;
  }
  // The PTX spellings of the fp8 kinds (wgmma's .e4m3 / .e5m2).
  if (name == "e4m3") return DataType::kF8E4M3;
  if (name == "e5m2") return DataType::kF8E5M2;
  return std::nullopt;
}

}  // namespace tessel
