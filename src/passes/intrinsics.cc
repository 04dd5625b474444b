#include "src/passes/intrinsics.h"

#include <cassert>
#include <unordered_map>

namespace tessel::passes {
namespace {

using I = Intrinsic;

constexpr uint32_t kW = kWritesMemory;

// In enum order (InfoOf indexes it).
const std::vector<IntrinsicInfo>& Table() {
  static const auto* table = new std::vector<IntrinsicInfo>{
      {I::kLet, "let", 2, 2, {}, 0},
      {I::kCpAsync, "cp_async", 4, 4, {1}, kW | kStartsAsyncCopy},
      {I::kCpAsyncCommit, "cp_async_commit", 0, 0, {}, 0},
      {I::kCpAsyncWait, "cp_async_wait", 1, 1, {}, kWaitsAsyncCopies},
      {I::kLdmatrix, "ldmatrix", 4, 4, {2}, kW},
      {I::kMma, "mma", 4, 4, {1}, kW},
      {I::kWgmma, "wgmma", 9, 8, {4}, kW | kAsyncProxyReadsShared},
      {I::kWgmmaFence, "wgmma_fence", 0, 0, {}, kFence},
      {I::kWgmmaCommit, "wgmma_commit", 0, 0, {}, 0},
      {I::kWgmmaWait, "wgmma_wait", 1, 1, {}, 0},
      {I::kFenceOperand, "fence_operand", 2, 2, {0}, kW | kFence},
      {I::kFenceProxyAsync, "fence_proxy_async", 0, 0, {}, kFence},
      {I::kVecCopy, "vec_copy", 3, 3, {1}, kW},
      {I::kVecZero, "vec_zero", 2, 2, {1}, kW},
      // (n, registers, global): n elements in 16-byte words, converted.
      {I::kLoadVec, "load_vec", 3, 3, {1}, kW},
      {I::kStoreVec, "store_vec", 3, 3, {1}, kW},
      {I::kStorePair, "store_pair", 3, 3, {0}, kW},
      {I::kAtomicAdd, "atomic_add", 2, 2, {0}, kW},
      {I::kAtomicMax, "atomic_max", 2, 2, {0}, kW},
      {I::kAtomicMin, "atomic_min", 2, 2, {0}, kW},
      {I::kAtomicAddVec, "atomic_add_vec", -1, 3, {1}, kW},
      {I::kAtomicTicket, "atomic_ticket", 3, 3, {0, 1}, kW | kFence},
      {I::kBulkReduceAdd,
       "bulk_reduce_add",
       3,
       3,
       {1},
       kW | kAsyncProxyReadsShared},
      {I::kBulkCommit, "bulk_commit", 0, 0, {}, 0},
      {I::kBulkWaitRead, "bulk_wait_read", 1, 1, {}, kFence},
      {I::kMbarrierInit, "mbarrier_init", 2, 2, {0}, kW | kMbarrier},
      {I::kFenceBarrierInit, "fence_barrier_init", 0, 0, {}, kFence},
      {I::kMbarrierArrive, "mbarrier_arrive", 1, 1, {0}, kW | kMbarrier},
      {I::kMbarrierWaitParity, "mbarrier_wait_parity", 2, 2, {}, kMbarrier},
      {I::kMbarrierExpectTx, "mbarrier_expect_tx", 2, 2, {0}, kW | kMbarrier},
      {I::kTmaLoad, "tma_load", 8, 4, {}, kStartsAsyncCopy},
      {I::kTmaLoadMulticast, "tma_load_multicast", 9, 5, {}, kStartsAsyncCopy},
      {I::kMbarrierArrivePair,
       "mbarrier_arrive_pair",
       1,
       1,
       {0},
       kW | kMbarrier},
      {I::kClusterSync, "cluster_sync", 0, 0, {}, kFence},
      {I::kTmaPrefetch, "tma_prefetch", 1, 1, {}, 0},
      {I::kTmaStore, "tma_store", 7, 3, {}, kAsyncProxyReadsShared},
      {I::kTmaStoreCommit, "tma_store_commit", 0, 0, {}, 0},
      {I::kTmaStoreWait, "tma_store_wait", 2, 2, {}, kFence},
      {I::kSetMaxNReg, "setmaxnreg", 2, 2, {}, 0},
      {I::kNamedBarrierSync, "named_barrier_sync", 3, 2, {}, kFence},
      {I::kNamedBarrierArrive, "named_barrier_arrive", 2, 2, {}, kFence},
      {I::kPrint, "print", 3, 2, {}, kPrints},
      {I::kThreadIdx, "thread_idx", 0, 0, {}, kExpression},
      {I::kGridDimX, "grid_dim_x", 0, 0, {}, kExpression},
      {I::kClusterRank, "cluster_rank", 0, 0, {}, kExpression},
      {I::kSharedAddr, "shared_addr", 1, 1, {}, kExpression},
      {I::kRef, "ref", 1, 1, {}, kExpression},
      {I::kAddressOf, "address_of", 1, 1, {}, kExpression},
      {I::kWarpReduceSum, "warp_reduce_sum", 2, 2, {}, kExpression},
      {I::kWarpReduceMax, "warp_reduce_max", 2, 2, {}, kExpression},
      {I::kWarpReduceMin, "warp_reduce_min", 2, 2, {}, kExpression},
      // (width, reverse, v): the sum of v over the lanes before this one in
      // its group of width (after it, reversed).
      {I::kWarpScanExclusiveSum,
       "warp_scan_exclusive_sum",
       3,
       3,
       {},
       kExpression},
      // (width, reverse, v): v of the last lane of this lane's group of
      // width (the first, reversed).
      {I::kWarpGroupLast, "warp_group_last", 3, 3, {}, kExpression},
      {I::kWarpUniform, "warp_uniform", 1, 1, {}, kExpression},
      {I::kPackB16x2, "pack_b16x2", 2, 2, {}, kExpression},
      {I::kWgmmaDescSw128, "wgmma_desc_sw128", 3, 2, {}, kExpression},
      {I::kWgmmaDescAdd, "wgmma_desc_add", 2, 2, {}, kExpression},
      {I::kBitcast, "bitcast", 1, 1, {}, kExpression},
  };
  return *table;
}

const std::unordered_map<std::string_view, Intrinsic>& ByName() {
  static const auto* by_name = [] {
    auto* m = new std::unordered_map<std::string_view, Intrinsic>;
    for (const IntrinsicInfo& i : Table()) m->emplace(i.name, i.id);
    return m;
  }();
  return *by_name;
}

[[maybe_unused]] bool ArityFits(Intrinsic id, size_t n) {
  const IntrinsicInfo& info = InfoOf(id);
  return static_cast<int>(n) >= info.min_arity &&
         (info.arity < 0 || static_cast<int>(n) <= info.arity);
}

}  // namespace

const IntrinsicInfo& InfoOf(Intrinsic id) {
  const IntrinsicInfo& info = Table()[static_cast<size_t>(id)];
  assert(info.id == id && "the table is in enum order");
  return info;
}

std::optional<Intrinsic> IntrinsicOf(const ir::CallNode& call) {
  auto it = ByName().find(call.name);
  if (it == ByName().end()) return std::nullopt;
  return it->second;
}

bool HasEffect(const ir::Stmt& s, uint32_t effects) {
  const ir::CallNode* c = AsIntrin(s);
  if (c == nullptr) return false;
  std::optional<Intrinsic> id = IntrinsicOf(*c);
  return id && (InfoOf(*id).effects & effects) != 0;
}

ir::Stmt Intrin(Intrinsic id, std::vector<ir::Expr> args) {
  assert(ArityFits(id, args.size()));
  return ir::MakeStmt<ir::EvaluateNode>(
      ir::Call(DataType::kI32, std::string(InfoOf(id).name), std::move(args)),
      ir::SourceLoc());
}

ir::Expr IntrinExpr(DataType t, Intrinsic id, std::vector<ir::Expr> args) {
  assert(ArityFits(id, args.size()));
  return ir::Call(t, std::string(InfoOf(id).name), std::move(args));
}

ir::Expr Tag(std::string name) {
  return ir::Call(DataType::kI32, std::move(name), {});
}

ir::Stmt Let(const ir::Var& var, ir::Expr value) {
  return Intrin(I::kLet, {var, std::move(value)});
}

ir::Expr ThreadIdx() { return IntrinExpr(DataType::kI32, I::kThreadIdx, {}); }
ir::Expr GridDimX() { return IntrinExpr(DataType::kI32, I::kGridDimX, {}); }

ir::Expr Ref(const ir::Buffer& buffer, std::vector<ir::Expr> indices) {
  return IntrinExpr(buffer->dtype, I::kRef,
                    {ir::Load(buffer, std::move(indices))});
}

ir::Expr SharedAddr(const ir::Buffer& flat_shared, ir::Expr offset) {
  return IntrinExpr(DataType::kU32, I::kSharedAddr,
                    {ir::Load(flat_shared, {std::move(offset)})});
}

ir::Expr AddressOf(ir::Expr load) {
  return IntrinExpr(DataType::kI64, I::kAddressOf, {std::move(load)});
}

const ir::CallNode* AsIntrin(const ir::Stmt& s) {
  const auto* e = s.As<ir::EvaluateNode>();
  if (e == nullptr) return nullptr;
  return e->value.As<ir::CallNode>();
}

const ir::CallNode* AsIntrin(const ir::Stmt& s, Intrinsic id) {
  const ir::CallNode* c = AsIntrin(s);
  return c != nullptr && c->name == InfoOf(id).name ? c : nullptr;
}

}  // namespace tessel::passes
