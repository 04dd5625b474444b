// The wgmma descriptors tessel emits read every operand element where the
// shared layout stored it. No GPU: the test lowers a gemm, takes each
// wgmma's descriptors from the IR (start address, LBO, SBO), computes the
// byte address the tensor cores read for each (row, k) of the instruction
// from the PTX ISA's canonical SWIZZLE_128B layouts, and compares it with
// the address ThreadContext::SharedOffset (the layout every cp.async and
// ldmatrix uses) gives that logical element.
//
// Ground truth for the model: 8d2b18f:tools/dev/hopper_gemm_probe.cu ran
// correct on the H200 with K-major tiles (SBO 1024, +32 B per k16) and N-major
// B as 64-column atoms of [64][128 B] written by TMA SWIZZLE_128B (LBO 8192,
// SBO 1024, +2048 B per k16); TmaSwizzle128Layout below is that TMA layout.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "src/ir/expr.h"
#include "src/passes/fragment_layout.h"
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"
#include "src/passes/lower/thread_context.h"
#include "src/passes/pass_list.h"
#include "tessel/tessel.h"
#include "tests/codegen/test_programs.h"

namespace tessel::passes {
namespace {

using Env = std::map<std::string, int64_t>;
// The values the lowered program's Lets bind (descriptor bases, the
// warpgroup index).
using Lets = std::map<const ir::VarNode*, ir::Expr>;

Lets LetsOf(const ir::Stmt& body) {
  Lets lets;
  ForEachStmt(body, [&](const ir::Stmt& s) {
    if (const ir::CallNode* c = AsIntrin(s, Intrinsic::kLet))
      lets[c->args[0].As<ir::VarNode>()] = c->args[1];
  });
  return lets;
}

// Integer value of an index expression with its variables set (by name),
// else bound by a Let.
int64_t Eval(const ir::Expr& e, const Env& env, const Lets& lets = {}) {
  if (auto c = ir::AsConstInt(e)) return *c;
  if (const auto* v = e.As<ir::VarNode>()) {
    auto it = env.find(v->name);
    if (it != env.end()) return it->second;
    if (auto let = lets.find(v); let != lets.end())
      return Eval(let->second, env, lets);
    ADD_FAILURE() << "unset variable " << v->name;
    return 0;
  }
  if (const auto* c = e.As<ir::CastNode>()) return Eval(c->value, env, lets);
  if (const auto* c = e.As<ir::CallNode>(); c && c->name == "warp_uniform")
    return Eval(c->args[0], env, lets);
  const auto* b = e.As<ir::BinaryNode>();
  EXPECT_NE(b, nullptr) << "not an index expression";
  if (b == nullptr) return 0;
  const int64_t x = Eval(b->a, env, lets), y = Eval(b->b, env, lets);
  auto floordiv = [](int64_t p, int64_t q) {
    return p / q - ((p % q != 0) && ((p < 0) != (q < 0)));
  };
  switch (b->op) {
    case ir::BinaryOp::kAdd:
      return x + y;
    case ir::BinaryOp::kSub:
      return x - y;
    case ir::BinaryOp::kMul:
      return x * y;
    case ir::BinaryOp::kDiv:
      return floordiv(x, y);
    case ir::BinaryOp::kMod:
      return x - floordiv(x, y) * y;
    case ir::BinaryOp::kBitAnd:
      return x & y;
    case ir::BinaryOp::kBitXor:
      return x ^ y;
    case ir::BinaryOp::kShr:
      return x >> y;
    case ir::BinaryOp::kShl:
      return x << y;
    default:
      ADD_FAILURE() << "unexpected operator " << ir::BinaryOpName(b->op);
      return 0;
  }
}

// One SWIZZLE_128B descriptor: start byte offset in its buffer, LBO, SBO.
struct Descriptor {
  std::string buffer;
  int64_t start = 0, lbo = 0, sbo = 0;
};

// A wgmma's descriptor operand: built whole, a base bound by a Let, or
// wgmma_desc_add(base, units) (the start address field + units).
Descriptor Decode(const ir::Expr& desc, const Env& env, const Lets& lets) {
  if (const auto* v = desc.As<ir::VarNode>()) {
    auto let = lets.find(v);
    EXPECT_NE(let, lets.end()) << "unbound descriptor " << v->name;
    return let == lets.end() ? Descriptor{} : Decode(let->second, env, lets);
  }
  const auto* c = desc.As<ir::CallNode>();
  if (c->name == "wgmma_desc_add") {
    Descriptor d = Decode(c->args[0], env, lets);
    d.start += Eval(c->args[1], env) * 16;
    return d;
  }
  EXPECT_EQ(c->name, "wgmma_desc_sw128");
  const auto* addr = c->args[0].As<ir::CallNode>();
  const auto* load = addr->args[0].As<ir::LoadNode>();
  Descriptor d;
  d.buffer = load->buffer->name;
  d.start =
      Eval(load->indices[0], env, lets) * dtype_bytes(load->buffer->dtype);
  d.lbo = c->args.size() == 3 ? *ir::AsConstInt(c->args[1]) : 16;
  d.sbo = *ir::AsConstInt(c->args.back());
  return d;
}

// The byte the tensor cores read for element (mn, k) of an operand of
// `eb`-byte elements (mn < 64 for A, < N for B; k < 32 / eb: 16 for 16-bit
// types, 32 for fp8, which is K-major only), per the PTX ISA canonical
// layouts (in 16-byte units T = 16 / eb elements):
//   K-major:    ((8, m), (T, 2)) : ((8T, SBO), (1, T))
//   M/N-major:  ((T, 8, m), (8, 2)) : ((1, T, LBO), (8T, SBO))
// then the SWIZZLE_128B XOR of address bits 4-6 with bits 7-9 (the tiles
// start 1024-byte aligned).
int64_t HardwareByte(const Descriptor& d, bool k_major, int64_t mn, int64_t k,
                     int eb = 2) {
  int64_t linear = k_major
                       ? d.start + (mn % 8) * 128 + (mn / 8) * d.sbo + k * eb
                       : d.start + (mn % 64) * 2 + (mn / 64) * d.lbo +
                             (k % 8) * 128 + (k / 8) * d.sbo;
  return linear ^ (((linear >> 7) & 7) << 4);
}

// What TMA SWIZZLE_128B boxes of 64 columns x `rows` write (the probe's B),
// one box after another: element (r, c) of the [rows][cols] tile.
int64_t TmaSwizzle128Layout(int64_t rows, int64_t r, int64_t c) {
  int64_t box = c / 64, in = c % 64;
  return box * rows * 128 + r * 128 + (((in / 8) ^ (r % 8)) * 16) +
         (in % 8) * 2;
}

LoweringState Lower(const ir::Program& p, const std::string& stop = "") {
  LoweringState st;
  st.program = p;
  st.target = Target::sm90a();
  absl::Status s = RunPasses(st, stop);
  EXPECT_TRUE(s.ok()) << s;
  return st;
}

// The shared buffers of the program as the layout pass left them.
std::map<std::string, ir::Buffer> SharedBuffers(const ir::Stmt& body) {
  std::map<std::string, ir::Buffer> out;
  ForEachStmt(body, [&](const ir::Stmt& s) {
    if (const auto* a = s.As<ir::AllocateNode>())
      if (a->buffer->scope == ir::Scope::kShared)
        out[a->buffer->name] = a->buffer;
  });
  return out;
}

// Every element every wgmma of the gemm reads, for both warpgroups and
// every pipeline stage, against the layout's address of that element.
// With g.full_row and too few rows, the warpgroups split N (each all rows
// of A, its bn / groups columns of B).
void CheckDescriptors(const testing::GemmShape& g) {
  const bool split_n = g.full_row && g.bm % (64 * (g.threads / 128)) != 0;
  SCOPED_TRACE(::testing::Message()
               << "tile " << g.bm << "x" << g.bn << "x" << g.bk
               << (g.transpose_a ? " T" : " N") << (g.transpose_b ? "T" : "N")
               << (split_n ? " split N" : ""));
  ir::Program program = testing::Gemm(g);
  LoweringState planned = Lower(program, "plan_gemms");
  std::map<std::string, ir::Buffer> shared =
      SharedBuffers(planned.program.body);
  ASSERT_TRUE(shared.count("A_shared") && shared.count("B_shared"));
  lower::ThreadContext layout(planned);
  auto layout_byte = [&](const std::string& name, int64_t stage, int64_t r,
                         int64_t c) {
    const ir::Buffer& b = shared.at(name);
    std::vector<ir::Expr> idx;
    if (b->rank() == 3) idx.push_back(ir::Expr(int(stage)));
    idx.push_back(ir::Expr(int(r)));
    idx.push_back(ir::Expr(int(c)));
    return Eval(layout.SharedOffset(b, idx), {}) * dtype_bytes(b->dtype);
  };

  LoweringState lowered = Lower(program);
  const Lets lets = LetsOf(lowered.program.body);
  std::vector<const ir::CallNode*> wgmma;
  ForEachStmt(lowered.program.body, [&](const ir::Stmt& s) {
    if (const ir::CallNode* c = AsIntrin(s, Intrinsic::kWgmma))
      wgmma.push_back(c);
  });
  // One wgmma reads 32 bytes of K: k16, or k32 for fp8.
  const int eb = dtype_bytes(g.dtype), k_step = 32 / eb;
  const int kk_steps = g.bk / k_step, groups = g.threads / 128;
  const int mi_count = split_n ? g.bm / 64 : g.bm / groups / 64;
  const int group_cols = split_n ? g.bn / groups : 0;
  ASSERT_GT(wgmma.size(), 0u);
  ASSERT_EQ(wgmma.size() % kk_steps, 0u);
  const int per_step = static_cast<int>(wgmma.size()) / kk_steps;
  const int pieces = per_step / mi_count;
  ASSERT_EQ(pieces * mi_count, per_step);

  int64_t checked = 0;
  for (int group = 0; group < groups; ++group) {
    for (int stage = 0; stage < std::max(g.stages, 1); ++stage) {
      // tile: a persistent kernel's tile counter (its first tile).
      Env env{{"tx", group * 128 + 5}, {"k", stage}, {"tile", 0}};
      for (int i = 0; i < static_cast<int>(wgmma.size()); ++i) {
        const ir::CallNode& c = *wgmma[i];
        const int kk = i / per_step, mi = i % per_step / pieces;
        const int64_t n = *ir::AsConstInt(c.args[1]);
        const int64_t n0 = group * group_cols + *ir::AsConstInt(c.args[5]) * 8;
        // A from shared memory, K-major unless transposed.
        ASSERT_EQ(*ir::AsConstInt(c.args[2]), g.transpose_a ? 1 : 0);
        ASSERT_EQ(*ir::AsConstInt(c.args[3]), g.transpose_b ? 0 : 1);
        Descriptor a = Decode(c.args[6], env, lets),
                   b = Decode(c.args[7], env, lets);
        ASSERT_EQ(a.buffer, "A_shared");
        ASSERT_EQ(b.buffer, "B_shared");
        const int64_t row0 = (split_n ? 0 : group * (g.bm / groups)) + mi * 64;
        for (int64_t k = 0; k < k_step; ++k) {
          const int64_t kc = kk * k_step + k;
          for (int64_t m = 0; m < 64; ++m) {
            int64_t want = g.transpose_a
                               ? layout_byte("A_shared", stage, kc, row0 + m)
                               : layout_byte("A_shared", stage, row0 + m, kc);
            ASSERT_EQ(HardwareByte(a, !g.transpose_a, m, k, eb), want)
                << "A row " << row0 + m << " k " << kc;
          }
          for (int64_t j = 0; j < n; ++j) {
            int64_t want = g.transpose_b
                               ? layout_byte("B_shared", stage, n0 + j, kc)
                               : layout_byte("B_shared", stage, kc, n0 + j);
            ASSERT_EQ(HardwareByte(b, g.transpose_b, j, k, eb), want)
                << "B n " << n0 + j << " k " << kc;
          }
          checked += 64 + n;
        }
      }
    }
  }
  // A once per N piece, B once per m64 block (each reads all of B, or
  // split along N its columns).
  const int64_t rows = split_n ? g.bm : g.bm / groups;
  const int64_t cols = split_n ? group_cols : g.bn;
  EXPECT_EQ(checked, int64_t{groups} * std::max(g.stages, 1) * g.bk *
                         (rows * pieces + cols * mi_count));
}

// The model reads the probe's working B (N-major, 64-column TMA boxes,
// LBO 8192, SBO 1024, +2048 B per k16) where TMA wrote it: the model is
// the hardware's for those parameters.
TEST(WgmmaDescriptor, ModelMatchesTheProbeOnTheH200) {
  for (int kk = 0; kk < 4; ++kk) {
    Descriptor d{"B", kk * 2048, 8192, 1024};
    for (int64_t k = 0; k < 16; ++k)
      for (int64_t n = 0; n < 256; ++n)
        ASSERT_EQ(HardwareByte(d, false, n, k),
                  TmaSwizzle128Layout(64, kk * 16 + k, n));
  }
  // K-major A [128][64] (one box of 64 columns): +32 B per k16.
  for (int kk = 0; kk < 4; ++kk) {
    Descriptor d{"A", 64 * 128 + kk * 32, 16, 1024};
    for (int64_t k = 0; k < 16; ++k)
      for (int64_t m = 0; m < 64; ++m)
        ASSERT_EQ(HardwareByte(d, true, m, k),
                  TmaSwizzle128Layout(128, 64 + m, kk * 16 + k));
  }
}

// The shared layout of an atom-major swizzled tile is the TMA one.
TEST(WgmmaDescriptor, AtomLayoutIsTheTmaSwizzle128Layout) {
  LoweringState planned =
      Lower(testing::Gemm(testing::WgmmaWideNGemm(false)), "plan_gemms");
  ir::Buffer b = SharedBuffers(planned.program.body).at("B_shared");
  ASSERT_TRUE(b->layout.atoms);
  lower::ThreadContext layout(planned);
  for (int64_t r = 0; r < 64; ++r)
    for (int64_t c = 0; c < 256; ++c)
      ASSERT_EQ(Eval(layout.SharedOffset(
                         b, {ir::Expr(1), ir::Expr(int(r)), ir::Expr(int(c))}),
                     {}) *
                    2,
                64 * 256 * 2 + TmaSwizzle128Layout(64, r, c));
}

TEST(WgmmaDescriptor, SampleTileNN) {
  CheckDescriptors(testing::WgmmaSampleTileGemm(DataType::kF16, false));
}
TEST(WgmmaDescriptor, SampleTileNT) {
  CheckDescriptors(testing::WgmmaSampleTileGemm(DataType::kBF16, true));
}
TEST(WgmmaDescriptor, WideN) {
  CheckDescriptors(testing::WgmmaWideNGemm(false));
  CheckDescriptors(testing::WgmmaWideNGemm(true));
}
TEST(WgmmaDescriptor, SplitN) {
  CheckDescriptors(testing::WgmmaSplitNGemm(false));
  CheckDescriptors(testing::WgmmaSplitNGemm(true));
}
// 64 rows over two warpgroups: each its half of N (FlashMLA's layout),
// B's descriptors a warpgroup's columns further on (N-major: one atom;
// K-major: 64 rows), A's the same for both.
TEST(WgmmaDescriptor, WarpgroupsSplitN) {
  CheckDescriptors(testing::WgmmaWarpgroupsSplitNGemm(false));
  CheckDescriptors(testing::WgmmaWarpgroupsSplitNGemm(true));
}

// The accumulator split along N: warp q of warpgroup g holds the m64 C
// fragment of rows q*16.. (wgmma's), columns g*N/2..; every element once;
// its row statistics in the threads of those rows, one leader per row.
TEST(WgmmaDescriptor, WarpgroupsSplitNAccumulatorLayout) {
  const FragmentLayout l = FragmentLayout::WgmmaCols({128, 512}, 256);
  ASSERT_EQ(l.local_shape(), (std::vector<int64_t>{2, 32, 4}));
  std::vector<int> owners(128 * 512, 0);
  for (int tx = 0; tx < 256; ++tx) {
    const int g = tx / 128, q = tx / 32 % 4, lane = tx % 32;
    for (int mi = 0; mi < 2; ++mi)
      for (int ni = 0; ni < 32; ++ni)
        for (int e = 0; e < 4; ++e) {
          std::vector<ir::Expr> rc = l.Logical(
              ir::Expr(tx), {ir::Expr(mi), ir::Expr(ni), ir::Expr(e)});
          const int64_t r = Eval(rc[0], {}), c = Eval(rc[1], {});
          ASSERT_EQ(r, mi * 64 + q * 16 + lane / 4 + e / 2 * 8);
          ASSERT_EQ(c, g * 256 + ni * 8 + lane % 4 * 2 + e % 2);
          ++owners[r * 512 + c];
        }
  }
  for (int n : owners) ASSERT_EQ(n, 1);
  const FragmentLayout rows = l.RowsOf();
  std::vector<int> leaders(128, 0);
  for (int tx = 0; tx < 256; ++tx)
    for (int mi = 0; mi < 2; ++mi)
      for (int h = 0; h < 2; ++h) {
        const int64_t r = Eval(
            rows.Logical(ir::Expr(tx), {ir::Expr(mi), ir::Expr(h)})[0], {});
        ASSERT_EQ(r, mi * 64 + tx / 32 % 4 * 16 + tx % 32 / 4 + h * 8);
        leaders[r] += Eval(rows.Leader(ir::Expr(tx)), {}) != 0;
      }
  for (int n : leaders) ASSERT_EQ(n, 1);
  EXPECT_EQ(l.ToString(),
            "wgmma[128, 512] warps 4x2 local [2][32][4] warpgroups along N");
}

TEST(WgmmaDescriptor, WideK) {
  CheckDescriptors(testing::WgmmaWideKGemm(false));
  CheckDescriptors(testing::WgmmaWideKGemm(true));
}
TEST(WgmmaDescriptor, MMajorA) {
  CheckDescriptors(testing::WgmmaMMajorAGemm());
}
// fp8 k32 steps (32 bytes of the atom rows, like f16's k16), e4m3 with
// e5m2 too: the sample's fp8 tile, one warpgroup, K rows of two atoms.
TEST(WgmmaDescriptor, Fp8) {
  CheckDescriptors(
      testing::WgmmaFp8SampleTileGemm(DataType::kF8E4M3, DataType::kF8E4M3));
  CheckDescriptors(
      testing::WgmmaFp8SmallGemm(DataType::kF8E4M3, DataType::kF8E5M2));
  testing::GemmShape wide_k =
      testing::WgmmaFp8SmallGemm(DataType::kF8E5M2, DataType::kF8E5M2);
  wide_k.bk = 256;
  CheckDescriptors(wide_k);
}

TEST(WgmmaDescriptor, OneAtomTiles) {
  CheckDescriptors(testing::WgmmaGemm(false));
  CheckDescriptors(testing::WgmmaGemm(true));
}

}  // namespace
}  // namespace tessel::passes
