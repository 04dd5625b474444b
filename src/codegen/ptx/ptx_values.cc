// Values as PTX operands: constants as immediates (or registers where PTX
// takes none), and Emit, which computes each pure instruction once per
// scope, as early as its operands allow (ptx_emitter.h, "Scopes").
#include <algorithm>
#include <bit>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "src/codegen/ptx/ptx_emitter.h"

namespace tessel::codegen::ptx {

Value Emitter::Const(DataType t, int64_t v) {
  return Value{.dtype = t, .int_const = Wrap(t, v)};
}

std::string Emitter::Operand(const Value& v) {
  if (v.int_const) {
    if (v.dtype == DataType::kBool) return InReg(v);
    return absl::StrCat(*v.int_const);
  }
  if (v.float_const) {
    if (v.dtype == DataType::kF64) {
      return absl::StrFormat("0d%016X",
                             std::bit_cast<uint64_t>(*v.float_const));
    }
    if (v.dtype != DataType::kF32) return InReg(v);
    return absl::StrFormat(
        "0f%08X", std::bit_cast<uint32_t>(static_cast<float>(*v.float_const)));
  }
  return v.reg;
}

std::string Emitter::InReg(const Value& v) {
  if (!v.is_const()) return v.reg;
  const std::string key = absl::StrCat("const.", ValueType(v.dtype), ".",
                                       v.int_const ? *v.int_const : 0, ".",
                                       v.float_const ? *v.float_const : 0.0);
  if (std::string r = Lookup(key); !r.empty()) return r;
  const std::string r = NewReg(v.dtype);
  if (v.dtype == DataType::kBool) {
    Line(absl::StrCat("setp.", *v.int_const ? "eq" : "ne", ".u32 ", r,
                      ", 0, 0;"));
  } else if (v.dtype == DataType::kF16 || v.dtype == DataType::kBF16) {
    Value f = v;
    f.dtype = DataType::kF32;
    if (v.int_const)
      f = Value{.dtype = DataType::kF32,
                .float_const = static_cast<double>(*v.int_const)};
    Line(absl::StrCat("cvt.rn.", ValueType(v.dtype), ".f32 ", r, ", ",
                      Operand(f), ";"));
  } else {
    Line(absl::StrCat("mov", RegType(v.dtype), " ", r, ", ", Operand(v), ";"));
  }
  // Constants could live at the top; keep them in the current scope (a
  // register defined in a branch is not defined after it).
  Remember(key, r);
  return r;
}

Value Emitter::Emit(DataType t, const std::string& op, std::vector<Value> in) {
  // Constants that are no immediate get their register here first.
  for (Value& v : in) {
    if (v.is_const() &&
        (v.dtype == DataType::kBool || v.dtype == DataType::kF16 ||
         v.dtype == DataType::kBF16)) {
      const std::string r = InReg(v);
      v = Value{.dtype = v.dtype, .reg = r, .key = r};
    }
  }
  std::string key = op;
  for (const Value& v : in)
    absl::StrAppend(&key, " ", v.is_const() ? Operand(v) : v.key);
  if (std::string r = Lookup(key); !r.empty())
    return Value{.dtype = t, .reg = r, .key = r};
  // The outermost scope every operand is defined in, not past a loop.
  int depth = 0;
  for (const Value& v : in) depth = std::max(depth, Depth(v));
  for (int d = static_cast<int>(scopes_.size()) - 1; d > depth; --d) {
    if (scopes_[d].barrier) depth = d;
  }
  const int here = static_cast<int>(scopes_.size()) - 1;
  while (depth < here && scopes_[depth].hoist < 0) ++depth;
  std::vector<std::string> operands;
  for (const Value& v : in) operands.push_back(Operand(v));
  const std::string r = NewReg(t);
  const std::string line =
      absl::StrCat("\t", op, " ", r, operands.empty() ? "" : ", ",
                   absl::StrJoin(operands, ", "), ";\n");
  absl::StrAppend(
      &segments_[depth < here ? scopes_[depth].hoist : segments_.size() - 1],
      line);
  scopes_[depth].cse[key] = r;
  depth_[r] = depth;
  return Value{.dtype = t, .reg = r, .key = r};
}

// Whether a register value still holds what it held when v was taken.
bool Emitter::Current(const Value& v) {
  if (v.is_const() || v.key == v.reg) return true;
  return v.key == absl::StrCat(v.reg, "@", versions_[v.reg]);
}

}  // namespace tessel::codegen::ptx
