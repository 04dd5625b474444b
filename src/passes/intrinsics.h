// The lowered instruction vocabulary: intrinsic ir::Calls that the tile-op
// lowering emits (inside EvaluateNodes when run for their effect) and that the
// CUDA codegen prints one for one. Names and argument conventions live here,
// once, for both sides.
//
//   ir::Stmt s = passes::Intrin("cp_async_commit", {});
//   ir::Stmt let = passes::Let(tx, passes::ThreadIdx());
//   ir::Expr r = passes::Ref(acc_local, {mi, ni});      // acc[mi][ni]
//
// Argument conventions (codegen/cuda_codegen.cc prints them):
//   let(var, value)                      const T var = value;
//   cp_async(bytes, smem_addr, src, pred) tl::cp_async<bytes>(...), src is the
//                                        Load of the first global element
//   cp_async_commit(), cp_async_wait(n)  commit / wait_group n
//   ldmatrix(count, trans, dst_ref, addr) tl::ldmatrix_x{count}[_trans]
//   mma(kind, d_ref, a_ref, b_ref)       tl::mma_m16n8k16_<kind>
//   vec_copy(bytes, dst_load, src_load)  one 4/8/16-byte move
//   store_pair(dst_load, lo, hi)         packed 2 x 16-bit (or float2) store
//   atomic_add(dst_load, value)          tl::atomic_add(&dst, value)
//   atomic_add_vec(n, dst_load, v...)    tl::atomic_add_f32x{2,4} / f16x2
//   atomic_max / atomic_min(dst_load, v) integer or float atomics
//   mbarrier_init(bar_load, count), mbarrier_arrive(bar_load),
//   mbarrier_wait_parity(bar_load, parity), fence_barrier_init()
//   warp_reduce(kind, width, value)      expression: tl::warp_reduce_<kind><w>
//   thread_idx()                         expression: threadIdx.x
//   shared_addr(load)                    expression: u32 address of a shared
//                                        element (buffer base + offset)
//   ref(load with fewer indices)         expression: a sub-array reference
//   address_of(load)                     expression: &buffer[index]
#ifndef TESSEL_SRC_PASSES_INTRINSICS_H_
#define TESSEL_SRC_PASSES_INTRINSICS_H_

#include <string>
#include <vector>

#include "src/ir/expr.h"
#include "src/ir/op.h"
#include "src/ir/stmt.h"

namespace tessel::passes {

// The statement form of an intrinsic call (its dtype is i32, unused).
ir::Stmt Intrin(std::string name, std::vector<ir::Expr> args);
// const <dtype> var = value; visible to the end of the enclosing block.
ir::Stmt Let(const ir::Var& var, ir::Expr value);
ir::Expr ThreadIdx();
// A reference to buffer[indices...] (fewer indices than dims: a sub-array).
ir::Expr Ref(const ir::Buffer& buffer, std::vector<ir::Expr> indices);
ir::Expr SharedAddr(const ir::Buffer& flat_shared, ir::Expr offset);
ir::Expr AddressOf(const ir::Buffer& buffer, ir::Expr flat_index);

// The call inside `s` when s is Evaluate(Call(name, ...)) with that name.
const ir::CallNode* AsIntrin(const ir::Stmt& s, std::string_view name);
const ir::CallNode* AsIntrin(const ir::Stmt& s);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_INTRINSICS_H_
