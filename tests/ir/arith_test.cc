// src/ir/arith and src/ir/tile_op_rules.h: the analyses the verifier, the
// interpreter and the passes share.
#include <cmath>
#include <utility>

#include <gtest/gtest.h>

#include "src/ir/arith/bounds.h"
#include "src/ir/arith/divisibility.h"
#include "src/ir/arith/equal.h"
#include "src/ir/arith/interval.h"
#include "src/ir/arith/linear.h"
#include "src/ir/arith/simplify.h"
#include "src/ir/buffer.h"
#include "src/ir/op.h"
#include "src/ir/tile_op_rules.h"
#include "src/ir/walk.h"

namespace tessel::ir {
namespace {

TEST(IntervalTest, FollowsTheVariableRanges) {
  Var tx("tx"), k("k");
  arith::VarRanges ranges;
  ranges.Set(tx.get(), {0, 127, true});
  std::optional<arith::Interval> r = ranges.Bounds(tx * 8 + 7);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->lo, 7);
  EXPECT_EQ(r->hi, 1023);
  EXPECT_FALSE(r->exact);  // stride 8: not every value is reached
  r = ranges.Bounds(tx + 1);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->exact);
  EXPECT_EQ(ranges.Bounds(tx % 32)->hi, 31);
  EXPECT_EQ(ranges.Bounds(tx / 32)->hi, 3);
  EXPECT_FALSE(ranges.Bounds(tx + k).has_value());  // k: unknown range
  ranges.Erase(tx.get());
  EXPECT_FALSE(ranges.Bounds(tx).has_value());
}

TEST(IntervalTest, StageIndicesOfOneTileAreDistinct) {
  Var k("k");
  EXPECT_TRUE(arith::ProvablyDistinct(k % 3, (k + 1) % 3));
  EXPECT_FALSE(arith::ProvablyDistinct(k % 3, (k + 3) % 3));
  EXPECT_TRUE(arith::ProvablyDistinct(k * 64, k * 64 + 1));
  EXPECT_FALSE(arith::ProvablyDistinct(k, Var("j")));
  EXPECT_FALSE(arith::ProvablyDistinct(k, Expr()));
}

TEST(ArithTest, DivisorsSignsAndDifferences) {
  Var by("by"), tx("tx");
  EXPECT_EQ(arith::KnownDivisor(by * 128 + tx * 8), 8);
  EXPECT_EQ(arith::KnownDivisor(tx), 1);
  EXPECT_TRUE(arith::ProvablyNonNegative(by * 128 + tx));
  EXPECT_FALSE(arith::ProvablyNonNegative(tx - 1));
  EXPECT_EQ(ConstDifference((tx + 1) * 64, tx * 64), 64);
  EXPECT_FALSE(ConstDifference(tx, by).has_value());
}

// The offset of an unrolled access from its base pointer (codegen's
// cuda_rebase.cc): linear in the unrolled variables, or nothing.
TEST(ArithTest, OffsetInTheGivenVariables) {
  Var r("r"), i("i"), j("j"), tx("tx");
  std::optional<Expr> o =
      OffsetIn(((r + i) * 64) + j + 3, r * 64, {i.get(), j.get()});
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(ConstDifference(*o, i * 64 + j), 3);
  EXPECT_TRUE(IsConstInt(*OffsetIn(r * 64 + 5, r * 64, {i.get()}), 5));
  // Set to constants (a loop printed out), the offset is one.
  EXPECT_TRUE(IsConstInt(*OffsetIn((r + 2) * 64 + 1, r * 64, {i.get()}), 129));
  EXPECT_FALSE(OffsetIn(r * 64 + tx, r * 64, {i.get()}).has_value());
  EXPECT_FALSE(OffsetIn(r * 64 + i * i, r * 64, {i.get()}).has_value());
  EXPECT_FALSE(OffsetIn(r * 64 + i / 2, r * 64, {i.get()}).has_value());
}

TEST(ArithTest, SimplifiesAsTheConstructorsDo) {
  Var i("i");
  std::optional<Expr> s = arith::SimplifyBinary(BinaryOp::kAdd, i + 1, 2);
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(ExprDeepEqual(*s, i + 3));
  EXPECT_FALSE(arith::SimplifyBinary(BinaryOp::kAdd, i, Var("j")).has_value());
  EXPECT_TRUE(IsConstInt(*arith::SimplifyBinary(BinaryOp::kSub, i + 5, i), 5));
}

// Folded float min / max take the interpreter's and the device's order:
// -0 < +0 whichever comes first, a NaN operand ignored.
TEST(ArithTest, FoldsFloatMinMaxInTheOneOrder) {
  auto folded = [](BinaryOp op, double a, double b) {
    std::optional<Expr> e = arith::SimplifyBinary(
        op, FloatImm(DataType::kF32, a), FloatImm(DataType::kF32, b));
    EXPECT_TRUE(e.has_value());
    const auto* f = e ? e->As<FloatImmNode>() : nullptr;
    return f ? f->value : 12345.0;
  };
  for (auto [a, b] : {std::pair{-0.0, 0.0}, std::pair{0.0, -0.0}}) {
    EXPECT_TRUE(std::signbit(folded(BinaryOp::kMin, a, b)));
    EXPECT_FALSE(std::signbit(folded(BinaryOp::kMax, a, b)));
  }
  EXPECT_EQ(folded(BinaryOp::kMin, NAN, 2.0), 2.0);
  EXPECT_EQ(folded(BinaryOp::kMax, 2.0, NAN), 2.0);
  EXPECT_EQ(MinNum(-1.0, 3.0), -1.0);
  EXPECT_EQ(MaxNum(-1.0, 3.0), 3.0);
}

TEST(ArithTest, DeepEqualityComparesTreesAndVariablesByIdentity) {
  Var i("i"), j("i");
  EXPECT_TRUE(ExprDeepEqual(i * 64 + 1, i * 64 + 1));
  EXPECT_FALSE(ExprDeepEqual(i * 64, j * 64));  // same name, other variable
  Buffer b = MakeBuffer("b", DataType::kF32, {16}, Scope::kShared);
  EXPECT_TRUE(ExprDeepEqual(Load(b, {i}), Load(b, {i})));
  EXPECT_TRUE(ReadsMemory(Load(b, {i}) + 1.0));
  EXPECT_FALSE(ReadsMemory(i * 2));
}

TEST(TileOpRulesTest, ReduceAndAtomicRules) {
  EXPECT_EQ(ReduceCombiner(ReduceKind::kAbsMax), BinaryOp::kMax);
  EXPECT_EQ(ReduceCombiner(ReduceKind::kAbsSum), BinaryOp::kAdd);
  EXPECT_TRUE(ReduceTakesAbs(ReduceKind::kAbsSum));
  EXPECT_FALSE(ReduceTakesAbs(ReduceKind::kMin));
  EXPECT_EQ(AsConstFloat(ReduceIdentity(ReduceKind::kMax, DataType::kF32)),
            -INFINITY);
  EXPECT_TRUE(
      IsConstInt(ReduceIdentity(ReduceKind::kMin, DataType::kI32), 2147483647));
  EXPECT_TRUE(AtomicDtypeAllowed(AtomicOp::kAdd, DataType::kF16));
  EXPECT_FALSE(AtomicDtypeAllowed(AtomicOp::kMax, DataType::kF16));
  EXPECT_TRUE(AtomicDtypeAllowed(AtomicOp::kMax, DataType::kI32));
  EXPECT_FALSE(AtomicDtypeAllowed(AtomicOp::kAdd, DataType::kU8));
}

}  // namespace
}  // namespace tessel::ir
