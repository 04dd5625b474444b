#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "src/ir/buffer.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"
#include "src/ir/tile_op_rules.h"

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

// Folded casts give what the interpreter (and cvt.rzi) computes: integers
// wrap to the width, floats truncate and saturate, NaN becomes 0.
TEST(ExprTest, FoldsCastsAsTheyRun) {
  EXPECT_TRUE(IsConstInt(Cast(DataType::kI8, IntImm(DataType::kI32, 300)), 44));
  EXPECT_TRUE(
      IsConstInt(Cast(DataType::kI8, FloatImm(DataType::kF32, 300)), 127));
  EXPECT_TRUE(IsConstInt(Cast(DataType::kU8, FloatImm(DataType::kF32, -5)), 0));
  EXPECT_TRUE(
      IsConstInt(Cast(DataType::kI32, FloatImm(DataType::kF64, -2.7)), -2));
  EXPECT_TRUE(
      IsConstInt(Cast(DataType::kI32, FloatImm(DataType::kF32, NAN)), 0));
  EXPECT_TRUE(IsConstInt(Cast(DataType::kI64, FloatImm(DataType::kF64, 1e30)),
                         INT64_MAX));
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

namespace tessel::ir {
namespace {

// Evaluates an integer expression over variable bindings, as the IR defines
// the operators (floor division and modulo).
int64_t Eval(const Expr& e, const std::vector<std::pair<Var, int64_t>>& env) {
  if (auto c = AsConstInt(e)) return *c;
  if (const auto* v = e.As<VarNode>()) {
    for (const auto& [var, value] : env) {
      if (var.get() == v) return value;
    }
    ADD_FAILURE() << "unbound " << v->name;
    return 0;
  }
  const auto* b = e.As<BinaryNode>();
  if (b == nullptr) {
    ADD_FAILURE() << "unexpected node " << ToString(e);
    return 0;
  }
  int64_t x = Eval(b->a, env), y = Eval(b->b, env);
  switch (b->op) {
    case BinaryOp::kAdd:
      return x + y;
    case BinaryOp::kSub:
      return x - y;
    case BinaryOp::kMul:
      return x * y;
    case BinaryOp::kDiv:
      return FloorDiv(x, y);
    case BinaryOp::kMod:
      return FloorMod(x, y);
    case BinaryOp::kMin:
      return std::min(x, y);
    case BinaryOp::kMax:
      return std::max(x, y);
    case BinaryOp::kCeilDiv:
      return -FloorDiv(-x, y);
    default:
      ADD_FAILURE() << "unexpected op in " << ToString(e);
      return 0;
  }
}

// Random index expressions: the simplified result must evaluate exactly like
// the same operations done by hand, for many variable values.
TEST(ExprTest, SimplificationPreservesValues) {
  std::mt19937 rng(7);
  Var vars[] = {Var("i"), Var("j"), Var("k")};
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<std::pair<Var, int64_t>> env;
    for (const Var& v : vars)
      env.emplace_back(v, static_cast<int64_t>(rng() % 41) - 20);
    // Build expression and expected value side by side.
    std::function<std::pair<Expr, int64_t>(int)> gen =
        [&](int depth) -> std::pair<Expr, int64_t> {
      if (depth == 0 || rng() % 4 == 0) {
        if (rng() % 2) {
          int64_t c = static_cast<int64_t>(rng() % 13) - 4;
          return {Expr(static_cast<int>(c)), c};
        }
        const auto& [v, value] = env[rng() % env.size()];
        return {Expr(v), value};
      }
      auto [a, x] = gen(depth - 1);
      auto [b, y] = gen(depth - 1);
      switch (rng() % 7) {
        case 0:
          return {a + b, x + y};
        case 1:
          return {a - b, x - y};
        case 2:
          return {a * b, x * y};
        case 3: {
          int64_t c = 1 + rng() % 8;
          return {a / static_cast<int>(c), FloorDiv(x, c)};
        }
        case 4: {
          int64_t c = 1 + rng() % 8;
          return {a % static_cast<int>(c), FloorMod(x, c)};
        }
        case 5:
          return {Min(a, b), std::min(x, y)};
        default: {
          int64_t c = 1 + rng() % 8;
          return {CeilDiv(a, static_cast<int>(c)), -FloorDiv(-x, c)};
        }
      }
    };
    auto [e, want] = gen(4);
    EXPECT_EQ(Eval(e, env), want) << ToString(e);
  }
}

// The last handle to a million-deep chain frees it without recursing (a
// recursive release overflows the stack long before that, ASan's first).
TEST(ExprTest, FreesDeepChainsWithoutRecursing) {
  Var x("x");
  for (int round = 0; round < 2; ++round) {
    Expr e = x;
    for (int i = 0; i < 1000000; ++i) e = e * x;  // no folding: a chain
    if (round == 0) {
      Expr copy = e;
      e = Expr();  // the copy still holds the chain
      ASSERT_TRUE(copy.defined());
    }  // round 0: the copy frees it; round 1: `e` does
  }
  Expr shared = x * x;
  { Expr a = shared + 1, b = shared + 2; }
  EXPECT_TRUE(shared.As<BinaryNode>() != nullptr);  // still alive
}

}  // namespace
}  // namespace tessel::ir

namespace tessel::ir {
namespace {

// reduce_max / reduce_min start from the ends of the dtype's own range (the
// GPU lowering's accumulators start there; i32's range was used for all).
TEST(ReduceIdentityTest, IntegersUseTheirOwnRange) {
  auto value = [](ReduceKind k, DataType t) {
    return AsConstInt(ReduceIdentity(k, t)).value_or(12345);
  };
  EXPECT_EQ(value(ReduceKind::kMax, DataType::kI8), -128);
  EXPECT_EQ(value(ReduceKind::kMin, DataType::kI8), 127);
  EXPECT_EQ(value(ReduceKind::kMax, DataType::kU32), 0);
  EXPECT_EQ(value(ReduceKind::kMin, DataType::kU32), 4294967295);
  EXPECT_EQ(value(ReduceKind::kMax, DataType::kI64),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(value(ReduceKind::kMin, DataType::kI64),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(value(ReduceKind::kMin, DataType::kU8), 255);
  EXPECT_EQ(value(ReduceKind::kMax, DataType::kI32), -2147483648);
}

}  // namespace
}  // namespace tessel::ir
