#include <gtest/gtest.h>

#include "src/ir/buffer.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"
#include "src/ir/program.h"
#include "src/ir/stmt.h"
#include "src/ir/visitor.h"

namespace tessel::ir {
namespace {

// A tiled GEMM built directly from IR nodes (the DSL tests build it the
// user's way); checks the printer's format for every construct it uses.
Program HandBuiltGemm() {
  Var M("M");
  Buffer A = MakeBuffer("A", DataType::kF16, {M, 256}, Scope::kGlobal);
  Buffer B = MakeBuffer("B", DataType::kF16, {256, 256}, Scope::kGlobal);
  Buffer C = MakeBuffer("C", DataType::kF16, {M, 256}, Scope::kGlobal);
  Var bx("bx"), by("by"), k("k");
  Buffer As = MakeBuffer("A_shared", DataType::kF16, {64, 32}, Scope::kShared);
  Buffer Bs = MakeBuffer("B_shared", DataType::kF16, {32, 64}, Scope::kShared);
  Buffer acc =
      MakeBuffer("C_local", DataType::kF32, {64, 64}, Scope::kFragment);
  SourceLoc loc = SourceLoc::current();
  Stmt loop_body = Seq({
      MakeStmt<CopyNode>(Region{A, {Expr(by) * 64, Expr(k) * 32}, {64, 32}},
                         Region::Full(As), loc),
      MakeStmt<CopyNode>(Region{B, {Expr(k) * 32, Expr(bx) * 64}, {32, 64}},
                         Region::Full(Bs), loc),
      MakeStmt<GemmNode>(Region::Full(As), Region::Full(Bs), Region::Full(acc),
                         false, false, false, GemmWarpPolicy::kSquare, loc),
  });
  Stmt loop =
      MakeStmt<ForNode>(k, 0, 8, ForKind::kPipelined, 3, std::vector<int>{},
                        std::vector<int>{}, loop_body, loc);
  Stmt body = Seq(
      {MakeStmt<FillNode>(Region::Full(acc), FloatImm(DataType::kF32, 0), loc),
       loop,
       MakeStmt<CopyNode>(Region::Full(acc),
                          Region{C, {Expr(by) * 64, Expr(bx) * 64}, {64, 64}},
                          loc)});
  body = MakeStmt<AllocateNode>(acc, body, loc);
  body = MakeStmt<AllocateNode>(Bs, body, loc);
  body = MakeStmt<AllocateNode>(As, body, loc);
  Stmt kernel = MakeStmt<KernelNode>(std::vector<Expr>{4, CeilDiv(M, 64)}, 128,
                                     std::vector<Var>{bx, by}, body, loc);
  return Program{"gemm", {A, B, C}, {M}, kernel};
}

TEST(PrinterTest, PrintsATiledGemm) {
  EXPECT_EQ(ToString(HandBuiltGemm()),
            R"(@T.prim_func
def gemm(A: T.Tensor((M, 256), f16), B: T.Tensor((256, 256), f16), C: T.Tensor((M, 256), f16), *, M: i32):
  with T.Kernel(4, T.ceildiv(M, 64), threads=128) as (bx, by):
    A_shared = T.alloc_shared((64, 32), f16)
    B_shared = T.alloc_shared((32, 64), f16)
    C_local = T.alloc_fragment((64, 64), f32)
    T.fill(C_local, 0.0)
    for k in T.Pipelined(8, num_stages=3):
      T.copy(A[by * 64:by * 64 + 64, k * 32:k * 32 + 32], A_shared)
      T.copy(B[k * 32:k * 32 + 32, bx * 64:bx * 64 + 64], B_shared)
      T.gemm(A_shared, B_shared, C_local)
    T.copy(C_local, C[by * 64:by * 64 + 64, bx * 64:bx * 64 + 64])
)");
}

TEST(PrinterTest, LocationsAreOptIn) {
  std::string text = ToString(HandBuiltGemm(), {.locations = true});
  EXPECT_NE(
      text.find("T.gemm(A_shared, B_shared, C_local)  # printer_test.cc:"),
      std::string::npos)
      << text;
}

TEST(PrinterTest, RenamesClashingNames) {
  Var i1("i"), i2("i");
  Buffer x = MakeBuffer("x", DataType::kF32, {4, 4}, Scope::kFragment);
  SourceLoc loc;
  Stmt store = MakeStmt<StoreNode>(x, std::vector<Expr>{i1, i2},
                                   FloatImm(DataType::kF32, 1), loc);
  Stmt inner =
      MakeStmt<ForNode>(i2, 0, 4, ForKind::kParallel, 0, std::vector<int>{},
                        std::vector<int>{}, store, loc);
  Stmt outer =
      MakeStmt<ForNode>(i1, 0, 4, ForKind::kParallel, 0, std::vector<int>{},
                        std::vector<int>{}, inner, loc);
  EXPECT_EQ(ToString(outer),
            "for i in T.Parallel(4):\n"
            "  for i_1 in T.Parallel(4):\n"
            "    x[i, i_1] = 1.0\n");
}

TEST(PrinterTest, PrintsSyncAndIntrinsics) {
  Buffer bars = MakeBuffer("bars", DataType::kU32, {2}, Scope::kBarrier);
  Var i("i");
  SourceLoc loc;
  Stmt s = MakeStmt<AllocateNode>(
      bars,
      Seq({MakeStmt<MbarrierInitNode>(bars, std::vector<Expr>{128, 128}, loc),
           MakeStmt<MbarrierArriveNode>(bars, Expr(i) % 2, loc),
           MakeStmt<MbarrierWaitParityNode>(bars, Expr(i) % 2, Expr(i) / 2 % 2,
                                            loc),
           MakeStmt<SyncThreadsNode>(loc),
           MakeStmt<EvaluateNode>(Call(DataType::kI32, "fence_proxy_async", {}),
                                  loc)}),
      loc);
  EXPECT_EQ(ToString(s),
            "bars = T.alloc_barrier(2)\n"
            "T.mbarrier_init(bars, [128, 128])\n"
            "T.mbarrier_arrive(bars[i % 2])\n"
            "T.mbarrier_wait_parity(bars[i % 2], i / 2 % 2)\n"
            "T.sync_threads()\n"
            "T.evaluate(T.call_intrin(i32, \"fence_proxy_async\"))\n");
}

// A mutator that replaces one variable; unchanged subtrees stay shared.
class ReplaceVar : public IRMutator {
 public:
  ReplaceVar(Var from, Expr to) : from_(from), to_(to) {}
  Expr Visit(const VarNode* op) override {
    return op == from_.get() ? to_ : Self(op);
  }

 private:
  Var from_;
  Expr to_;
};

class CountCopies : public IRVisitor {
 public:
  int copies = 0, buffers = 0;
  void Visit(const CopyNode* op) override {
    ++copies;
    IRVisitor::Visit(op);
  }
  void VisitBuffer(const Buffer&) override { ++buffers; }
};

TEST(VisitorTest, VisitsAndMutates) {
  Program p = HandBuiltGemm();
  CountCopies count;
  count.VisitStmt(p.body);
  EXPECT_EQ(count.copies, 3);
  EXPECT_EQ(count.buffers,
            3 /*allocs*/ + 6 /*copies*/ + 3 /*gemm*/ + 1 /*fill*/);

  EXPECT_TRUE(ReplaceVar(Var("unused"), 0).MutateStmt(p.body).same_as(p.body));
  Var M = p.dims[0];
  Stmt replaced = ReplaceVar(M, 512).MutateStmt(p.body);
  EXPECT_FALSE(replaced.same_as(p.body));
  EXPECT_NE(ToString(replaced).find("T.Kernel(4, 8, threads=128)"),
            std::string::npos)
      << ToString(replaced);
}

}  // namespace
}  // namespace tessel::ir
