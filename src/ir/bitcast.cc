#include "src/ir/bitcast.h"

#include "absl/strings/str_cat.h"
#include "src/ir/op.h"

namespace tessel::ir {
namespace {

bool Is32(DataType t) {
  return t == DataType::kF32 || t == DataType::kI32 || t == DataType::kU32;
}
bool Is16(DataType t) {
  return t == DataType::kF16 || t == DataType::kBF16 || t == DataType::kI16;
}

}  // namespace

std::optional<std::string> BitcastRefusal(DataType from, DataType to) {
  if ((Is32(from) && Is32(to)) || (Is16(from) && Is16(to))) return std::nullopt;
  const std::string f(dtype_name(from)), t(dtype_name(to));
  if (dtype_bytes(from) != dtype_bytes(to)) {
    return absl::StrCat(f, " has ", dtype_bytes(from) * 8, " bits and ", t, " ",
                        dtype_bytes(to) * 8,
                        "; a bitcast keeps the width (T::cast converts)");
  }
  return absl::StrCat("a bitcast from ", f, " to ", t,
                      " is not supported (f32, i32, u32 among themselves; "
                      "f16, bf16, i16 among themselves)");
}

Expr MakeBitcast(Expr value, DataType to) {
  return Call(to, kBitcastName, {std::move(value)});
}

const Expr* AsBitcast(const Expr& e) {
  const auto* c = e.As<CallNode>();
  if (c == nullptr || c->name != kBitcastName || c->args.size() != 1)
    return nullptr;
  return &c->args[0];
}

}  // namespace tessel::ir
