// The lowered instruction vocabulary: intrinsic ir::Calls that the passes
// emit (statements as Evaluate(Call), expressions as Calls) and that the CUDA
// codegen prints one for one. One enum and one table give each its IR name,
// arity, the arguments it writes through and its effects, for the passes,
// the barrier planner and the codegen alike.
//
//   ir::Stmt s = passes::Intrin(passes::Intrinsic::kCpAsyncCommit, {});
//   if (passes::HasEffect(s, passes::kWaitsAsyncCopies)) { ... }
//   switch (*passes::IntrinsicOf(call)) { case Intrinsic::kMma: ... }
//
// Argument conventions (codegen/cuda_codegen.cc prints them; "tag" is a
// Call with no arguments whose name is the operand, e.g. "f16_f32"):
//   let(var, value)                      const T var = value;
//   cp_async(bytes, smem_addr, src, pred) tl::cp_async<bytes>(...), src is the
//                                        Load of the first global element
//   cp_async_commit(), cp_async_wait(n)  commit / wait_group n
//   ldmatrix(count, trans, dst_ref, addr) tl::ldmatrix_x{count}[_trans]
//   mma(kind tag, d_ref, a_ref, b_ref)   tl::mma_m16n8k16_<kind>
//   wgmma(type tag, n, a_mn_major, b_mn_major, acc_ref, n8_tile0, a,
//         b_desc[, accumulate])          one wgmma.mma_async on acc_ref's
//                                        [n8_tile0 ..][4] (a_mn_major -1:
//                                        A in registers, a its ref);
//                                        accumulate 0: D = A B (scale-d 0,
//                                        D's old value unread), else D +=
//   wgmma_fence(), wgmma_commit(), wgmma_wait(n)
//   fence_operand(acc_ref, n)            the n accumulator registers change
//   fence_proxy_async()                  generic -> async proxy fence
//   vec_copy(bytes, dst_load, src_load)  one 4/8/16-byte move
//   vec_zero(bytes, dst_load)            one 4/8/16-byte zero store
//   store_pair(dst_load, lo, hi)         packed 2 x 16-bit (or float2) store
//   atomic_add / max / min(dst_load, v)  scalar atomics
//   atomic_add_vec(n, dst_load, v...)    tl::atomic_add_f32x{2,4} / f16x2
//   atomic_ticket(slot_load, counter_load, v)  slot (shared i32) = old
//                                        counter (global i32), counter += v,
//                                        an acquire-release at GPU scope
//   bulk_reduce_add(bytes, dst_load, src_load)  global f32 += shared f32,
//                                        bytes (16 | bytes) by the TMA unit
//   bulk_commit(), bulk_wait_read(n)     commit the thread's bulk ops as a
//                                        group / wait until at most n groups
//                                        still read shared memory
//   mbarrier_init(bar_load, count), mbarrier_arrive(bar_load),
//   mbarrier_wait_parity(bar_load, parity), fence_barrier_init()
//   mbarrier_expect_tx(bar_load, bytes)  adds TMA bytes the phase waits for
//   tma_load(map, smem_addr, bar_load, c0, ...)  one box of tensor map
//                                        LoweringState::tensor_maps[map] at
//                                        coordinates c0 (innermost), ...
//   tma_load_multicast(map, smem_addr, bar_load, mask, c0, ...)  tma_load
//                                        into the same address and barrier
//                                        of each block of the cluster in
//                                        mask (bit i: rank i)
//   mbarrier_arrive_pair(bar_load)       in a cluster of two: lane 0 of the
//                                        warp arrives on this block's
//                                        barrier, lane 1 on the other's
//   cluster_sync()                       barrier.cluster arrive + wait
//   tma_prefetch(map)                    fetch tensor_maps[map]'s descriptor
//                                        into the TMA unit ahead of its loads
//   tma_store(map, smem_addr, c0, ...)   one box of tensor_maps[map] from a
//                                        shared tile (bulk async-group)
//   tma_store_commit()                   cp.async.bulk.commit_group
//   tma_store_wait(read, n)              cp.async.bulk.wait_group[.read] n:
//                                        read 1, until the groups but n
//                                        have read shared memory
//   setmaxnreg(inc, count)               tl::setmaxnreg_{dec,inc}<count>
//   named_barrier_sync(id, threads[, 1]) bar.sync id, threads; with the 1,
//                                        it orders issue only (no shared
//                                        memory handed over: no proxy fence)
//   named_barrier_arrive(id, threads)    bar.arrive id, threads
//   print(message tag, value)            printf of one scalar
// Expressions:
//   thread_idx()                         threadIdx.x
//   grid_dim_x()                         gridDim.x (a persistent grid's size)
//   cluster_rank()                       the block's rank in its cluster
//   shared_addr(load)                    u32 address of a shared element
//   ref(load with fewer indices)         a sub-array reference
//   address_of(load)                     &buffer[index]
//   warp_reduce_{sum,max,min}(width, v)  tl::warp_reduce_<kind><width>(v)
//   warp_uniform(v)                      v read from lane 0: the compiler
//                                        then knows it is warp-uniform
//                                        (it must be)
//   pack_b16x2(lo, hi)                   two 16-bit values in a u32
//   wgmma_desc_sw128(smem_addr, [lbo,] sbo)  a SWIZZLE_128B wgmma
//                                        descriptor (lbo: atom stride)
//   wgmma_desc_add(desc, units)          that descriptor `units` 16-byte
//                                        units further on (one 32-bit add)
#ifndef TESSEL_SRC_PASSES_INTRINSICS_H_
#define TESSEL_SRC_PASSES_INTRINSICS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/ir/expr.h"
#include "src/ir/op.h"
#include "src/ir/stmt.h"

namespace tessel::passes {

enum class Intrinsic {
  // Statements.
  kLet,
  kCpAsync,
  kCpAsyncCommit,
  kCpAsyncWait,
  kLdmatrix,
  kMma,
  kWgmma,
  kWgmmaFence,
  kWgmmaCommit,
  kWgmmaWait,
  kFenceOperand,
  kFenceProxyAsync,
  kVecCopy,
  kVecZero,
  kLoadVec,
  kStoreVec,
  kStorePair,
  kAtomicAdd,
  kAtomicMax,
  kAtomicMin,
  kAtomicAddVec,
  kAtomicTicket,
  kBulkReduceAdd,
  kBulkCommit,
  kBulkWaitRead,
  kMbarrierInit,
  kFenceBarrierInit,
  kMbarrierArrive,
  kMbarrierWaitParity,
  kMbarrierExpectTx,
  kTmaLoad,
  kTmaLoadMulticast,
  kMbarrierArrivePair,
  kClusterSync,
  kTmaPrefetch,
  kTmaStore,
  kTmaStoreCommit,
  kTmaStoreWait,
  kSetMaxNReg,
  kNamedBarrierSync,
  kNamedBarrierArrive,
  kPrint,
  // Expressions.
  kThreadIdx,
  kGridDimX,
  kClusterRank,
  kSharedAddr,
  kRef,
  kAddressOf,
  kWarpReduceSum,
  kWarpReduceMax,
  kWarpReduceMin,
  kWarpScanExclusiveSum,
  kWarpGroupLast,
  kWarpUniform,
  kPackB16x2,
  kWgmmaDescSw128,
  kWgmmaDescAdd,
  kBitcast,  // T::bitcast (src/ir/bitcast.h)
};

// What an intrinsic does besides computing its value (bits of
// IntrinsicInfo::effects).
enum IntrinsicEffect : uint32_t {
  kExpression = 1u << 0,             // a value, no effect
  kWritesMemory = 1u << 1,           // through its written arguments
  kStartsAsyncCopy = 1u << 2,        // cp.async into shared memory
  kWaitsAsyncCopies = 1u << 3,       // completes committed cp.async groups
  kAsyncProxyReadsShared = 1u << 4,  // the tensor cores read shared memory
  kFence = 1u << 5,                  // orders memory or register accesses
  kMbarrier = 1u << 6,               // an mbarrier operation
  kPrints = 1u << 7,
};

struct IntrinsicInfo {
  Intrinsic id;
  std::string_view name;  // as the ir::Call spells it
  int arity;              // the most arguments; -1: no limit
  int min_arity;          // the fewest (= arity for most intrinsics)
  // Argument positions whose Load (or ref) names memory the call writes.
  std::vector<int> written;
  uint32_t effects;
};

// The table entry of `id`; every enumerator has one.
const IntrinsicInfo& InfoOf(Intrinsic id);
// The intrinsic a call is (nullopt: not an intrinsic, e.g. a tag).
std::optional<Intrinsic> IntrinsicOf(const ir::CallNode& call);
// Whether the statement is an intrinsic call with (one of) these effects.
bool HasEffect(const ir::Stmt& s, uint32_t effects);

// The statement form of an intrinsic call (its dtype is i32, unused); the
// arity is checked against the table.
ir::Stmt Intrin(Intrinsic id, std::vector<ir::Expr> args);
// The expression form, of dtype t.
ir::Expr IntrinExpr(DataType t, Intrinsic id, std::vector<ir::Expr> args);
// An operand that is a name (a kind, a dtype, a message).
ir::Expr Tag(std::string name);
// const <dtype> var = value; visible to the end of the enclosing block.
ir::Stmt Let(const ir::Var& var, ir::Expr value);
ir::Expr ThreadIdx();
ir::Expr GridDimX();
// A reference to buffer[indices...] (fewer indices than dims: a sub-array).
ir::Expr Ref(const ir::Buffer& buffer, std::vector<ir::Expr> indices);
ir::Expr SharedAddr(const ir::Buffer& flat_shared, ir::Expr offset);
// &element, of an element Load.
ir::Expr AddressOf(ir::Expr load);

// The call inside `s` when s is Evaluate(Call(...)) of that intrinsic.
const ir::CallNode* AsIntrin(const ir::Stmt& s, Intrinsic id);
const ir::CallNode* AsIntrin(const ir::Stmt& s);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_INTRINSICS_H_
