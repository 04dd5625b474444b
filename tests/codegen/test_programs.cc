#include "tests/codegen/test_programs.h"

#include "src/ir/op.h"
#include "src/ir/stmt.h"

namespace tessel::testing {
namespace {

using ir::Buffer;
using ir::Expr;
using ir::Region;
using ir::Stmt;
using ir::Var;

Stmt Kernel(std::vector<Expr> grid, int threads, std::vector<Var> vars,
            Stmt body) {
  return ir::MakeStmt<ir::KernelNode>(std::move(grid), threads, std::move(vars),
                                      std::move(body),
                                      ir::SourceLoc::current());
}
Stmt Alloc(const Buffer& b, Stmt body) {
  return ir::MakeStmt<ir::AllocateNode>(b, std::move(body),
                                        ir::SourceLoc::current());
}
Stmt Copy(Region src, Region dst) {
  return ir::MakeStmt<ir::CopyNode>(std::move(src), std::move(dst),
                                    ir::SourceLoc::current());
}
Stmt Fill(Region dst, Expr v) {
  return ir::MakeStmt<ir::FillNode>(std::move(dst), std::move(v),
                                    ir::SourceLoc::current());
}
Stmt For(const Var& v, Expr extent, ir::ForKind kind, Stmt body,
         int stages = 0) {
  return ir::MakeStmt<ir::ForNode>(v, Expr(0), std::move(extent), kind, stages,
                                   std::vector<int>{}, std::vector<int>{},
                                   std::move(body), ir::SourceLoc::current());
}
Stmt Store(const Buffer& b, std::vector<Expr> idx, Expr v) {
  return ir::MakeStmt<ir::StoreNode>(b, std::move(idx), std::move(v),
                                     ir::SourceLoc::current());
}
Region Box(const Buffer& b, std::vector<Expr> start, std::vector<Expr> ext) {
  return Region{b, std::move(start), std::move(ext)};
}
Buffer Global(const char* n, DataType t, std::vector<Expr> shape) {
  return ir::MakeBuffer(n, t, std::move(shape), ir::Scope::kGlobal);
}
Buffer Shared(const char* n, DataType t, std::vector<Expr> shape) {
  return ir::MakeBuffer(n, t, std::move(shape), ir::Scope::kShared);
}
Buffer Frag(const char* n, DataType t, std::vector<Expr> shape) {
  return ir::MakeBuffer(n, t, std::move(shape), ir::Scope::kFragment);
}

}  // namespace

ir::Program Gemm(const GemmShape& s) {
  ir::Program p;
  p.name = "gemm";
  Expr M = s.m, N = s.n, K = s.k;
  if (s.symbolic) {
    Var m("M"), n("N"), k("K");
    p.dims = {m, k, n};
    M = m;
    N = n;
    K = k;
  }
  Buffer A = s.transpose_a ? Global("A", s.dtype, {K, M})
                           : Global("A", s.dtype, {M, K});
  const DataType bt = s.b_dtype.value_or(s.dtype);
  Buffer B = s.transpose_b ? Global("B", bt, {N, K}) : Global("B", bt, {K, N});
  Buffer C = Global("C", s.out_dtype.value_or(s.dtype), {M, N});
  p.params = {A, B, C};
  Var bx("bx"), by("by"), k("k");
  Buffer As = s.transpose_a ? Shared("A_shared", s.dtype, {s.bk, s.bm})
                            : Shared("A_shared", s.dtype, {s.bm, s.bk});
  Region a_src = s.transpose_a ? Box(A, {k * s.bk, by * s.bm}, {s.bk, s.bm})
                               : Box(A, {by * s.bm, k * s.bk}, {s.bm, s.bk});
  Buffer Bs = s.transpose_b ? Shared("B_shared", bt, {s.bn, s.bk})
                            : Shared("B_shared", bt, {s.bk, s.bn});
  Buffer acc = Frag("C_local", DataType::kF32, {s.bm, s.bn});
  Region b_src = s.transpose_b ? Box(B, {bx * s.bn, k * s.bk}, {s.bn, s.bk})
                               : Box(B, {k * s.bk, bx * s.bn}, {s.bk, s.bn});
  Stmt loop =
      For(k, ir::CeilDiv(K, s.bk), ir::ForKind::kPipelined,
          ir::Seq({Copy(a_src, Region::Full(As)), Copy(b_src, Region::Full(Bs)),
                   ir::MakeStmt<ir::GemmNode>(
                       Region::Full(As), Region::Full(Bs), Region::Full(acc),
                       s.transpose_a, s.transpose_b, false,
                       s.full_row ? ir::GemmWarpPolicy::kFullRow
                                  : ir::GemmWarpPolicy::kSquare,
                       ir::SourceLoc::current())}),
          s.stages);
  std::vector<Stmt> body;
  if (s.panel > 0) {
    body.push_back(ir::MakeStmt<ir::UseSwizzleNode>(s.panel, false,
                                                    ir::SourceLoc::current()));
  }
  body.push_back(Fill(Region::Full(acc), Expr(0.0)));
  body.push_back(loop);
  body.push_back(
      Copy(Region::Full(acc), Box(C, {by * s.bm, bx * s.bn}, {s.bm, s.bn})));
  p.body = Kernel({ir::CeilDiv(N, s.bn), ir::CeilDiv(M, s.bm)}, s.threads,
                  {bx, by}, Alloc(As, Alloc(Bs, Alloc(acc, ir::Seq(body)))));
  return p;
}

GemmShape WgmmaGemm(bool transpose_b) {
  return {.m = transpose_b ? 128 : 200,
          .n = transpose_b ? 192 : 136,
          .k = transpose_b ? 136 : 200,
          .bm = 64,
          .bn = 64,
          .bk = 64,
          .threads = 128,
          .transpose_b = transpose_b};
}

GemmShape WgmmaTwoWarpgroupsGemm() {
  return {.m = 264,
          .n = 128,
          .k = 96,
          .bm = 128,
          .bn = 64,
          .bk = 32,
          .threads = 256,
          .dtype = DataType::kBF16};
}

GemmShape WgmmaSampleTileGemm(DataType dtype, bool transpose_b) {
  return {.m = 520,
          .n = 392,
          .k = 264,
          .bm = 256,
          .bn = 128,
          .bk = 64,
          .threads = 256,
          .stages = 3,
          .dtype = dtype,
          .transpose_b = transpose_b,
          .panel = 8};
}

GemmShape WgmmaWideNGemm(bool transpose_b) {
  return {.m = 200,
          .n = 300,
          .k = 136,
          .bm = 128,
          .bn = 256,
          .bk = 64,
          .threads = 256,
          .stages = 2,
          .transpose_b = transpose_b};
}

GemmShape WgmmaWarpgroupsSplitNGemm(bool transpose_b) {
  return {.m = 100,
          .n = 200,
          .k = 96,
          .bm = 64,
          .bn = 128,
          .bk = 64,
          .threads = 256,
          .stages = 2,
          .dtype = DataType::kBF16,
          .transpose_b = transpose_b,
          .full_row = true};
}

GemmShape WgmmaSplitNGemm(bool transpose_b) {
  return {.m = 100,
          .n = 400,
          .k = 72,
          .bm = 64,
          .bn = 384,
          .bk = 64,
          .threads = 128,
          .stages = 2,
          .transpose_b = transpose_b};
}

GemmShape WgmmaMMajorAGemm() {
  return {.m = 200,
          .n = 136,
          .k = 200,
          .bm = 128,
          .bn = 128,
          .bk = 64,
          .threads = 256,
          .stages = 2,
          .transpose_a = true};
}

GemmShape WgmmaWideKGemm(bool transpose_b) {
  return {.m = 136,
          .n = 200,
          .k = 392,
          .bm = 128,
          .bn = 128,
          .bk = 128,
          .threads = 128,
          .stages = 2,
          .transpose_b = transpose_b};
}

GemmShape WgmmaFp8SampleTileGemm(DataType a, DataType b) {
  return {.m = 264,
          .n = 392,
          .k = 400,
          .bm = 128,
          .bn = 256,
          .bk = 128,
          .threads = 256,
          .stages = 4,
          .dtype = a,
          .transpose_b = true,
          .panel = 8,
          .b_dtype = b,
          .out_dtype = DataType::kF16};
}

GemmShape WgmmaFp8SmallGemm(DataType a, DataType b) {
  return {.m = 200,
          .n = 136,
          .k = 208,
          .bm = 64,
          .bn = 64,
          .bk = 128,
          .threads = 128,
          .stages = 3,
          .dtype = a,
          .transpose_b = true,
          .b_dtype = b,
          .out_dtype = DataType::kF16};
}

ir::Program Elementwise(int n) {
  ir::Program p;
  p.name = "elementwise";
  Buffer X = Global("X", DataType::kF32, {n}),
         Y = Global("Y", DataType::kF32, {n});
  p.params = {X, Y};
  Var bx("bx"), i("i");
  Buffer t = Frag("t", DataType::kF32, {256});
  Stmt body =
      ir::Seq({Copy(Box(X, {bx * 256}, {256}), Region::Full(t)),
               For(i, 256, ir::ForKind::kParallel,
                   Store(t, {i}, ir::Load(t, {i}) * Expr(2.0) + Expr(1.0))),
               Copy(Region::Full(t), Box(Y, {bx * 256}, {256}))});
  p.body = Kernel({ir::CeilDiv(Expr(n), 256)}, 128, {bx}, Alloc(t, body));
  return p;
}

ir::Program CopyRoundTrip(int m, int n) {
  ir::Program p;
  p.name = "copy_round_trip";
  Buffer X = Global("X", DataType::kF16, {m, n}),
         Y = Global("Y", DataType::kF16, {m, n});
  p.params = {X, Y};
  Var bx("bx"), by("by");
  Buffer s1 = Shared("in_shared", DataType::kF16, {64, 64});
  Buffer f = Frag("tile", DataType::kF32, {64, 64});
  Buffer s2 = Shared("out_shared", DataType::kF16, {64, 64});
  Stmt body =
      ir::Seq({Copy(Box(X, {by * 64, bx * 64}, {64, 64}), Region::Full(s1)),
               Copy(Region::Full(s1), Region::Full(f)),
               Copy(Region::Full(f), Region::Full(s2)),
               Copy(Region::Full(s2), Box(Y, {by * 64, bx * 64}, {64, 64}))});
  p.body = Kernel({ir::CeilDiv(Expr(n), 64), ir::CeilDiv(Expr(m), 64)}, 128,
                  {bx, by}, Alloc(s1, Alloc(f, Alloc(s2, body))));
  return p;
}

ir::Program ReverseTile(int tiles) {
  ir::Program p;
  p.name = "reverse_tile";
  Buffer X = Global("X", DataType::kF32, {tiles * 64, 64}),
         Y = Global("Y", DataType::kF32, {tiles * 64, 64});
  p.params = {X, Y};
  Var bx("bx"), i("i"), j("j");
  Buffer S = Shared("S", DataType::kF32, {64, 64});
  Stmt body =
      ir::Seq({Copy(Box(X, {bx * 64, 0}, {64, 64}), Region::Full(S)),
               For(i, 64, ir::ForKind::kParallel,
                   For(j, 64, ir::ForKind::kParallel,
                       Store(Y, {bx * 64 + i, j},
                             ir::Load(S, {Expr(63) - i, Expr(63) - j}))))});
  p.body = Kernel({Expr(tiles)}, 128, {bx}, Alloc(S, body));
  return p;
}

ir::Program DoubleBuffered(int steps) {
  ir::Program p;
  p.name = "double_buffered";
  Buffer X = Global("X", DataType::kF32, {steps + 1, 128}),
         Y = Global("Y", DataType::kF32, {steps, 128});
  p.params = {X, Y};
  Var bx("bx"), k("k"), i("i"), i2("i2");
  Buffer S = Shared("S", DataType::kF32, {2, 128});
  Stmt body = ir::Seq(
      {For(i, 128, ir::ForKind::kParallel,
           Store(S, {0, i}, ir::Load(X, {0, i}))),
       For(k, steps, ir::ForKind::kSerial,
           ir::Seq({For(i, 128, ir::ForKind::kParallel,
                        Store(S, {(k + 1) % 2, i}, ir::Load(X, {k + 1, i}))),
                    For(i2, 128, ir::ForKind::kParallel,
                        Store(Y, {k, i2},
                              ir::Load(S, {k % 2, Expr(127) - i2})))}))});
  p.body = Kernel({Expr(1)}, 128, {bx}, Alloc(S, body));
  return p;
}

ir::Program AtomicAccumulate(int blocks, int rows) {
  ir::Program p;
  p.name = "atomic_accumulate";
  Buffer X = Global("X", DataType::kF32, {blocks, rows, 64}),
         Y = Global("Y", DataType::kF32, {rows, 64});
  p.params = {X, Y};
  Var bz("bz"), by("by");
  Buffer S = Shared("partial", DataType::kF32, {64, 64});
  Stmt body =
      ir::Seq({Copy(Box(X, {bz, by * 64, 0}, {1, 64, 64}), Region::Full(S)),
               ir::MakeStmt<ir::AtomicNode>(
                   ir::AtomicOp::kAdd, Box(Y, {by * 64, 0}, {64, 64}),
                   Region::Full(S), Expr(), ir::SourceLoc::current())});
  p.body = Kernel({ir::CeilDiv(Expr(rows), 64), Expr(blocks)}, 128, {by, bz},
                  Alloc(S, body));
  return p;
}

ir::Program GemmRowMax(int m, int n, int k) {
  ir::Program p;
  p.name = "gemm_row_max";
  Buffer A = Global("A", DataType::kF16, {m, k}),
         B = Global("B", DataType::kF16, {k, n}),
         C = Global("C", DataType::kF32, {m, n});
  p.params = {A, B, C};
  Var bx("bx"), by("by"), i("i"), j("j");
  Buffer As = Shared("A_shared", DataType::kF16, {64, k});
  Buffer Bs = Shared("B_shared", DataType::kF16, {k, 64});
  Buffer acc = Frag("acc", DataType::kF32, {64, 64});
  Buffer mx = Frag("row_max", DataType::kF32, {64});
  Stmt body = ir::Seq(
      {Copy(Box(A, {by * 64, 0}, {64, k}), Region::Full(As)),
       Copy(Box(B, {0, bx * 64}, {k, 64}), Region::Full(Bs)),
       ir::MakeStmt<ir::GemmNode>(
           Region::Full(As), Region::Full(Bs), Region::Full(acc), false, false,
           true, ir::GemmWarpPolicy::kSquare, ir::SourceLoc::current()),
       ir::MakeStmt<ir::ReduceNode>(acc, mx, ir::ReduceKind::kMax, 1, true,
                                    ir::SourceLoc::current()),
       For(i, 64, ir::ForKind::kParallel,
           For(j, 64, ir::ForKind::kParallel,
               Store(acc, {i, j}, ir::Load(acc, {i, j}) - ir::Load(mx, {i})))),
       Copy(Region::Full(acc), Box(C, {by * 64, bx * 64}, {64, 64}))});
  p.body = Kernel({ir::CeilDiv(Expr(n), 64), ir::CeilDiv(Expr(m), 64)}, 128,
                  {bx, by}, Alloc(As, Alloc(Bs, Alloc(acc, Alloc(mx, body)))));
  return p;
}

ir::Program ReduceAndCumsum() {
  ir::Program p;
  p.name = "reduce_cumsum";
  Buffer X = Global("X", DataType::kF32, {64, 32}),
         Y = Global("Y", DataType::kF32, {32}),
         Z = Global("Z", DataType::kF32, {64});
  p.params = {X, Y, Z};
  Var bx("bx"), i("i");
  Buffer x = Frag("x", DataType::kF32, {64, 32});
  Buffer col = Frag("col_sum", DataType::kF32, {32});
  Buffer first = Frag("first", DataType::kF32, {64});
  Stmt body =
      ir::Seq({Copy(Region::Full(X), Region::Full(x)),
               ir::MakeStmt<ir::ReduceNode>(x, col, ir::ReduceKind::kSum, 0,
                                            true, ir::SourceLoc::current()),
               Copy(Region::Full(col), Region::Full(Y)),
               Copy(Box(X, {0, 0}, {64, 1}), Region::Full(first)),
               ir::MakeStmt<ir::CumsumNode>(first, first, 0, false,
                                            ir::SourceLoc::current()),
               Copy(Region::Full(first), Region::Full(Z))});
  p.body =
      Kernel({Expr(1)}, 128, {bx}, Alloc(x, Alloc(col, Alloc(first, body))));
  return p;
}

ir::Program MbarrierPipeline(int chunks) {
  ir::Program p;
  p.name = "mbarrier_pipeline";
  Buffer A = Global("A", DataType::kF16, {chunks * 64, 64}),
         B = Global("B", DataType::kF16, {64, 64}),
         C = Global("C", DataType::kF32, {64, 64});
  p.params = {A, B, C};
  Var bx("bx"), i("i");
  Buffer As = Shared("A_shared", DataType::kF16, {64, 64});
  Buffer Bs = Shared("B_shared", DataType::kF16, {64, 64});
  Buffer acc = Frag("C_local", DataType::kF32, {64, 64});
  Buffer bar = ir::MakeBuffer("bar", DataType::kI64, {2}, ir::Scope::kBarrier);
  Stmt loop = For(
      i, chunks, ir::ForKind::kPipelined,
      ir::Seq({Copy(Box(A, {i * 64, 0}, {64, 64}), Region::Full(As)),
               ir::MakeStmt<ir::MbarrierArriveNode>(bar, Expr(i) % 2,
                                                    ir::SourceLoc::current()),
               ir::MakeStmt<ir::MbarrierWaitParityNode>(
                   bar, Expr(i) % 2, Expr(i) / 2 % 2, ir::SourceLoc::current()),
               ir::MakeStmt<ir::GemmNode>(Region::Full(As), Region::Full(Bs),
                                          Region::Full(acc), false, false,
                                          false, ir::GemmWarpPolicy::kSquare,
                                          ir::SourceLoc::current())}),
      2);
  Stmt body =
      ir::Seq({ir::MakeStmt<ir::MbarrierInitNode>(
                   bar, std::vector<Expr>{128, 128}, ir::SourceLoc::current()),
               Copy(Region::Full(B), Region::Full(Bs)),
               Fill(Region::Full(acc), Expr(0.0)), loop,
               Copy(Region::Full(acc), Region::Full(C))});
  p.body = Kernel({Expr(1)}, 128, {bx},
                  Alloc(As, Alloc(Bs, Alloc(acc, Alloc(bar, body)))));
  return p;
}

}  // namespace tessel::testing
