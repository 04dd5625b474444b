// Warp shuffles as PTX: the prelude's warp reductions, scans and broadcasts
// (src/codegen/prelude/reduce.cuh), one shfl.sync per step, the mask and
// the group width spelled as CUDA's __shfl_*_sync spell them.
#include "absl/strings/str_cat.h"
#include "src/codegen/ptx/ptx_emitter.h"
#include "src/passes/intrinsics.h"

namespace tessel::codegen::ptx {

Value Emitter::WarpShuffle(const ir::CallNode& c, passes::Intrinsic id) {
  using I = passes::Intrinsic;
  switch (id) {
    case I::kWarpReduceSum:
    case I::kWarpReduceMax:
    case I::kWarpReduceMin: {
      const int64_t width = *ir::AsConstInt(c.args[0]);
      Value v = Expr(c.args[1]);
      const DataType t = v.dtype;
      if (t != DataType::kF32 && t != DataType::kI32) {
        Fail("a warp reduction of this dtype");
        return Const(DataType::kI32, 0);
      }
      const std::string op = id == I::kWarpReduceSum   ? "add."
                             : id == I::kWarpReduceMax ? "max."
                                                       : "min.";
      // __shfl_xor_sync(~0u, v, offset, width): c = ((32 - width) << 8) | 31.
      const int64_t clamp = ((32 - width) << 8) | 31;
      for (int64_t offset = width / 2; offset > 0; offset /= 2) {
        const std::string o = NewReg(t);
        Line(absl::StrCat("shfl.sync.bfly.b32 ", o, ", ", InReg(v), ", ",
                          offset, ", ", clamp, ", -1;"));
        const std::string r = NewReg(t);
        Line(absl::StrCat(op, ValueType(t), " ", r, ", ", InReg(v), ", ", o,
                          ";"));
        v = Value{.dtype = t, .reg = r, .key = r};
      }
      return v;
    }
    case I::kWarpScanExclusiveSum:
      return WarpScanExclusiveSum(c);
    case I::kWarpGroupLast: {
      // __shfl_sync(~0u, v, reverse ? 0 : width - 1, width).
      const int64_t width = *ir::AsConstInt(c.args[0]);
      const bool reverse = !ir::IsConstInt(c.args[1], 0);
      const Value v = Expr(c.args[2]);
      if (v.dtype != DataType::kF32 && v.dtype != DataType::kI32) {
        Fail("a warp shuffle of this dtype");
        return Const(DataType::kI32, 0);
      }
      const std::string r = NewReg(v.dtype);
      Line(absl::StrCat("shfl.sync.idx.b32 ", r, ", ", InReg(v), ", ",
                        reverse ? 0 : width - 1, ", ", ((32 - width) << 8) | 31,
                        ", -1;"));
      return Value{.dtype = v.dtype, .reg = r, .key = r};
    }
    case I::kWarpUniform: {
      const Value v = Expr(c.args[0]);
      const std::string r = NewReg(v.dtype);
      Line(absl::StrCat("shfl.sync.idx.b32 ", r, ", ", InReg(v),
                        ", 0, 31, -1;"));
      return Value{.dtype = v.dtype, .reg = r, .key = r};
    }
    default:
      Fail(absl::StrCat("expression intrinsic ", c.name));
      return Const(DataType::kI32, 0);
  }
}

// prelude/reduce.cuh's warp_scan_exclusive_sum<width, reverse>(v): the
// same Hillis-Steele steps, in the same order of additions. A shuffle's
// predicate says whether its source lane is in this lane's group of width,
// which is the prelude's `lane >= d` (`lane + d < width` reversed).
Value Emitter::WarpScanExclusiveSum(const ir::CallNode& c) {
  const int64_t width = *ir::AsConstInt(c.args[0]);
  const bool reverse = !ir::IsConstInt(c.args[1], 0);
  const Value v = Expr(c.args[2]);
  const DataType t = v.dtype;
  if (t != DataType::kF32 && t != DataType::kI32) {
    Fail("a warp scan of this dtype");
    return Const(DataType::kI32, 0);
  }
  // __shfl_up_sync / __shfl_down_sync(~0u, x, d, width).
  const std::string shfl =
      absl::StrCat("shfl.sync.", reverse ? "down" : "up", ".b32 ");
  const int64_t c_operand = ((32 - width) << 8) | (reverse ? 31 : 0);
  // x from d lanes before (after) this one; *in_group: whether that lane
  // is in this lane's group.
  auto shuffle = [&](const std::string& x, int64_t d, std::string* in_group) {
    const std::string o = NewReg(t);
    *in_group = NewReg(DataType::kBool);
    Line(absl::StrCat(shfl, o, "|", *in_group, ", ", x, ", ", d, ", ",
                      c_operand, ", -1;"));
    return o;
  };
  std::string incl = InReg(v), p;
  for (int64_t d = 1; d < width; d *= 2) {
    const std::string o = shuffle(incl, d, &p);
    const std::string sum = NewReg(t);
    Line(
        absl::StrCat("add.", ValueType(t), " ", sum, ", ", incl, ", ", o, ";"));
    const std::string next = NewReg(t);
    Line(absl::StrCat("selp.b32 ", next, ", ", sum, ", ", incl, ", ", p, ";"));
    incl = next;
  }
  // The lane before's inclusive sum; the group's first lane gets 0.
  const std::string prev = shuffle(incl, 1, &p);
  const std::string r = NewReg(t);
  Line(absl::StrCat("selp.b32 ", r, ", ", prev, ", 0, ", p, ";"));
  return Value{.dtype = t, .reg = r, .key = r};
}

}  // namespace tessel::codegen::ptx
