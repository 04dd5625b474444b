// The builder DSL: C++ objects that record a tile program, read like TileLang.
//
// clang-format off
//   namespace T = tessel;
//   T::ProgramBuilder p("gemm");
//   auto M = T::dim("M");            // symbolic, bound at launch
//   auto A = p.tensor("A", {M, K}, T::f16);
//   auto C = p.tensor("C", {M, N}, T::f32);
//   {
//     T::Kernel kernel(T::ceildiv(N, 64), T::ceildiv(M, 64), {.threads = 128});
//     auto [bx, by] = kernel.block_index();
//     auto As = T::alloc_shared({64, 32}, T::f16, "A_shared");
//     auto acc = T::alloc_fragment({64, 64}, T::f32, "acc");
//     T::clear(acc);
//     for (auto k : T::Pipelined(T::ceildiv(K, 32), {.num_stages = 3})) {
//       T::copy(A(by * 64, k * 32), As);   // extent taken from As
//       ...
//     }
//     for (auto [i, j] : T::Parallel(64, 64)) acc(i, j) = T::max(acc(i, j), 0);
//     T::copy(acc, C(by * 64, bx * 64));
//   }
//   absl::StatusOr<T::Program> prog = p.finish();
// clang-format on
//
// Recording rules:
// - Every call records into the innermost open scope of the ProgramBuilder
//   that was constructed last on this thread (and is still alive). A call
//   with no such builder (none alive, or one on another thread only) is an
//   error too: the next finish(), on any thread, returns it.
// - Scope objects (Kernel, the loop ranges) close their scope in their
//   destructor; a range-for body runs exactly once, to record.
// - Mistakes never crash: the first one is kept, with the file:line of the
//   call that made it, and finish() returns it as InvalidArgument.
// - `buf(i, j)` is a BufferRef. With plain indices it is an element: reading
//   it (converting to T::Expr) records a load, `buf(i, j) = v` / `+=` record
//   a store. `auto x = buf(i, j); x = 1;` does not compile (it would store
//   into buf): write `T::Expr x = buf(i, j)` to keep a value. As an operand of
//   a tile op it is a start point whose extents come from the other operand,
//   aligned to the trailing dimensions (leading ones get extent 1), as in
//   TileLang; a guess that lays a tile dim onto a smaller tensor dim is an
//   error. With T::slice(start, stop) or T::all in some dimension it is an
//   explicit region.
// - Boundary rule (also docs/ir.md): a copy or atomic whose global region runs
//   past the tensor's edge reads zeros there and skips the stores there; so
//   does an element access: X(i, j) outside X (negative i too) reads 0, and
//   X(i, j) = v or an element atomic there does nothing. The GPU checks only
//   what the loop and block ranges cannot prove inside.
#ifndef TESSEL_BUILDER_H_
#define TESSEL_BUILDER_H_

#include <array>
#include <concepts>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "tessel/dtype.h"
#include "tessel/expr.h"
#include "tessel/program.h"

namespace tessel {

namespace ir {
class BufferNode;
}  // namespace ir
namespace dsl {
class BuilderState;
}  // namespace dsl

using SourceLocation = std::source_location;
#define TESSEL_HERE std::source_location::current()

class Buffer;
class BufferRef;

// A half-open range [start, stop) of one dimension: A(b, T::slice(0, 64)).
struct Slice {
  Expr start;  // undefined start = the whole dimension (T::all)
  Expr stop;
};
inline Slice slice(Expr start, Expr stop) {
  return Slice{std::move(start), std::move(stop)};
}
inline const Slice all{};

// One index of buf(...): an expression or a slice. Captures the call site.
class Index {
 public:
  template <typename E>
  requires std::convertible_to<E, Expr> Index(
      E&& e, SourceLocation loc = TESSEL_HERE)  // NOLINT
      : expr_(static_cast<Expr>(std::forward<E>(e))), loc_(loc) {}
  Index(Slice s, SourceLocation loc = TESSEL_HERE)  // NOLINT
      : expr_(std::move(s.start)),
        stop_(std::move(s.stop)),
        is_slice_(true),
        loc_(loc) {}

  bool is_slice() const { return is_slice_; }
  const Expr& expr() const { return expr_; }  // index, or slice start
  const Expr& stop() const { return stop_; }
  SourceLocation loc() const { return loc_; }

 private:
  Expr expr_;
  Expr stop_;
  bool is_slice_ = false;
  SourceLocation loc_;
};

// A global tensor parameter or an allocated tile / local / variable.
class Buffer {
 public:
  Buffer() = default;
  bool defined() const { return node_ != nullptr; }
  const std::string& name() const;
  DataType dtype() const;
  int rank() const;
  std::vector<Expr> shape() const;

  BufferRef operator()(Index i0) const;
  BufferRef operator()(Index i0, Index i1) const;
  BufferRef operator()(Index i0, Index i1, Index i2) const;
  BufferRef operator()(Index i0, Index i1, Index i2, Index i3) const;
  BufferRef operator()(Index i0, Index i1, Index i2, Index i3, Index i4) const;
  BufferRef operator()(Index i0, Index i1, Index i2, Index i3, Index i4,
                       Index i5) const;
  BufferRef operator[](Index i0) const;

 private:
  friend struct dsl::Access;
  std::shared_ptr<const ir::BufferNode> node_;
};

// buf(i, j): an element (load / store) or a region start; see the top.
//
// Stores go through the reference itself: `X(i) = v;`, `X(i) += v;`. A
// reference kept in a variable cannot be assigned: `auto v = X(i); v = v * 2;`
// would store into X where a new value was meant, so it does not compile
// (the `&` overloads are deleted). Write `T::Expr v = X(i);` for a value, or
// `auto v = T::alloc_var(...)` for a variable (a ScalarVar, assignable).
class BufferRef {
 public:
  BufferRef(const BufferRef&) = default;
  // Records buf[idx] = value (converted to buf's dtype).
  BufferRef& operator=(const Expr& value) && { return Store(value); }
  BufferRef& operator=(const BufferRef& other) && {
    return Store(static_cast<Expr>(other));
  }
  BufferRef& operator+=(const Expr& v) && {
    return Store(static_cast<Expr>(*this) + v);
  }
  BufferRef& operator-=(const Expr& v) && {
    return Store(static_cast<Expr>(*this) - v);
  }
  BufferRef& operator*=(const Expr& v) && {
    return Store(static_cast<Expr>(*this) * v);
  }
  BufferRef& operator/=(const Expr& v) && {
    return Store(static_cast<Expr>(*this) / v);
  }
  // A named copy of X(i): see above.
  BufferRef& operator=(const Expr& value) & = delete;
  BufferRef& operator=(const BufferRef& other) & = delete;
  BufferRef& operator+=(const Expr& v) & = delete;
  BufferRef& operator-=(const Expr& v) & = delete;
  BufferRef& operator*=(const Expr& v) & = delete;
  BufferRef& operator/=(const Expr& v) & = delete;
  // Records a load of the element.
  operator Expr() const;  // NOLINT

  const Buffer& buffer() const { return buffer_; }
  const std::vector<Index>& indices() const { return indices_; }
  bool is_element() const;  // no slices
  SourceLocation loc() const { return loc_; }

 protected:
  // Records buf[idx] = value, at `loc` (the reference's own by default).
  BufferRef& Store(const Expr& value) { return Store(value, loc_); }
  BufferRef& Store(const Expr& value, SourceLocation loc);

 private:
  friend class Buffer;
  friend struct dsl::Access;
  BufferRef(Buffer buffer, std::vector<Index> indices, SourceLocation loc)
      : buffer_(std::move(buffer)), indices_(std::move(indices)), loc_(loc) {}
  Buffer buffer_;
  std::vector<Index> indices_;
  SourceLocation loc_;
};

// A per-thread scalar variable (T::alloc_var): assigned by name,
// `auto s = T::alloc_var(T::f32); s = 0; s += x;`.
class ScalarVar : public BufferRef {
 public:
  // An assigned value with the assignment's line (errors name it).
  struct Assigned {
    template <typename E>
    requires std::convertible_to<E, Expr> Assigned(
        E&& e, SourceLocation at = TESSEL_HERE)  // NOLINT
        : value(static_cast<Expr>(std::forward<E>(e))), loc(at) {}
    Expr value;
    SourceLocation loc;
  };
  ScalarVar(const ScalarVar&) = default;
  ScalarVar& operator=(Assigned v) { return Set(v.value, v.loc); }
  ScalarVar& operator=(const ScalarVar& o) { return Set(static_cast<Expr>(o)); }
  ScalarVar& operator+=(Assigned v) {
    return Set(static_cast<Expr>(*this) + v.value, v.loc);
  }
  ScalarVar& operator-=(Assigned v) {
    return Set(static_cast<Expr>(*this) - v.value, v.loc);
  }
  ScalarVar& operator*=(Assigned v) {
    return Set(static_cast<Expr>(*this) * v.value, v.loc);
  }
  ScalarVar& operator/=(Assigned v) {
    return Set(static_cast<Expr>(*this) / v.value, v.loc);
  }

 private:
  friend struct dsl::Access;
  explicit ScalarVar(BufferRef ref) : BufferRef(std::move(ref)) {}
  ScalarVar& Set(const Expr& v) {
    Store(v);
    return *this;
  }
  ScalarVar& Set(const Expr& v, SourceLocation loc) {
    Store(v, loc);
    return *this;
  }
};

// A tile operand: a whole buffer, a start point, or a sliced region.
class TileArg {
 public:
  TileArg(const Buffer& buffer) : buffer_(buffer) {}                   // NOLINT
  TileArg(const BufferRef& ref) : buffer_(ref.buffer()), ref_(ref) {}  // NOLINT
  const Buffer& buffer() const { return buffer_; }
  const BufferRef* ref() const { return ref_ ? &*ref_ : nullptr; }

 private:
  Buffer buffer_;
  std::optional<BufferRef> ref_;
};

// The value side of an atomic: a tile (buffer / sliced region) or a scalar.
class AtomicValue {
 public:
  AtomicValue(const Buffer& buffer) : tile_(buffer) {}  // NOLINT
  AtomicValue(const BufferRef& ref) {                   // NOLINT
    if (ref.is_element()) {
      value_ = ref;
    } else {
      tile_.emplace(ref);
    }
  }
  template <typename E>
  requires(std::convertible_to<E, Expr> &&
           !std::is_same_v<std::decay_t<E>, BufferRef>) AtomicValue(E&& e)
      : value_(static_cast<Expr>(std::forward<E>(e))) {}  // NOLINT
  const std::optional<TileArg>& tile() const { return tile_; }
  const Expr& value() const { return value_; }

 private:
  std::optional<TileArg> tile_;
  Expr value_;
};

// Records a program. Construct it first; everything recorded on this thread
// while it is alive goes into it. finish() verifies and returns the program.
class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::string name, SourceLocation loc = TESSEL_HERE);
  ~ProgramBuilder();
  ProgramBuilder(const ProgramBuilder&) = delete;
  ProgramBuilder& operator=(const ProgramBuilder&) = delete;

  // A global tensor parameter; dims are positive numbers, T::dim(...) or
  // integer expressions of them (K / 2, T::ceildiv(K, 128)), which the
  // launch and the interpreter check against the tensors passed. Each
  // T::dim must also be a whole dimension of some tensor, which binds it.
  // Parameters are passed at launch in declaration order.
  Buffer tensor(std::string name, std::initializer_list<Expr> shape,
                DataType dtype, SourceLocation loc = TESSEL_HERE);
  Buffer tensor(std::string name, const std::vector<Expr>& shape,
                DataType dtype, SourceLocation loc = TESSEL_HERE);
  // A symbolic size (i32), bound at launch from the tensor dims that use it.
  // The same name gives the same variable.
  Expr dim(std::string name, SourceLocation loc = TESSEL_HERE);

  // Closes the recording: the first recorded mistake, or the verifier's
  // verdict, or the program. Later recording calls are errors (reported by
  // a second finish()).
  absl::StatusOr<Program> finish(SourceLocation loc = TESSEL_HERE);

  dsl::BuilderState& state() { return *state_; }

 private:
  std::unique_ptr<dsl::BuilderState> state_;
};

// T::dim on the current builder.
Expr dim(std::string name, SourceLocation loc = TESSEL_HERE);

// ---------------------------------------------------------------- kernel

struct KernelOptions {
  int threads = 128;
};

namespace dsl {
// Opens / closes the kernel scope; the templates below only add the arity.
class KernelScope {
 public:
  KernelScope(std::vector<Expr> grid, KernelOptions options,
              SourceLocation loc);
  ~KernelScope();
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;

 protected:
  std::vector<Expr> block_vars_;

 private:
  BuilderState* state_;
  int frame_;
};
}  // namespace dsl

// with T.Kernel(gx, gy, threads=128) as (bx, by):
//   T::Kernel kernel(gx, gy, {.threads = 128});
//   auto [bx, by] = kernel.block_index();
template <int N>
class Kernel : public dsl::KernelScope {
 public:
  Kernel(Expr x, KernelOptions o = {},
         SourceLocation loc = TESSEL_HERE) requires(N == 1)
      : KernelScope({std::move(x)}, o, loc) {}
  Kernel(Expr x, Expr y, KernelOptions o = {},
         SourceLocation loc = TESSEL_HERE) requires(N == 2)
      : KernelScope({std::move(x), std::move(y)}, o, loc) {}
  Kernel(Expr x, Expr y, Expr z, KernelOptions o = {},
         SourceLocation loc = TESSEL_HERE) requires(N == 3)
      : KernelScope({std::move(x), std::move(y), std::move(z)}, o, loc) {}

  // The block indices bx (, by (, bz)), each in [0, grid dim).
  std::array<Expr, N> block_index() const {
    std::array<Expr, N> out;
    for (int i = 0; i < N; ++i) out[i] = block_vars_[i];
    return out;
  }
};
Kernel(Expr)->Kernel<1>;
Kernel(Expr, KernelOptions)->Kernel<1>;
Kernel(Expr, Expr)->Kernel<2>;
Kernel(Expr, Expr, KernelOptions)->Kernel<2>;
Kernel(Expr, Expr, Expr)->Kernel<3>;
Kernel(Expr, Expr, Expr, KernelOptions)->Kernel<3>;

// ---------------------------------------------------------------- loops

enum class LoopKind { kSerial, kUnroll, kParallel, kPipelined };

namespace dsl {
// A one-shot range: its single iteration yields the loop variables; its
// destructor closes the loop scopes.
class LoopRange {
 public:
  LoopRange(LoopKind kind, std::vector<std::pair<Expr, Expr>> ranges,
            int num_stages, std::vector<int> order, std::vector<int> stage,
            std::string name, SourceLocation loc);
  ~LoopRange();
  LoopRange(const LoopRange&) = delete;
  LoopRange& operator=(const LoopRange&) = delete;

 protected:
  std::vector<Expr> vars_;

 private:
  BuilderState* state_;
  int first_frame_ = -1;
  int frames_ = 0;
};

template <typename Value>
class OnceIterator {
 public:
  OnceIterator(Value value, bool done)
      : value_(std::move(value)), done_(done) {}
  const Value& operator*() const { return value_; }
  OnceIterator& operator++() {
    done_ = true;
    return *this;
  }
  bool operator!=(const OnceIterator& other) const {
    return done_ != other.done_;
  }

 private:
  Value value_;
  bool done_;
};
}  // namespace dsl

struct LoopOptions {
  std::string name;  // the loop variable's printed name; "" = automatic
};

struct PipelineOptions {
  int num_stages = 0;      // 0 = no software pipelining (sequential either way)
  std::vector<int> order;  // TileLang's order / stage lists, one entry per
  std::vector<int> stage;  // statement of the loop body (docs/scheduler.md)
  std::string name;
};

// A sequential loop with one variable.
class ScalarLoop : public dsl::LoopRange {
 public:
  using LoopRange::LoopRange;
  dsl::OnceIterator<Expr> begin() const { return {vars_[0], false}; }
  dsl::OnceIterator<Expr> end() const { return {vars_[0], true}; }
};

// for k in T.serial(n) / T.serial(start, stop)
class Serial : public ScalarLoop {
 public:
  Serial(Expr extent, LoopOptions o = {}, SourceLocation loc = TESSEL_HERE)
      : ScalarLoop(LoopKind::kSerial, {{Expr(0), std::move(extent)}}, 0, {}, {},
                   o.name, loc) {}
  Serial(Expr start, Expr stop, LoopOptions o = {},
         SourceLocation loc = TESSEL_HERE)
      : ScalarLoop(LoopKind::kSerial, {{std::move(start), std::move(stop)}}, 0,
                   {}, {}, o.name, loc) {}
};

// for k in T.unroll(n)
class Unroll : public ScalarLoop {
 public:
  Unroll(Expr extent, LoopOptions o = {}, SourceLocation loc = TESSEL_HERE)
      : ScalarLoop(LoopKind::kUnroll, {{Expr(0), std::move(extent)}}, 0, {}, {},
                   o.name, loc) {}
  Unroll(Expr start, Expr stop, LoopOptions o = {},
         SourceLocation loc = TESSEL_HERE)
      : ScalarLoop(LoopKind::kUnroll, {{std::move(start), std::move(stop)}}, 0,
                   {}, {}, o.name, loc) {}
};

// for k in T.Pipelined(n, num_stages=3)
class Pipelined : public ScalarLoop {
 public:
  Pipelined(Expr extent, PipelineOptions o = {},
            SourceLocation loc = TESSEL_HERE)
      : ScalarLoop(LoopKind::kPipelined, {{Expr(0), std::move(extent)}},
                   o.num_stages, std::move(o.order), std::move(o.stage), o.name,
                   loc) {}
  Pipelined(Expr start, Expr stop, PipelineOptions o = {},
            SourceLocation loc = TESSEL_HERE)
      : ScalarLoop(LoopKind::kPipelined, {{std::move(start), std::move(stop)}},
                   o.num_stages, std::move(o.order), std::move(o.stage), o.name,
                   loc) {}
};

// for i, j in T.Parallel(m, n): element-wise over a tile, by all threads.
//   for (auto i : T::Parallel(n)) ...
//   for (auto [i, j] : T::Parallel(m, n)) ...
template <int N>
class Parallel : public dsl::LoopRange {
 public:
  using Value = std::conditional_t<N == 1, Expr, std::array<Expr, N>>;
  Parallel(Expr a, SourceLocation loc = TESSEL_HERE) requires(N == 1)
      : LoopRange(LoopKind::kParallel, {{Expr(0), std::move(a)}}, 0, {}, {}, "",
                  loc) {}
  Parallel(Expr a, Expr b, SourceLocation loc = TESSEL_HERE) requires(N == 2)
      : LoopRange(LoopKind::kParallel,
                  {{Expr(0), std::move(a)}, {Expr(0), std::move(b)}}, 0, {}, {},
                  "", loc) {}
  Parallel(Expr a, Expr b, Expr c,
           SourceLocation loc = TESSEL_HERE) requires(N == 3)
      : LoopRange(LoopKind::kParallel,
                  {{Expr(0), std::move(a)},
                   {Expr(0), std::move(b)},
                   {Expr(0), std::move(c)}},
                  0, {}, {}, "", loc) {}
  dsl::OnceIterator<Value> begin() const { return {value(), false}; }
  dsl::OnceIterator<Value> end() const { return {value(), true}; }

 private:
  Value value() const {
    if constexpr (N == 1) {
      return vars_[0];
    } else {
      Value v;
      for (int i = 0; i < N; ++i) v[i] = vars_[i];
      return v;
    }
  }
};
Parallel(Expr)->Parallel<1>;
Parallel(Expr, Expr)->Parallel<2>;
Parallel(Expr, Expr, Expr)->Parallel<3>;

// ---------------------------------------------------------------- if / else

// T::If(i < n, [&] { ... }).Else([&] { ... });
// T::If(a, [&] { ... }).ElseIf(b, [&] { ... }).Else([&] { ... });
class IfChain {
 public:
  IfChain ElseIf(const Expr& cond, const std::function<void()>& body,
                 SourceLocation loc = TESSEL_HERE) const;
  void Else(const std::function<void()>& body,
            SourceLocation loc = TESSEL_HERE) const;

 private:
  friend IfChain If(const Expr&, const std::function<void()>&, SourceLocation);
  IfChain(uint64_t builder, uint64_t frame, int entry)
      : builder_(builder), frame_(frame), entry_(entry) {}
  uint64_t builder_;  // the recording builder's id(); 0: none
  uint64_t frame_;
  int entry_;
};
IfChain If(const Expr& cond, const std::function<void()>& then_body,
           SourceLocation loc = TESSEL_HERE);

// ---------------------------------------------------------------- allocations

using Shape = std::vector<Expr>;

// Names are for printing; "" picks one (shared0, frag1, ...).
Buffer alloc_shared(Shape shape, DataType dtype, std::string name = "",
                    SourceLocation loc = TESSEL_HERE);
Buffer alloc_fragment(Shape shape, DataType dtype, std::string name = "",
                      SourceLocation loc = TESSEL_HERE);
Buffer alloc_local(Shape shape, DataType dtype, std::string name = "",
                   SourceLocation loc = TESSEL_HERE);
// A per-thread scalar: `auto s = T::alloc_var(T::f32); s = 0; s += x;`.
ScalarVar alloc_var(DataType dtype, std::string name = "",
                    SourceLocation loc = TESSEL_HERE);
// A block-uniform scalar: `value`, computed once here into every thread
// alike, named for the rest of the scope. Usable in loop bounds, in T::If
// guards around tile ops, gemms and barriers, in copy / atomic starts. The
// value may read global tensors, shared tiles, block indices, T::dim
// sizes, serial loop indices and other lets; a per-thread value (a
// Parallel loop index, a fragment, local or var element) is an error at
// this line, saying which.
// clang-format off
//   auto page = T::let(block_table(b, k), "page");   // paged KV cache
//   T::copy(K_cache(page, 0, h, 0), Ks);
//   auto len = T::let(seq_lens(b), "len");
//   for (auto k : T::Pipelined(T::ceildiv(len, 64), {.num_stages = 2})) ...
// clang-format on
Expr let(const Expr& value, std::string name = "",
         SourceLocation loc = TESSEL_HERE);
// A block-uniform variable, assignable: every thread holds it and updates
// it alike, so its reads are uniform as a let's (loop bounds, guards around
// tile ops and gemms, copy starts). An assignment takes a uniform value (as
// T::let's) and stands outside Parallel loops and outside T::Ifs whose
// condition differs between threads; the verifier refuses others, saying
// why. A copy whose start reads it runs in its own iteration (a pipeline
// or TMA producer does not issue it ahead).
// clang-format off
//   auto e = T::alloc_uniform(T::i32, "expert");     // find a row's group
//   e = 0;
//   for (auto g : T::Serial(G))
//     T::If(offsets(g + 1) <= row0, [&] { e = g + 1; });
// clang-format on
ScalarVar alloc_uniform(DataType dtype, std::string name = "",
                        SourceLocation loc = TESSEL_HERE);
// The bits of `value` read as `dtype`, of the same width: f32 <-> i32 /
// u32, f16 / bf16 <-> i16 (T::cast converts the value instead). Another
// pair is an error at this line.
// clang-format off
//   auto bits = T::bitcast(x, T::u32);               // sign bit: bits >> 31
//   auto next = T::bitcast(bits + 1u, T::f32);       // the next float
// clang-format on
Expr bitcast(const Expr& value, DataType dtype,
             SourceLocation loc = TESSEL_HERE);
// mbarriers, barrier i expecting arrive_counts[i] arrivals per phase; use
// as T::mbarrier_arrive(bars[i]).
Buffer alloc_barrier(std::vector<Expr> arrive_counts, std::string name = "",
                     SourceLocation loc = TESSEL_HERE);
// TileLang's implicit barrier list: afterwards T::mbarrier_arrive(i) etc.
// take a barrier id into it.
Buffer create_list_of_mbarrier(std::vector<Expr> arrive_counts,
                               SourceLocation loc = TESSEL_HERE);

// ---------------------------------------------------------------- tile ops

void copy(const TileArg& src, const TileArg& dst,
          SourceLocation loc = TESSEL_HERE);

enum class GemmWarpPolicy { kSquare, kFullRow, kFullCol };
struct GemmOptions {
  bool transpose_A = false;
  bool transpose_B = false;
  bool clear_accum = false;
  GemmWarpPolicy policy = GemmWarpPolicy::kSquare;
};
// C += op(A) * op(B); C a fragment, A and B shared or fragment.
void gemm(const TileArg& A, const TileArg& B, const TileArg& C,
          GemmOptions options = {}, SourceLocation loc = TESSEL_HERE);

void fill(const TileArg& dst, const Expr& value,
          SourceLocation loc = TESSEL_HERE);
void clear(const TileArg& dst, SourceLocation loc = TESSEL_HERE);

struct ReduceOptions {
  int dim = -1;  // negative counts from the end, as in Python
  bool clear = true;
};
void reduce_sum(const Buffer& src, const Buffer& dst, ReduceOptions o = {},
                SourceLocation loc = TESSEL_HERE);
void reduce_max(const Buffer& src, const Buffer& dst, ReduceOptions o = {},
                SourceLocation loc = TESSEL_HERE);
void reduce_min(const Buffer& src, const Buffer& dst, ReduceOptions o = {},
                SourceLocation loc = TESSEL_HERE);
void reduce_abssum(const Buffer& src, const Buffer& dst, ReduceOptions o = {},
                   SourceLocation loc = TESSEL_HERE);
void reduce_absmax(const Buffer& src, const Buffer& dst, ReduceOptions o = {},
                   SourceLocation loc = TESSEL_HERE);

struct CumsumOptions {
  int dim = 0;
  bool reverse = false;
};
void cumsum(const Buffer& src, const Buffer& dst, CumsumOptions o = {},
            SourceLocation loc = TESSEL_HERE);
void cumsum(const Buffer& src_and_dst, CumsumOptions o = {},
            SourceLocation loc = TESSEL_HERE);

// dst (global) op= value, atomically. dst(i, j) + a tile: region form (dst
// is a start point or slices); dst(i, j) + a scalar: one element.
void atomic_add(const TileArg& dst, const AtomicValue& value,
                SourceLocation loc = TESSEL_HERE);
void atomic_max(const TileArg& dst, const AtomicValue& value,
                SourceLocation loc = TESSEL_HERE);
void atomic_min(const TileArg& dst, const AtomicValue& value,
                SourceLocation loc = TESSEL_HERE);

// A ticket: once for the block, counter(i) (a global i32 element) +=
// increment, and every thread gets the counter's old value, a block-uniform
// i32. It releases the block's earlier global writes and acquires those of
// the blocks whose tickets came before, so the block that draws the last
// ticket of a tile may read their partial results:
//
// clang-format off
//   T::Expr t = T::atomic_ticket(counters(tile));
//   T::If(t == slices - 1, [&] { /* sum the partials */ });
// clang-format on
//
// Every thread must reach it (no Parallel loop, no per-thread branch).
Expr atomic_ticket(const BufferRef& counter, const Expr& increment = 1,
                   SourceLocation loc = TESSEL_HERE);

// ---------------------------------------------------------------- sync

void sync_threads(SourceLocation loc = TESSEL_HERE);
void mbarrier_arrive(const BufferRef& barrier,
                     SourceLocation loc = TESSEL_HERE);
void mbarrier_arrive(const Expr& id, SourceLocation loc = TESSEL_HERE);
void mbarrier_expect_tx(const BufferRef& barrier, const Expr& bytes,
                        SourceLocation loc = TESSEL_HERE);
void mbarrier_expect_tx(const Expr& id, const Expr& bytes,
                        SourceLocation loc = TESSEL_HERE);
void mbarrier_wait_parity(const BufferRef& barrier, const Expr& parity,
                          SourceLocation loc = TESSEL_HERE);
void mbarrier_wait_parity(const Expr& id, const Expr& parity,
                          SourceLocation loc = TESSEL_HERE);

// ---------------------------------------------------------------- annotations

struct LayoutSpec {
  bool swizzled = false;
  int swizzle_bytes = 0;  // 0 = chosen by the layout pass
};
inline LayoutSpec make_swizzled_layout(const Buffer&, int swizzle_bytes = 0) {
  return {true, swizzle_bytes};
}
void annotate_layout(const Buffer& buffer, LayoutSpec layout,
                     SourceLocation loc = TESSEL_HERE);
// T.annotate_layout({dq_shared: make_swizzled_layout(dq_shared)})
void annotate_layout(
    std::initializer_list<std::pair<Buffer, LayoutSpec>> layouts,
    SourceLocation loc = TESSEL_HERE);
// Block rasterization in panels of panel_size blocks (L2 reuse).
void use_swizzle(int panel_size = 10, bool column_major = false,
                 SourceLocation loc = TESSEL_HERE);

void print(const Expr& value, std::string message = "",
           SourceLocation loc = TESSEL_HERE);
void print(const Buffer& buffer, std::string message = "",
           SourceLocation loc = TESSEL_HERE);

}  // namespace tessel

#endif  // TESSEL_BUILDER_H_
