// Lets ahead of the allocations on the warp-specialized path (sm_90a):
// every thread evaluates them before the producer / consumer split, so the
// TMA producer reads them by name (the grouped GEMM's group, found from
// many offsets, is one register, not those loads in every copy origin), and
// a persistent grid is not taken when one reads a block index (its tile
// loop rebinds the indices after them); under T::use_swizzle such a let
// reads the rasterized indices.
#include <gtest/gtest.h>

#include <string>

#include "tessel/tessel.h"
#include "tests/common/generated_code.h"

namespace tessel {
namespace {

namespace T = tessel;

// Block (bx, by) multiplies rows table[by] * 64 .. + 64 of A by B's column
// tile bx; `steps` k steps, a T::let when `steps_from_table` (a block that
// the table marks with a negative row runs none).
Program RowsFromTable(bool steps_from_table, int panel = 0) {
  T::ProgramBuilder p("rows_from_table");
  auto A = p.tensor("A", {1024, 256}, f16);
  auto B = p.tensor("B", {256, 256}, f16);
  auto table = p.tensor("table", {8}, i32);
  auto C = p.tensor("C", {512, 256}, f32);
  {
    T::Kernel kernel(2, 8, {.threads = 256});
    auto [bx, by] = kernel.block_index();
    if (panel > 0) T::use_swizzle(panel);
    auto row = T::let(T::max(table(by), 0) * 64, "row");
    T::Expr steps = 4;
    if (steps_from_table)
      steps =
          T::let(T::select(table(by) >= 0, T::Expr(4), T::Expr(0)), "steps");
    auto As = T::alloc_shared({128, 64}, f16, "A_shared");
    auto Bs = T::alloc_shared({64, 128}, f16, "B_shared");
    auto acc = T::alloc_fragment({128, 128}, f32, "acc");
    T::clear(acc);
    for (auto k : T::Pipelined(steps, {.num_stages = 3})) {
      T::copy(A(T::slice(row, row + 128), T::slice(k * 64, k * 64 + 64)), As);
      T::copy(
          B(T::slice(k * 64, k * 64 + 64), T::slice(bx * 128, bx * 128 + 128)),
          Bs);
      T::gemm(As, Bs, acc);
    }
    T::copy(acc, C(T::slice(by * 64, by * 64 + 128),
                   T::slice(bx * 128, bx * 128 + 128)));
  }
  absl::StatusOr<Program> program = p.finish();
  EXPECT_TRUE(program.ok()) << program.status();
  return *program;
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(OuterLets, TheTmaProducerReadsThemByName) {
  const Program program = RowsFromTable(/*steps_from_table=*/true);
  const testing::GeneratedCode code =
      testing::Generate(program, Target::sm90a());
  ASSERT_NE(code.cuda.find("setmaxnreg"), std::string::npos) << code.cuda;
  // table[by] is read by the two lets only; the producer's loop bound and
  // A's origin are the let registers.
  EXPECT_EQ(Count(code.cuda, "table[by]"), 2) << code.cuda;
  EXPECT_NE(code.cuda.find("i < steps; ++i)"), std::string::npos) << code.cuda;
  EXPECT_NE(code.cuda.find(", row);"), std::string::npos) << code.cuda;
  testing::ExpectCompilesBothWays(program, Target::sm90a());
}

TEST(OuterLets, ALetOfABlockIndexKeepsTheGridPlain) {
  // The k loop's bounds are constant, so the grid would be persistent, but
  // `row` reads by, which the tile loop binds only after the lets.
  const Program program = RowsFromTable(/*steps_from_table=*/false);
  const testing::GeneratedCode code =
      testing::Generate(program, Target::sm90a());
  ASSERT_NE(code.cuda.find("setmaxnreg"), std::string::npos) << code.cuda;
  EXPECT_EQ(code.cuda.find("first_tile"), std::string::npos) << code.cuda;
  testing::ExpectCompilesBothWays(program, Target::sm90a());
}

TEST(OuterLets, UnderUseSwizzleTheyReadTheRasterizedIndex) {
  // The rasterization binds bx / by ahead of a let that reads them (it
  // was bound after: "identifier by is undefined").
  for (const Target& target : {Target::sm90a(), Target::sm80()}) {
    const Program program = RowsFromTable(true, /*panel=*/4);
    const testing::GeneratedCode code = testing::Generate(program, target);
    const size_t bound = code.cuda.find("const int by = ");
    const size_t row = code.cuda.find("const int row = ");
    ASSERT_NE(bound, std::string::npos) << code.cuda;
    ASSERT_NE(row, std::string::npos) << code.cuda;
    EXPECT_LT(bound, row) << code.cuda;
    testing::ExpectCompilesBothWays(program, target);
  }
}

}  // namespace
}  // namespace tessel
