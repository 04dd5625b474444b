// Small IR helpers the passes share: substitution, row-major flattening,
// region indexing and statement builders.
//
//   ir::Stmt s2 = passes::Substitute(s, {{k.get(), k + 1}});
//   int64_t d = ir::arith::KnownDivisor(by * 128 + tx * 8);   // 8
//   ir::Expr off = passes::FlatIndex(shape, {i, j});       // i * N + j
#ifndef TESSEL_SRC_PASSES_IR_UTIL_H_
#define TESSEL_SRC_PASSES_IR_UTIL_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "src/ir/arith/bounds.h"
#include "src/ir/arith/divisibility.h"
#include "src/ir/buffer.h"
#include "src/ir/expr.h"
#include "src/ir/op.h"
#include "src/ir/stmt.h"
#include "src/ir/substitute.h"
#include "src/ir/walk.h"

namespace tessel::passes {

// Moved to src/ir (the codegen substitutes too); the passes keep the names.
using ir::Substitute;
using ir::VarMap;

// Replaces every use of a buffer (loads, stores, regions, tile ops,
// allocations) by another buffer.
using BufferMap = std::unordered_map<const ir::BufferNode*, ir::Buffer>;
ir::Stmt ReplaceBuffers(const ir::Stmt& s, const BufferMap& map);

// Moved to src/ir (codegen and the runtime ask them too); the passes keep
// their names.
using ir::ForEachStmt;
using ir::UsesBuffer;
using ir::UsesVar;
using ir::arith::KnownDivisor;
using ir::arith::ProvablyNonNegative;

// Row-major linear index of `indices` in a tensor of `shape`.
ir::Expr FlatIndex(const std::vector<ir::Expr>& shape,
                   const std::vector<ir::Expr>& indices);

// Integer constants of a shape (nullopt when one is symbolic).
std::optional<std::vector<int64_t>> ConstShape(const std::vector<ir::Expr>& s);

// The positions of a region's non-unit extents (the dims a tile op's
// squeezed index runs over). When every extent is 1, the last dim.
std::vector<int> NonUnitDims(const ir::Region& r);

// Full indices into r's buffer for a squeezed tile index: start + index on
// the non-unit dims, start elsewhere.
std::vector<ir::Expr> RegionIndices(const ir::Region& r,
                                    const std::vector<ir::Expr>& squeezed);

// The squeezed index of full indices into r's buffer: the entries of r's
// non-unit dims (a [1, N] tile's element (0, j) is j).
std::vector<ir::Expr> SqueezedIndex(const ir::Region& r,
                                    const std::vector<ir::Expr>& full);

// Constant squeezed extents of a region, or nullopt.
std::optional<std::vector<int64_t>> ConstSqueezedExtents(const ir::Region& r);

// Whether every load in `exprs` reads a global tensor that `body` never
// writes (no store, copy, fill or atomic into it, no intrinsic naming it):
// a value such as cu_seqlens[b] that every thread reads alike at every
// point of the kernel, so that a copy's origin may use it on the one thread
// that issues a TMA copy, or ahead of the loop iteration that needs it.
// True when there are no loads. The lets of `body` count as their values:
// a thread or iteration that uses the expression out of the let's scope
// inlines them (ir::InlineLets).
bool ReadsOnlyUnwrittenGlobals(const std::vector<ir::Expr>& exprs,
                               const ir::Stmt& body);

// A serial or unrolled loop.
ir::Stmt MakeFor(const ir::Var& var, ir::Expr min, ir::Expr extent,
                 ir::ForKind kind, ir::Stmt body);
ir::Stmt MakeIf(ir::Expr cond, ir::Stmt then_case, ir::Stmt else_case = {});

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_IR_UTIL_H_
