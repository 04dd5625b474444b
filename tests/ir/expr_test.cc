#include <gtest/gtest.h>

#include "src/ir/buffer.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"

namespace tessel::ir {
namespace {

TEST(ExprTest, FoldsConstants) {
  EXPECT_TRUE(IsConstInt(Expr(3) + 4, 7));
  EXPECT_TRUE(IsConstInt(CeilDiv(1000, 128), 8));
  EXPECT_TRUE(IsConstInt(Expr(-7) / 2, -4));  // floor division
  EXPECT_TRUE(IsConstInt(Expr(-7) % 2, 1));   // floor modulo
  EXPECT_TRUE(IsConstInt(Min(3, 9), 3));
  EXPECT_EQ(AsConstFloat(Expr(0.5) * 4), 2.0);
  EXPECT_TRUE(IsConstInt(Expr(3) < 4, 1));
  EXPECT_EQ((Expr(3) < 4).dtype(), DataType::kBool);
}

TEST(ExprTest, SimplifiesIndexArithmetic) {
  Var k("k"), i("i");
  EXPECT_EQ(ToString(k * 32 + 0), "k * 32");
  EXPECT_EQ(ToString(k * 1), "k");
  EXPECT_TRUE(IsConstInt(k * 0, 0));
  EXPECT_EQ(ToString(3 + Expr(k)), "k + 3");
  EXPECT_EQ(ToString(Expr(k) + 1 + 2), "k + 3");
  EXPECT_EQ(ToString(Expr(k) - 1), "k - 1");
  EXPECT_EQ(ToString(Expr(k) * 4 * 8), "k * 32");
  EXPECT_EQ(ToString((Expr(k) * 64) / 16), "k * 4");
  EXPECT_TRUE(IsConstInt((Expr(k) * 64) % 16, 0));
  EXPECT_TRUE(IsConstInt((Expr(i) + 1) * 64 - Expr(i) * 64, 64));
  EXPECT_EQ(ConstDifference(k * 32 + i, i + k * 32), 0);
  EXPECT_EQ(ConstDifference(k * 32, i), std::nullopt);
}

TEST(ExprTest, PromotesLiteralsToTheOtherSide) {
  Buffer acc = MakeBuffer("acc", DataType::kF16, {16}, Scope::kFragment);
  Var i("i");
  Expr x = Load(acc, {i});
  EXPECT_EQ((x * 2).dtype(), DataType::kF16);
  EXPECT_EQ((x * 0.5).dtype(), DataType::kF16);
  EXPECT_EQ((Expr(i) * 0.5).dtype(), DataType::kF32);
  Buffer b = MakeBuffer("b", DataType::kBF16, {16}, Scope::kFragment);
  EXPECT_EQ((x + Load(b, {i})).dtype(), DataType::kF32);
  EXPECT_EQ((Cast(DataType::kI64, i) + i).dtype(), DataType::kI64);
}

TEST(ExprTest, ChecksOperandTypes) {
  Var i("i");
  Expr f = Cast(DataType::kF32, i);
  EXPECT_FALSE(CheckBinary(BinaryOp::kBitAnd, f, 1).ok());
  EXPECT_FALSE(CheckBinary(BinaryOp::kAnd, i, i).ok());
  EXPECT_TRUE(CheckBinary(BinaryOp::kAnd, Expr(i) < 3, Expr(i) > 0).ok());
  EXPECT_FALSE(CheckMath(MathOp::kExp, i).ok());
  EXPECT_TRUE(CheckMath(MathOp::kAbs, i).ok());
  EXPECT_FALSE(CheckUnary(UnaryOp::kNot, i).ok());
}

TEST(ExprTest, PrintsWithPrecedence) {
  Var a("a"), b("b"), c("c");
  EXPECT_EQ(ToString((Expr(a) + b) * c), "(a + b) * c");
  EXPECT_EQ(ToString(Expr(a) - (Expr(b) - c)), "a - (b - c)");
  EXPECT_EQ(ToString(Expr(a) / 2 % 2), "a / 2 % 2");
  EXPECT_EQ(ToString(Expr(a) < b && Expr(b) < c), "a < b && b < c");
  EXPECT_EQ(ToString(Select(Expr(a) < b, 1.0, 0.0)),
            "T.if_then_else(a < b, 1.0, 0.0)");
  EXPECT_EQ(ToString(Math(MathOp::kExp2, Cast(DataType::kF32, a))),
            "T.exp2(T.cast(a, f32))");
  EXPECT_EQ(ToString(-Expr(a)), "-a");
  EXPECT_EQ(ToString(FloatImm(DataType::kF32, -INFINITY)), "-T.infinity(f32)");
  EXPECT_EQ(ToString(FloatImm(DataType::kF16, 0.25)), "T.f16(0.25)");
}

TEST(ExprTest, DeepEqualComparesStructure) {
  Var a("a"), b("a");
  EXPECT_TRUE(ExprDeepEqual(Expr(a) * 4 + 1, Expr(a) * 4 + 1));
  EXPECT_FALSE(
      ExprDeepEqual(Expr(a) * 4 + 1, Expr(b) * 4 + 1));  // different vars
  EXPECT_FALSE(ExprDeepEqual(Expr(a) * 4, Expr(a) * 5));
}

}  // namespace
}  // namespace tessel::ir
