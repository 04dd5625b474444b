// Every element-wise operator, math function, cast, reduction and atomic of
// the public DSL, for every dtype, through finish() and NVRTC for sm_90a
// (no GPU needed). What the rules of expr.h / builder.h reject must come
// back from finish() as a Status; everything accepted must compile. The
// accepted ops of one dtype share four kernels (element-wise ops, fragment
// reductions, shared reductions, cumsum and atomics).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessel/builder.h"
#include "tessel/compile.h"

namespace tessel {
namespace {

constexpr int kN = 4;     // elements of the 1-D tiles
constexpr int kRows = 4;  // 2-D tiles for the reductions: kRows x kCols
constexpr int kCols = 8;

const DataType kDtypes[] = {bool_, i8,   u8,  i16, i32,      u32,     i64,
                            f16,   bf16, f32, f64, fp8_e4m3, fp8_e5m2};

bool IsFloat(DataType t) { return is_float(t); }
bool IsInt(DataType t) { return is_int(t); }
bool NotBool(DataType t) { return t != bool_; }
bool IsBool(DataType t) { return t == bool_; }
bool Any(DataType) { return true; }

// The operands inside the kernel's Parallel loop: a(i), b(i) of the dtype
// under test, c(i) a bool.
struct Operands {
  Expr a, b, c;
  DataType t;
};

// One element-wise op and the dtypes the documented rules accept it for.
struct ElementOp {
  std::string name;
  std::function<Expr(const Operands&)> apply;
  bool (*accepts)(DataType);
};

std::vector<ElementOp> ElementOps() {
  std::vector<ElementOp> ops = {
      {"add", [](const Operands& o) { return o.a + o.b; }, NotBool},
      {"sub", [](const Operands& o) { return o.a - o.b; }, NotBool},
      {"mul", [](const Operands& o) { return o.a * o.b; }, NotBool},
      {"div", [](const Operands& o) { return o.a / o.b; }, NotBool},
      {"mod", [](const Operands& o) { return o.a % o.b; }, IsInt},
      {"ceildiv", [](const Operands& o) { return ceildiv(o.a, o.b); }, IsInt},
      {"min", [](const Operands& o) { return min(o.a, o.b); }, NotBool},
      {"max", [](const Operands& o) { return max(o.a, o.b); }, NotBool},
      {"min_literal", [](const Operands& o) { return min(o.a, 3); }, NotBool},
      {"max_literal", [](const Operands& o) { return max(0, o.a); }, NotBool},
      {"pow", [](const Operands& o) { return pow(o.a, o.b); }, IsFloat},
      {"add_int_literal", [](const Operands& o) { return o.a + 2; }, NotBool},
      // A float literal makes the product f32, even of a bool.
      {"mul_float_literal", [](const Operands& o) { return o.a * 0.5; }, Any},
      {"neg", [](const Operands& o) { return -o.a; }, NotBool},
      {"bit_and", [](const Operands& o) { return o.a & o.b; },
       [](DataType t) { return !is_float(t); }},
      {"bit_or", [](const Operands& o) { return o.a | o.b; },
       [](DataType t) { return !is_float(t); }},
      {"bit_xor", [](const Operands& o) { return o.a ^ o.b; },
       [](DataType t) { return !is_float(t); }},
      {"shl", [](const Operands& o) { return o.a << o.b; },
       [](DataType t) { return !is_float(t); }},
      {"shr", [](const Operands& o) { return o.a >> o.b; },
       [](DataType t) { return !is_float(t); }},
      {"bit_not", [](const Operands& o) { return ~o.a; }, IsInt},
      {"logical_and", [](const Operands& o) { return o.a && o.b; }, IsBool},
      {"logical_or", [](const Operands& o) { return o.a || o.b; }, IsBool},
      {"logical_not", [](const Operands& o) { return !o.a; }, IsBool},
      {"eq", [](const Operands& o) { return o.a == o.b; }, Any},
      {"ne", [](const Operands& o) { return o.a != o.b; }, Any},
      {"lt", [](const Operands& o) { return o.a < o.b; }, Any},
      {"le", [](const Operands& o) { return o.a <= o.b; }, Any},
      {"gt", [](const Operands& o) { return o.a > o.b; }, Any},
      {"ge", [](const Operands& o) { return o.a >= o.b; }, Any},
      {"compare_and", [](const Operands& o) { return o.c && (o.a < o.b); },
       Any},
      {"select", [](const Operands& o) { return select(o.c, o.a, o.b); }, Any},
      {"if_then_else",
       [](const Operands& o) { return if_then_else(o.a == o.b, o.b, o.a); },
       Any},
      {"constant",
       [](const Operands& o) { return select(o.c, o.a, constant(1, o.t)); },
       Any},
      {"max_min_value",
       [](const Operands& o) {
         return select(o.c, max_value(o.t), min_value(o.t));
       },
       Any},
      {"infinity",
       [](const Operands& o) { return select(o.c, infinity(o.t), o.a); },
       IsFloat},
      {"neg_infinity",
       [](const Operands& o) { return max(o.a, -infinity(o.t)); }, IsFloat},
      {"abs", [](const Operands& o) { return abs(o.a); }, NotBool},
  };
  const std::vector<std::pair<std::string, Expr (*)(const Expr&)>> math = {
      {"exp", exp},     {"exp2", exp2},       {"log", log},
      {"log2", log2},   {"sqrt", sqrt},       {"rsqrt", rsqrt},
      {"tanh", tanh},   {"sigmoid", sigmoid}, {"sin", sin},
      {"cos", cos},     {"floor", floor},     {"ceil", ceil},
      {"round", round}, {"erf", erf}};
  for (const auto& [name, f] : math) {
    ops.push_back(
        {name, [f = f](const Operands& o) { return f(o.a); }, IsFloat});
  }
  for (DataType u : kDtypes) {
    ops.push_back({absl::StrCat("cast_", std::string(dtype_name(u))),
                   [u](const Operands& o) { return cast(o.a, u); }, Any});
  }
  return ops;
}

// A tile op on tiles of the dtype under test: reductions, cumsum, atomics.
// `accepts` is nullptr where the documented rules say nothing about dtypes.
struct TileOp {
  std::string name;
  std::function<void(DataType, const Buffer& in2d, const Buffer& frag2d,
                     const Buffer& shared2d, const Buffer& out)>
      record;
  bool (*accepts)(DataType);
  int group;  // ops of one group share a kernel
};
constexpr int kTileGroups = 3;  // reductions of fragments, of shared, the rest

bool AtomicAddDtype(DataType t) {
  return t == f32 || t == f16 || t == bf16 || t == f64 || t == i32 ||
         t == u32 || t == i64;
}
bool AtomicMinMaxDtype(DataType t) {
  return t == f32 || t == i32 || t == u32 || t == i64;
}

std::vector<TileOp> TileOps() {
  using R =
      void (*)(const Buffer&, const Buffer&, ReduceOptions, SourceLocation);
  std::vector<TileOp> ops;
  const std::vector<std::pair<std::string, R>> reduces = {
      {"reduce_sum", reduce_sum},
      {"reduce_max", reduce_max},
      {"reduce_min", reduce_min},
      {"reduce_abssum", reduce_abssum},
      {"reduce_absmax", reduce_absmax}};
  for (const auto& [name, r] : reduces) {
    for (int dim : {0, 1}) {
      for (bool shared : {false, true}) {
        ops.push_back(
            {name + "_dim" + std::to_string(dim) +
                 (shared ? "_shared" : "_fragment"),
             [r = r, dim, shared](DataType t, const Buffer&, const Buffer& frag,
                                  const Buffer& smem, const Buffer& out) {
               Buffer dst = alloc_fragment({dim == 0 ? kCols : kRows}, t);
               r(shared ? smem : frag, dst, {.dim = dim}, TESSEL_HERE);
               copy(dst, out(0, 0));
             },
             nullptr, shared ? 1 : 0});
      }
    }
  }
  for (int dim : {0, 1}) {
    ops.push_back({"cumsum_dim" + std::to_string(dim),
                   [dim](DataType t, const Buffer&, const Buffer& frag,
                         const Buffer&, const Buffer& out) {
                     Buffer dst = alloc_fragment({kRows, kCols}, t);
                     cumsum(frag, dst, {.dim = dim});
                     copy(dst, out);
                   },
                   nullptr, 2});
  }
  using A = void (*)(const TileArg&, const AtomicValue&, SourceLocation);
  const std::vector<std::tuple<std::string, A, bool (*)(DataType)>> atomics = {
      {"atomic_add", atomic_add, AtomicAddDtype},
      {"atomic_max", atomic_max, AtomicMinMaxDtype},
      {"atomic_min", atomic_min, AtomicMinMaxDtype}};
  for (const auto& [name, f, ok] : atomics) {
    ops.push_back(
        {name + "_fragment",
         [f = f](DataType, const Buffer&, const Buffer& frag, const Buffer&,
                 const Buffer& out) { f(out(0, 0), frag, TESSEL_HERE); },
         ok, 2});
    ops.push_back(
        {name + "_shared",
         [f = f](DataType, const Buffer&, const Buffer&, const Buffer& smem,
                 const Buffer& out) { f(out(0, 0), smem, TESSEL_HERE); },
         ok, 2});
    ops.push_back({name + "_scalar",
                   [f = f](DataType, const Buffer& in, const Buffer&,
                           const Buffer&, const Buffer& out) {
                     f(out(1, 2), static_cast<Expr>(in(3, 4)), TESSEL_HERE);
                   },
                   ok, 2});
  }
  return ops;
}

// Element ops of dtype t in one Parallel loop, each result selected into
// one fragment (a fragment per op would make the barrier planner's work
// grow with their product).
absl::StatusOr<Program> BuildElementwise(DataType t,
                                         const std::vector<ElementOp>& ops) {
  ProgramBuilder p(absl::StrCat("elementwise_", std::string(dtype_name(t))));
  Buffer A = p.tensor("A", {kN}, t);
  Buffer B = p.tensor("B", {kN}, t);
  Buffer C = p.tensor("C", {kN}, bool_);
  Buffer O = p.tensor("O", {kN}, t);
  {
    Kernel kernel(1, {.threads = 128});
    Buffer a = alloc_fragment({kN}, t);
    Buffer b = alloc_fragment({kN}, t);
    Buffer c = alloc_fragment({kN}, bool_);
    Buffer o = alloc_fragment({kN}, t);
    copy(A(0), a);
    copy(B(0), b);
    copy(C(0), c);
    for (auto i : Parallel(kN)) {
      o(i) = a(i);
      for (const ElementOp& op : ops) {
        o(i) = select(c(i), op.apply({a(i), b(i), c(i), t}), o(i));
      }
    }
    copy(o, O(0));
  }
  return p.finish();
}

// Tile ops of dtype t, each with its own output, reading one fragment and
// one shared tile.
absl::StatusOr<Program> BuildTile(DataType t, const std::vector<TileOp>& ops) {
  ProgramBuilder p(absl::StrCat("tile_ops_", std::string(dtype_name(t))));
  Buffer R = p.tensor("R", {kRows, kCols}, t);
  std::vector<Buffer> outs;
  for (size_t k = 0; k < ops.size(); ++k) {
    outs.push_back(p.tensor(absl::StrCat("T", k), {kRows, kCols}, t));
  }
  {
    Kernel kernel(1, {.threads = 128});
    Buffer frag = alloc_fragment({kRows, kCols}, t);
    Buffer smem = alloc_shared({kRows, kCols}, t);
    copy(R(0, 0), frag);
    copy(R(0, 0), smem);
    for (size_t k = 0; k < ops.size(); ++k) {
      ops[k].record(t, R, frag, smem, outs[k]);
    }
  }
  return p.finish();
}

std::string Compile(const absl::StatusOr<Program>& p) {
  if (!p.ok()) return std::string(p.status().message());
  absl::StatusOr<CompiledKernel> k = compile(*p, {.target = Target::sm90a()});
  return k.ok() ? "" : std::string(k.status().message());
}

class Coverage : public ::testing::TestWithParam<DataType> {};

TEST_P(Coverage, AcceptedOpsCompileForSm90a) {
  const DataType t = GetParam();
  std::vector<ElementOp> elem;
  for (const ElementOp& op : ElementOps()) {
    absl::StatusOr<Program> alone = BuildElementwise(t, {op});
    EXPECT_EQ(alone.ok(), op.accepts(t))
        << op.name << " on " << dtype_name(t) << ": "
        << (alone.ok() ? "accepted" : alone.status().ToString());
    if (alone.ok()) elem.push_back(op);
  }
  std::vector<std::vector<TileOp>> groups(kTileGroups);
  for (const TileOp& op : TileOps()) {
    absl::StatusOr<Program> alone = BuildTile(t, {op});
    if (op.accepts != nullptr) {
      EXPECT_EQ(alone.ok(), op.accepts(t))
          << op.name << " on " << dtype_name(t) << ": "
          << (alone.ok() ? "accepted" : alone.status().ToString());
    }
    if (alone.ok()) groups[op.group].push_back(op);
  }
  ASSERT_FALSE(elem.empty());
  // One kernel per batch; when one fails, its ops compile alone to name the
  // culprits (the batch's log is long).
  if (std::string e = Compile(BuildElementwise(t, elem)); !e.empty()) {
    for (const ElementOp& op : elem) {
      EXPECT_EQ(Compile(BuildElementwise(t, {op})), "")
          << op.name << " on " << dtype_name(t);
    }
    ADD_FAILURE() << e.substr(0, 4000);
  }
  for (const std::vector<TileOp>& group : groups) {
    if (group.empty()) continue;
    if (std::string e = Compile(BuildTile(t, group)); !e.empty()) {
      for (const TileOp& op : group) {
        EXPECT_EQ(Compile(BuildTile(t, {op})), "")
            << op.name << " on " << dtype_name(t);
      }
      ADD_FAILURE() << e.substr(0, 4000);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Coverage, ::testing::ValuesIn(kDtypes),
                         [](const ::testing::TestParamInfo<DataType>& info) {
                           return std::string(dtype_name(info.param));
                         });

}  // namespace
}  // namespace tessel
