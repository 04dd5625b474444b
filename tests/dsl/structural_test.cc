// Structural hash / equality: equal programs hash equal; any single change
// hashes differently; a randomized builder keeps printing and hashing stable.
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tessel/tessel.h"
#include "tests/dsl/seed_programs.h"

namespace tessel {
namespace {

namespace T = tessel;

// A small kernel whose every knob can be changed one at a time.
struct Knobs {
  std::string name = "k";
  std::string tensor = "X";
  int rows = 64;
  int tile = 16;
  DataType dtype = T::f32;
  int threads = 128;
  int stages = 2;
  bool transpose_b = false;
  bool clear_accum = false;
  double scale = 2.0;
  int offset = 0;
  bool use_max = false;
  bool serial = false;
  std::string loop_name = "i";
};

absl::StatusOr<Program> Build(const Knobs& k) {
  T::ProgramBuilder p(k.name);
  auto X = p.tensor(k.tensor, {k.rows, k.tile}, k.dtype);
  auto Y = p.tensor("Y", {k.rows, k.tile}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(k.rows, k.tile), {.threads = k.threads});
    auto [bx] = kernel.block_index();
    auto a = T::alloc_shared({k.tile, k.tile}, T::f16, "a");
    auto c = T::alloc_fragment({k.tile, k.tile}, T::f32, "c");
    auto x = T::alloc_fragment({k.tile, k.tile}, k.dtype, "x");
    T::clear(c);
    for (auto i :
         T::Pipelined(4, {.num_stages = k.stages, .name = k.loop_name})) {
      T::copy(X(bx * k.tile + k.offset, 0), x);
      T::copy(x, a);
      T::gemm(a, a, c,
              {.transpose_B = k.transpose_b, .clear_accum = k.clear_accum});
      (void)i;
    }
    if (k.serial) {
      for (auto i : T::Serial(k.tile)) c(i, 0) = c(i, 0) * k.scale;
    } else {
      for (auto i : T::Parallel(k.tile)) c(i, 0) = c(i, 0) * k.scale;
    }
    if (k.use_max) {
      T::atomic_max(Y(bx * k.tile, 0), c);
    } else {
      T::atomic_add(Y(bx * k.tile, 0), c);
    }
  }
  return p.finish();
}

TEST(StructuralTest, EqualProgramsHashEqual) {
  absl::StatusOr<Program> a = Build({}), b = Build({});
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_EQ(a->hash(), b->hash());
  EXPECT_TRUE(*a == *b);
  absl::StatusOr<Program> g1 = seed::LinearAttentionBackward(1, 128, 2, 64, 64);
  absl::StatusOr<Program> g2 = seed::LinearAttentionBackward(1, 128, 2, 64, 64);
  ASSERT_TRUE(g1.ok() && g2.ok());
  EXPECT_EQ(g1->hash(), g2->hash());
  EXPECT_TRUE(*g1 == *g2);
}

TEST(StructuralTest, LoopVariableNamesAndLocationsDoNotCount) {
  Knobs renamed;
  renamed.loop_name = "kk";
  absl::StatusOr<Program> a = Build({}), b = Build(renamed);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->to_string(), b->to_string());
  EXPECT_EQ(a->hash(), b->hash());
  EXPECT_TRUE(*a == *b);

  // Same program recorded from two different source lines.
  auto make = [](int which) {
    T::ProgramBuilder p("same");
    auto X = p.tensor("X", {8}, T::f32);
    {
      T::Kernel kernel(1);
      auto x = T::alloc_fragment({8}, T::f32, "x");
      if (which == 0) {
        T::copy(X, x);
      } else {
        T::copy(X, x);
      }
    }
    return p.finish();
  };
  absl::StatusOr<Program> c = make(0), d = make(1);
  ASSERT_TRUE(c.ok() && d.ok());
  EXPECT_NE(c->to_string(true), d->to_string(true));
  EXPECT_EQ(c->hash(), d->hash());
  EXPECT_TRUE(*c == *d);
}

TEST(StructuralTest, AnySingleChangeHashesDifferently) {
  std::vector<Knobs> variants(1);
  auto add = [&](auto change) {
    Knobs k;
    change(k);
    variants.push_back(k);
  };
  add([](Knobs& k) { k.name = "k2"; });
  add([](Knobs& k) { k.tensor = "X2"; });
  add([](Knobs& k) { k.rows = 128; });
  add([](Knobs& k) { k.tile = 32; });
  add([](Knobs& k) { k.dtype = T::f16; });
  add([](Knobs& k) { k.threads = 256; });
  add([](Knobs& k) { k.stages = 3; });
  add([](Knobs& k) { k.transpose_b = true; });
  add([](Knobs& k) { k.clear_accum = true; });
  add([](Knobs& k) { k.scale = 2.5; });
  add([](Knobs& k) { k.offset = 1; });
  add([](Knobs& k) { k.use_max = true; });
  add([](Knobs& k) { k.serial = true; });
  std::vector<Program> programs;
  for (const Knobs& k : variants) {
    absl::StatusOr<Program> p = Build(k);
    ASSERT_TRUE(p.ok()) << p.status();
    programs.push_back(*p);
  }
  for (size_t i = 0; i < programs.size(); ++i) {
    for (size_t j = i + 1; j < programs.size(); ++j) {
      EXPECT_NE(programs[i].hash(), programs[j].hash())
          << "variants " << i << " and " << j;
      EXPECT_FALSE(programs[i] == programs[j])
          << "variants " << i << " and " << j;
    }
  }
}

TEST(StructuralTest, SeedProgramsAreAllDifferent) {
  std::vector<absl::StatusOr<Program>> seeds = {
      seed::TiledGemm(256, 256, 128),
      seed::TiledGemm(256, 256, 256),
      seed::TiledGemmDynamicM(256, 128),
      seed::SplitKGemm(256, 256, 1024, 4),
      seed::MbarrierPipelinedGemm(256, 256, 256),
      seed::LinearAttentionForward(1, 128, 2, 64, 64),
      seed::LinearAttentionBackward(1, 128, 2, 64, 64),
      seed::RowSoftmaxCumsum(64, 32),
  };
  std::set<uint64_t> hashes;
  for (const auto& s : seeds) {
    ASSERT_TRUE(s.ok()) << s.status();
    hashes.insert(s->hash());
  }
  EXPECT_EQ(hashes.size(), seeds.size());
}

// ---------------------------------------------------------------- random

// Records a random valid program from `seed`: random shapes, dtypes, loops,
// branches, element-wise expressions and tile ops.
class RandomProgram {
 public:
  explicit RandomProgram(uint32_t seed) : rng_(seed) {}

  absl::StatusOr<Program> Build() {
    T::ProgramBuilder p("random");
    int rows = Pick({16, 32, 64}), cols = Pick({16, 32});
    bool symbolic = Coin();
    T::Expr n_rows = symbolic ? T::dim("R") : T::Expr(rows * Pick({1, 3}));
    auto X = p.tensor("X", {n_rows, cols}, T::f32);
    auto Y = p.tensor("Y", {n_rows, cols}, T::f32);
    {
      T::Kernel kernel(T::ceildiv(n_rows, rows),
                       {.threads = Pick({32, 64, 128})});
      auto [bx] = kernel.block_index();
      auto x = T::alloc_fragment({rows, cols}, T::f32, "x");
      auto s = T::alloc_shared({rows, cols}, T::f32, "s");
      auto r = T::alloc_fragment({rows}, T::f32, "r");
      T::copy(X(bx * rows, 0), x);
      int ops = 1 + Below(6);
      for (int o = 0; o < ops; ++o) {
        switch (Below(7)) {
          case 0:
            for (auto [i, j] : T::Parallel(rows, cols))
              x(i, j) = RandomExpr(x, i, j, 3);
            break;
          case 1:
            T::copy(x, s);
            T::copy(s, x);
            break;
          case 2:
            T::fill(x, static_cast<double>(Below(5)));
            break;
          case 3:
            T::reduce_sum(x, r, {.dim = 1, .clear = Coin()});
            for (auto [i, j] : T::Parallel(rows, cols))
              x(i, j) = x(i, j) - r(i);
            break;
          case 4:
            for (auto k : T::Serial(Pick({1, 2, 3}))) {
              for (auto i : T::Parallel(rows))
                x(i, 0) = x(i, 0) + T::cast(k, T::f32);
            }
            break;
          case 5:
            for (auto i : T::Parallel(rows)) {
              T::If(x(i, 0) > RandomConst(), [&] {
                x(i, 0) = T::exp2(x(i, 0));
              }).Else([&] { x(i, 0) = T::abs(x(i, 0)); });
            }
            break;
          case 6:
            T::cumsum(x, {.dim = static_cast<int>(Below(2))});
            break;
        }
      }
      if (Coin()) {
        T::atomic_add(Y(bx * rows, 0), x);
      } else {
        T::copy(x, Y(bx * rows, 0));
      }
    }
    return p.finish();
  }

 private:
  int Below(int n) { return static_cast<int>(rng_() % n); }
  bool Coin() { return Below(2) == 1; }
  int Pick(std::initializer_list<int> v) {
    return *(v.begin() + Below(static_cast<int>(v.size())));
  }
  T::Expr RandomConst() { return T::Expr(static_cast<double>(Below(9)) / 4.0); }

  T::Expr RandomExpr(const T::Buffer& x, const T::Expr& i, const T::Expr& j,
                     int depth) {
    if (depth == 0 || Below(4) == 0) {
      switch (Below(3)) {
        case 0:
          return x(i, j);
        case 1:
          return RandomConst();
        default:
          return T::cast(i * Pick({1, 2}) + j, T::f32);
      }
    }
    T::Expr a = RandomExpr(x, i, j, depth - 1),
            b = RandomExpr(x, i, j, depth - 1);
    switch (Below(7)) {
      case 0:
        return a + b;
      case 1:
        return a - b;
      case 2:
        return a * b;
      case 3:
        return T::max(a, b);
      case 4:
        return T::select(a < b, a, b);
      case 5:
        return T::tanh(a);
      default:
        return T::exp2(a * 0.5);
    }
  }

  std::mt19937 rng_;
};

TEST(StructuralTest, RandomProgramsPrintAndHashStably) {
  std::vector<std::pair<std::string, uint64_t>> seen;
  for (uint32_t seed = 1; seed <= 150; ++seed) {
    absl::StatusOr<Program> a = RandomProgram(seed).Build();
    absl::StatusOr<Program> b = RandomProgram(seed).Build();
    ASSERT_TRUE(a.ok()) << "seed " << seed << ": " << a.status();
    ASSERT_TRUE(b.ok()) << "seed " << seed << ": " << b.status();
    std::string text = a->to_string();
    EXPECT_EQ(text, a->to_string()) << "seed " << seed;  // printing is pure
    EXPECT_EQ(text, b->to_string()) << "seed " << seed;  // and deterministic
    EXPECT_EQ(a->hash(), b->hash()) << "seed " << seed;
    EXPECT_TRUE(*a == *b) << "seed " << seed;
    seen.emplace_back(text, a->hash());
  }
  // Same text <=> same hash (names in these programs are all fixed).
  for (size_t i = 0; i < seen.size(); ++i) {
    for (size_t j = i + 1; j < seen.size(); ++j) {
      EXPECT_EQ(seen[i].first == seen[j].first,
                seen[i].second == seen[j].second)
          << "programs " << i << " and " << j;
    }
  }
  std::set<uint64_t> hashes;
  for (const auto& s : seen) hashes.insert(s.second);
  EXPECT_GT(hashes.size(), 100u);  // the generator really varies its programs
}

}  // namespace
}  // namespace tessel
