// Buffers (global tensors, shared tiles, fragments, locals, scalar variables)
// and regions of them.
//
//   ir::Buffer As = ir::MakeBuffer("A_shared", f16, {128, 32},
//   ir::Scope::kShared); ir::Region r = ir::Region::Full(As); // As[0:128,
//   0:32] ir::Region a{A, {by * 128, k * 32}, {128, 32}};         //
//   A[by*128:+128, k*32:+32]
#ifndef TESSEL_SRC_IR_BUFFER_H_
#define TESSEL_SRC_IR_BUFFER_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/ir/expr.h"

namespace tessel::ir {

enum class Scope : uint8_t {
  kGlobal,    // a tensor parameter in device memory
  kShared,    // one tile per block, in shared memory
  kFragment,  // one tile per block, logically whole, spread over the block's
              // threads' registers by the layout pass
  kLocal,     // per-thread array in registers
  kVar,       // per-thread scalar variable (shape {1}), T.alloc_var
  kBarrier,   // per-block array of mbarriers (shared memory, 8 bytes each)
  kUniform,   // block-uniform scalar variable (shape {1}), T::alloc_uniform:
              // one register per thread, assigned only uniform values under
              // uniform control (the verifier checks), so all threads agree
};

const char* ScopeName(Scope scope);  // "global", "shared", ...

// A scalar variable (shape {1}, one register per thread): T::alloc_var's
// or T::alloc_uniform's.
inline bool IsScalarVar(Scope s) {
  return s == Scope::kVar || s == Scope::kUniform;
}

// How a buffer's elements are placed in memory. kDefault is row-major
// (last index fastest). kSwizzled is the XOR swizzle of shared tiles that
// keeps ldmatrix / wgmma / TMA bank-conflict free; swizzle_bytes 0 = let the
// layout pass pick (32, 64 or 128). atoms: rows wider than 128 bytes are
// cut into 128-byte column atoms, each stored whole ([rows][128 B], atom
// after atom) as the wgmma SWIZZLE_128B canonical layouts read them.
struct Layout {
  enum class Kind : uint8_t { kDefault, kSwizzled };
  Kind kind = Kind::kDefault;
  int swizzle_bytes = 0;
  bool atoms = false;
  bool operator==(const Layout&) const = default;
};

class BufferNode {
 public:
  BufferNode(std::string name, DataType dtype, std::vector<Expr> shape,
             Scope scope, Layout layout)
      : name(std::move(name)),
        dtype(dtype),
        shape(std::move(shape)),
        scope(scope),
        layout(layout) {}
  BufferNode(const BufferNode&) = delete;
  BufferNode& operator=(const BufferNode&) = delete;

  int rank() const { return static_cast<int>(shape.size()); }
  // Product of the shape when every dimension is a constant.
  std::optional<int64_t> ConstNumElements() const;

  const std::string name;
  const DataType dtype;
  const std::vector<Expr> shape;  // i32 constants or symbolic (global only)
  const Scope scope;
  const Layout layout;
};

Buffer MakeBuffer(std::string name, DataType dtype, std::vector<Expr> shape,
                  Scope scope, Layout layout = {});

// A box of a buffer: start[d] .. start[d] + extent[d] - 1 in each dimension.
struct Region {
  Buffer buffer;
  std::vector<Expr> start;
  std::vector<Expr> extent;

  static Region Full(const Buffer& buffer);
  int rank() const { return static_cast<int>(start.size()); }
  // Whether the region provably covers the whole buffer.
  bool IsFull() const;
  // Extents with the unit dimensions dropped ([1, 64, 1, 32] -> [64, 32]):
  // two regions of a tile op match when these agree.
  std::vector<Expr> SqueezedExtents() const;
};

}  // namespace tessel::ir

#endif  // TESSEL_SRC_IR_BUFFER_H_
