// What the scheduler passes share besides the IR: the target, the pass
// config, the fragment layouts, the shared memory plan, the gemm plans and
// the facts the runtime must check at launch. Passes read and update it; each
// is still one IR -> IR step on state.program.
//
//   passes::LoweringState state{.program = program, .target = target,
//                               .config = config};
//   RETURN_IF_ERROR(passes::RunPasses(state));
//   codegen::EmitCuda(state);
#ifndef TESSEL_SRC_PASSES_LOWERING_STATE_H_
#define TESSEL_SRC_PASSES_LOWERING_STATE_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "src/ir/op.h"
#include "src/ir/program.h"
#include "src/passes/fragment_layout.h"
#include "tessel/target.h"

namespace tessel::passes {

// A launch-time requirement on a parameter: its last dimension must be a
// multiple of `multiple` and its pointer aligned to `multiple` elements
// (vectorized accesses rely on both).
struct AlignmentRequirement {
  int param = 0;
  int multiple = 1;
  std::string reason;  // "16-byte cp.async copies"
};

// How one gemm runs, decided once by plan_gemms (plan_gemms.h) right
// before the lowering, which reads it.
enum class GemmInstruction { kFma, kMmaSync, kWgmma };
enum class OperandPath {
  kElements,    // FMA loops read the tile element by element
  kLdmatrix,    // ldmatrix from shared memory into mma fragments
  kRegisters,   // a fragment already laid out as mma A fragments
  kDescriptor,  // the tensor cores read shared memory (wgmma descriptor)
};
struct GemmOperandPlan {
  OperandPath path = OperandPath::kElements;
  bool k_major = false;  // kDescriptor: K contiguous in the tile
  int atom_bytes = 0;    // kDescriptor: bytes between 128-byte column atoms
};
struct GemmPlan {
  GemmInstruction instruction = GemmInstruction::kFma;
  // The warp grid and each warp's accumulator tile (not for kFma).
  int warps_m = 0, warps_n = 0;
  int64_t warp_m = 0, warp_n = 0;
  int m_tiles = 0, n_tiles = 0;  // m16 / n8 mma tiles per warp
  // The m16 tiles are spread as wgmma's (FragmentLayout::Wgmma).
  bool warpgroup_rows = false;
  int k_steps = 0;  // k steps: of 16 elements (k16), or 32 for fp8 wgmma
  int k_step = 16;  // K of one instruction
  // wgmma: the N of each instruction (the accumulator width in pieces).
  int wgmma_n = 0;
  GemmOperandPlan a, b;
  // A small-M tile (small_m_gemm.h): the accumulator's M, padded to
  // warps_m x warp_m rows; 0 otherwise.
  int64_t small_m = 0;
  // kFma of an fp8 gemm: why it does not take wgmma (wgmma.h).
  std::string fma_reason;
  // "wgmma, warps 4x1, warp tile 16x64 (1x8 tiles), 4 k16 steps, A
  // descriptor (K-major), B descriptor (MN-major)"; wider wgmma tiles add
  // their instructions: "wgmma 2 x m64n128k16, warps 8x1, ..." and atoms:
  // "B descriptor (MN-major, atoms 8192 B apart)"; fp8 k32 steps:
  // "wgmma 2 x m64n256k32, ..., 4 k32 steps, ..."
  std::string ToString() const;
};
struct PlannedGemm {
  ir::Stmt gemm;  // the GemmNode (kept alive: its address is the key)
  GemmPlan plan;
};

struct SharedPlan {
  // Byte offset in the dynamic shared memory of every shared / barrier
  // buffer (by node; the lowering maps its flattened buffers too).
  std::unordered_map<const ir::BufferNode*, int64_t> offset;
  std::unordered_map<const ir::BufferNode*, int64_t> bytes;
  int64_t scratch_offset = 0;  // scratch for reductions across threads
  int64_t scratch_bytes = 0;
  // The scratch buffer of each reduce / cumsum that needs one (all at
  // scratch_offset), in program order; the node kept alive as for gemms.
  std::vector<std::pair<ir::Stmt, ir::Buffer>> scratch;
  ir::Buffer ScratchOf(const ir::StmtNode* op) const;
  int64_t total_bytes = 0;
  // Byte ranges of two buffers overlap (reuse): accesses to them conflict.
  bool MayAlias(const ir::BufferNode* a, const ir::BufferNode* b) const;
};

// A TMA descriptor the kernel takes by value after its sizes (`const
// __grid_constant__ tl::TmaDescriptor name`): launch() encodes it for the
// tensor passed as params[param] (jit/tensor_map.h), box and swizzle as
// here. Boxes reaching past the tensor's edges load zeros.
struct TensorMapParam {
  int param = 0;
  std::string name;          // "A_tma"
  std::vector<int64_t> box;  // elements per dimension, outermost first
  int swizzle_bytes = 0;     // 0 (none), 32, 64 or 128
  bool operator==(const TensorMapParam&) const = default;
};

// A TMA-store epilogue (epilogue_store.h) that warp_specialize chose: the
// consumers' fragment -> global copy and its shared staging tile [groups,
// buffers, rows, 128 bytes of columns], allocated around the copy.
struct EpilogueStore {
  ir::Stmt copy;  // the CopyNode (kept alive: its address is the key)
  ir::Buffer stage;
  int buffers = 2;  // staging buffers per warpgroup
};

struct LoweringState {
  ir::Program program;
  Target target;
  PassConfig config;
  // Tensor parameters taken as strided views (a launch-time specialization,
  // src/runtime/strided_views.h): their element strides, one per dimension,
  // symbolic sizes among program.dims or the constant 1 for a unit innermost
  // stride. Every other parameter is row-major, as the user's shapes say.
  std::unordered_map<const ir::BufferNode*, std::vector<ir::Expr>> strides;
  // Whether `b`'s innermost dimension is contiguous (row-major, or strided
  // with a unit innermost stride): vector and TMA accesses need it.
  bool InnerContiguous(const ir::BufferNode* b) const {
    auto it = strides.find(b);
    return it == strides.end() || ir::IsConstInt(it->second.back(), 1);
  }
  // Fragment layouts, by fragment buffer node.
  std::unordered_map<const ir::BufferNode*, FragmentLayout> layouts;
  // Accumulators whose gemms fit wgmma but stay on mma.sync: a register A
  // operand laid out by another gemm could not be read in wgmma's rows
  // (layout inference decides; WgmmaAccumulator reads it).
  std::unordered_set<const ir::BufferNode*> wgmma_declined;
  SharedPlan smem;
  // Every gemm's plan, in program order (plan_gemms).
  std::vector<PlannedGemm> gemm_plans;
  const GemmPlan* GemmPlanOf(const ir::GemmNode* gemm) const;
  std::vector<AlignmentRequirement> alignment;
  // In parameter order; the lowering of TMA copies adds them.
  std::vector<TensorMapParam> tensor_maps;
  int threads = 0;  // the kernel's threads: the consumers when specialized
  // warp_specialize: the producer warpgroup launched after them.
  int producer_threads = 0;
  // warp_specialize on sm_90a: why a kernel with a Pipelined loop kept the
  // cp.async pipeline (CompiledKernel::schedule() says it); empty when it
  // was specialized or has no such loop.
  std::string specialize_declined;
  // warp_specialize with PassConfig::pingpong_consumers: copies of the
  // kernel's threads that run the consumer code, each on its own tiles.
  int consumer_groups = 1;
  // A persistent grid (warp_specialize): launch() runs at most one block
  // per SM; each block loops over output tiles, binding these block
  // indices per tile (to [0, extent), as the grid's did).
  bool persistent = false;
  std::vector<std::pair<ir::Var, int64_t>> tile_block_vars;
  // The full / empty barriers warp_specialize made: arrivals on them order
  // no generic-proxy writes for the TMA (fence_proxy_async skips them).
  std::unordered_set<const ir::BufferNode*> tma_barriers;
  // warp_specialize with PassConfig::cluster_size 2: blocks run in clusters
  // of two on tiles that differ in cluster_var alone. TMA copies whose
  // source does not use it are multicast, each block loading half
  // (HalfRowsPlan); arrivals on cluster_empty count both blocks' consumer
  // warps (mbarrier_arrive_pair).
  int cluster_size = 1;
  ir::Var cluster_var;
  const ir::BufferNode* cluster_empty = nullptr;
  // The variables of consumer loops warp_specialize scheduled under order /
  // stage lists: the lowering keeps their wgmma in flight across the body's
  // statements until one needs a result (lower/wgmma_overlap.cc).
  std::unordered_set<const ir::VarNode*> wgmma_overlap_loops;
  // warp_specialize with PassConfig::disable_tma_store_epilogue: the epilogue
  // copies that the lowering stores through the TMA.
  std::vector<EpilogueStore> epilogue_stores;
  const EpilogueStore* EpilogueStoreOf(const ir::StmtNode* copy) const {
    for (const EpilogueStore& e : epilogue_stores)
      if (e.copy.get() == copy) return &e;
    return nullptr;
  }
  // Lowering sets these for the codegen.
  ir::Var thread_var;
};

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_LOWERING_STATE_H_
