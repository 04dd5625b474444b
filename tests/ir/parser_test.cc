// The IR parser (src/ir/parser.h): every golden program text round-trips
// (print(parse(text)) == text), each construct parses to the node the
// printer printed, and errors name the line and column.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "src/ir/parser.h"
#include "src/ir/printer.h"

namespace tessel::ir {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The program text of a golden dump: its lines up to the first comment
// section ("# fragment layouts", ...).
std::string ProgramText(const std::string& dump) {
  size_t at = dump.find("\n#");
  return at == std::string::npos ? dump : dump.substr(0, at + 1);
}

// Every golden program under tests/ (pass dumps and DSL goldens; the lit
// tests check their own, tests/passes/lit_test.cc).
std::vector<fs::path> GoldenFiles() {
  const char* root = std::getenv("TESSEL_SOURCE_DIR");
  std::vector<fs::path> out;
  for (const char* dir : {"tests/passes/golden", "tests/dsl/golden"}) {
    fs::path d = fs::path(root ? root : ".") / dir;
    if (!fs::exists(d)) continue;
    for (const fs::directory_entry& e : fs::directory_iterator(d))
      if (e.path().extension() == ".txt") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void ExpectRoundTrip(const std::string& text, const std::string& what) {
  absl::StatusOr<Program> p = ParseProgram(text);
  ASSERT_TRUE(p.ok()) << what << ": " << p.status();
  EXPECT_EQ(ToString(*p), text) << what;
}

TEST(Parser, EveryGoldenProgramRoundTrips) {
  std::vector<fs::path> files = GoldenFiles();
  EXPECT_GE(files.size(), 30u);
  for (const fs::path& f : files) {
    ExpectRoundTrip(ProgramText(ReadFile(f)), f.string());
  }
}

TEST(Parser, ExpressionsRoundTrip) {
  const std::string text =
      "@T.prim_func\n"
      "def f(A: T.Tensor((M, 64), f16), B: T.Tensor((64,), f32), *, M: i32, "
      "N: i64):\n"
      "  with T.Kernel(T.ceildiv(M, 64), 2, threads=128) as (bx, by):\n"
      "    acc = T.alloc_fragment((64, 64), f32)\n"
      "    s = T.alloc_var(f32)\n"
      "    for i in T.Parallel(64):\n"
      "      for j in T.unroll(2, 10):\n"
      "        acc[i, j] = T.cast(A[bx * 64 + i, j - 3], f32) * -1.5 + "
      "T.max(B[j], 0.0)\n"
      "    s[0] = T.if_then_else(bx < 3 && !(by == 1), T.exp(acc[0, 0]), "
      "-T.infinity(f32))\n"
      "    T.evaluate(T.call_intrin(i32, \"let\", w, T.cast(N, i32) / 32 % "
      "4))\n"
      "    T.evaluate(T.call_intrin(u32, \"foo\", w << 2, T.i64(-5), "
      "T.f16(0.5), T.nan(f32), ~w, (w + 1) * (w - 1)))\n"
      "    T.print(s, msg=\"a \\\"quoted\\\" \\\\ msg\")\n"
      "    T.print(w + 1, msg=\"\")\n";
  ExpectRoundTrip(text, "expressions");
  absl::StatusOr<Program> p = ParseProgram(text);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->dims.size(), 2u);
  EXPECT_EQ(p->dims[1].dtype(), DataType::kI64);
  EXPECT_TRUE(p->params[0]->shape[0].same_as(p->dims[0]));
}

TEST(Parser, StatementsRoundTrip) {
  const std::string text =
      "@T.prim_func\n"
      "def g(A: T.Tensor((128, 128), f16), C: T.Tensor((128, 128), f32)):\n"
      "  with T.Kernel(4, threads=256) as b:\n"
      "    T.use_swizzle(panel_size=4, order=\"col\")\n"
      "    A_shared = T.alloc_shared((2, 64, 32), f16, layout=T.swizzled(128, "
      "atoms))\n"
      "    T.annotate_layout(A_shared, T.swizzled(64))\n"
      "    acc = T.alloc_fragment((64, 64), f32)\n"
      "    row = T.alloc_fragment((64,), f32)\n"
      "    bar = T.alloc_barrier(2)\n"
      "    T.mbarrier_init(bar, [1, 128])\n"
      "    T.fill(acc, 0.0)\n"
      "    for k in T.Pipelined(4, num_stages=2, order=[0, 1], stage=[0, 1]):\n"
      "      T.copy(A[0:64, k * 32:k * 32 + 32], A_shared[k % 2, 0:64, 0:32], "
      "barrier=bar[k % 2])\n"
      "      T.gemm(A_shared[k % 2, 0:64, 0:32], A_shared[k % 2, 0:64, 0:32], "
      "acc, transpose_B=True, clear_accum=True, "
      "policy=T.GemmWarpPolicy.FullCol)\n"
      "    T.reduce_absmax(acc, row, dim=1, clear=False)\n"
      "    T.cumsum(acc, acc, dim=0, reverse=True)\n"
      "    T.atomic_add(C[0:64, 0:64], acc)\n"
      "    T.atomic_max(C[b, 3], row[0])\n"
      "    T.mbarrier_expect_tx(bar[0], 4096)\n"
      "    T.mbarrier_wait_parity(bar[1], 0)\n"
      "    T.mbarrier_arrive(bar[1])\n"
      "    with T.warp_specialize(producer_threads=128, consumer_groups=2) as "
      "g:\n"
      "      producer:\n"
      "        pass\n"
      "      consumer:\n"
      "        if g == 0:\n"
      "          T.sync_threads()\n"
      "        else:\n"
      "          T.copy(acc, C[64:128, 0:64])\n";
  ExpectRoundTrip(text, "statements");
}

TEST(Parser, LocationsAndCommentsAreSkipped) {
  absl::StatusOr<Program> p = ParseProgram(
      "# a comment\n@T.prim_func\ndef h(A: T.Tensor((4,), f32)):\n"
      "  with T.Kernel(1, threads=32) as b:  # h.cc:3\n"
      "    T.fill(A, 1.0)  # h.cc:4\n");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(ToString(*p),
            "@T.prim_func\ndef h(A: T.Tensor((4,), f32)):\n"
            "  with T.Kernel(1, threads=32) as b:\n"
            "    T.fill(A, 1.0)\n");
}

TEST(Parser, ErrorsNameLineAndColumn) {
  const std::string head =
      "@T.prim_func\ndef h(A: T.Tensor((4,), f32)):\n"
      "  with T.Kernel(1, threads=32) as b:\n";
  struct Case {
    std::string body, error;
  };
  for (const Case& c : std::vector<Case>{
           {"    T.fill(A_shard, 1.0)\n", "4:12: unknown buffer 'A_shard'"},
           {"    A[0] = x + 1\n", "4:12: unknown name 'x'"},
           {"    T.fill(A, 1.0\n", "4:18: expected ')', got 'end of line'"},
           {"    T.frobnicate(A)\n", "4:5: unknown statement T.frobnicate"},
           {"    for i in T.serial(4):\n    T.fill(A, 1.0)\n",
            "4:26: expected an indented block"},
           {"    A[0] = $\n", "4:12: unexpected character '$'"},
           {"    A[0] = T.cast(1, f99)\n", "4:22: expected a dtype, got 'f99'"},
       }) {
    absl::StatusOr<Program> p = ParseProgram(head + c.body);
    ASSERT_FALSE(p.ok()) << c.body;
    EXPECT_EQ(p.status().message(), c.error) << c.body;
  }
}

}  // namespace
}  // namespace tessel::ir
