// The tile-op lowering's walk: one ir::IRMutator whose Visit methods are the
// dispatch per node kind (lower_tile_ops.cc, the driver) and whose
// per-family lowerings live one file each in this folder:
//
//   copy.cc               T.copy, T.fill, cp.async marking, packed stores
//   gemm_mma.cc           T.gemm via ldmatrix + mma.sync
//   gemm_wgmma.cc         T.gemm via wgmma.mma_async (sm_90a)
//   fragment_pipeline.cc  mma.sync fragments double-buffered across k-tiles
//   kept_operands.cc      gemm operands kept in registers between gemms
//   gemm_fma.cc           T.gemm as FMA loops (other dtypes)
//   reduce.cc, cumsum.cc  T.reduce_*, T.cumsum
//   reduce_rows.cc        T.reduce_* along the rows of a kRows tile
//   cumsum_rows.cc        T.cumsum along the rows of a kRows tile
//   copy_rows.cc          16-byte copies of kRows tiles to / from global
//   parallel.cc           T.Parallel loops over each thread's elements
//   element_guards.cc     bounds checks of global element accesses
//   atomic.cc             T.atomic_*
//   tma_copy.cc           T.copy on the TMA (warp-specialized producers)
//   tma_store.cc          TMA-store epilogues (epilogue_store.h)
//   warp_specialized.cc   the producer / consumer split
//   wgmma_pipeline.cc     the consumer loop with a wgmma group in flight
//   wgmma_overlap.cc      wgmma in flight across an order / stage body
//   gemm_turns.cc         consumer warpgroups taking turns at the gemms
//   gemm_turns_rotated.cc ... in a loop rotated by order / stage lists
//   mbarrier.cc, print.cc mbarriers, T.print
//
// The per-thread facts (thread index, variable ranges, bounds, offsets)
// are the ThreadContext's (thread_context.h).
#ifndef TESSEL_SRC_PASSES_LOWER_LOWERER_H_
#define TESSEL_SRC_PASSES_LOWER_LOWERER_H_

#include <array>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "src/ir/visitor.h"
#include "src/passes/lower/thread_context.h"
#include "src/passes/operand_reuse.h"
#include "src/passes/tma_boxes.h"
#include "src/passes/wgmma.h"

namespace tessel::passes::lower {

// The mma.sync lowering of one gemm: its accumulator and its fragment
// registers, two of each (fragment double buffering: the ldmatrix of one
// k16 step are in flight while the mma of the previous step run).
struct MmaGemm {
  ir::Buffer acc, af, bf;
  // Operands kept in registers across gemms (operand_reuse.h): all k16
  // steps in [kk][...]; filled by this gemm (fill) or already there.
  ir::Buffer a_keep, b_keep;
  bool a_fill = false, b_fill = false;
  int KK = 0, MI = 0, NI = 0, wn = 0;
  int k_step = 16;  // K of one instruction (32: fp8 wgmma)
  int64_t wtm = 0, wtn = 0;
  const char* kind = "f16_f32";
  // wgmma.mma_async (wgmma.h): B stays in shared memory; A too when
  // wgmma_a, else A's fragments of all k16 steps are live at once (af is
  // [KK][MI][4]).
  std::optional<WgmmaOperand> wgmma, wgmma_a;
  int wgmma_n = 0;  // N of each wgmma (GemmPlan::wgmma_n)
  // The warpgroups split N (FragmentLayout::WgmmaCols): each reads all of
  // A and its wtn columns of B.
  bool warpgroup_cols = false;
};

// One shared operand's wgmma descriptors across a gemm (gemm_wgmma.cc): the
// first step's built once into `base`, the other steps' that plus a
// constant number of 16-byte units.
struct WgmmaDescriptors {
  const ir::Region* region = nullptr;
  const WgmmaOperand* operand = nullptr;
  ir::Buffer buffer;  // the flat shared buffer the offsets index
  Expr offset;        // the first step's element offset in it
  ir::Var base;       // undefined: every step builds its own
};

// The steady state inject_pipeline (and insert_barriers) make of a
// Pipelined loop whose only consumer is one gemm of the current stage:
//   for k: cp_async_wait(S-2); __syncthreads(); if (k+S-1 < n) prefetch;
//          cp_async_commit(); gemm(As[k % S], Bs[k % S], acc)
struct PipelinedGemm {
  Stmt wait, sync, prefetch, commit;  // sync undefined: thread sync off
  Stmt gemm;
};

// A global -> shared copy, or an if / list of nothing else (copy.cc).
bool IsProducerCopy(const Stmt& s);
bool OnlyProducerCopies(const Stmt& s);

class Lowerer : public ir::IRMutator, public ThreadContext {
 public:
  explicit Lowerer(LoweringState& state) : ThreadContext(state) {}

  // Remembers the innermost statement with a user's line: errors name it;
  // a statement touching a bulk reduction's source waits for its reads.
  Stmt MutateStmt(const Stmt& s) override;
  Stmt MutateTileStmt(const Stmt& s);

  // Structure (lower_tile_ops.cc).
  Stmt Visit(const ir::KernelNode* op) override;
  Stmt Visit(const ir::SeqNode* op) override;
  Stmt Visit(const ir::ForNode* op) override;
  Stmt Visit(const ir::IfThenElseNode* op) override;
  Stmt Visit(const ir::AllocateNode* op) override;
  Stmt Visit(const ir::AnnotateLayoutNode* op) override;
  Stmt Visit(const ir::StoreNode* op) override;
  Expr Visit(const ir::LoadNode* op) override;
  Expr Visit(const ir::BinaryNode* op) override;
  Expr Visit(const ir::SelectNode* op) override;  // element_guards.cc
  // Tile ops: each to its family.
  Stmt Visit(const ir::FillNode* op) override;  // copy.cc
  Stmt Visit(const ir::CopyNode* op) override;  // copy_rows.cc, copy.cc
  Stmt Visit(const ir::GemmNode* op) override { return LowerGemm(*op); }
  Stmt Visit(const ir::ReduceNode* op) override { return LowerReduce(*op); }
  Stmt Visit(const ir::CumsumNode* op) override { return LowerCumsum(*op); }
  Stmt Visit(const ir::AtomicNode* op) override { return LowerAtomic(*op); }
  Stmt Visit(const ir::MbarrierInitNode* op) override;  // mbarrier.cc
  Stmt Visit(const ir::MbarrierArriveNode* op) override;
  Stmt Visit(const ir::MbarrierWaitParityNode* op) override;
  Stmt Visit(const ir::MbarrierExpectTxNode* op) override;
  Stmt Visit(const ir::PrintNode* op) override;           // print.cc
  Stmt Visit(const ir::WarpSpecializeNode* op) override;  // warp_specialized.cc

 private:
  // copy.cc
  void MarkAsync(const Stmt& s);
  Stmt LowerCopy(const ir::CopyNode& c);
  Stmt CopyFragment(const ir::CopyNode& c, const ir::Region& src,
                    const ir::Region& dst);
  bool PairsOk(const ir::Region& g);
  // copy_rows.cc: nullopt when not a kRows <-> global copy.
  std::optional<Stmt> CopyRows(const ir::CopyNode& c);
  // atomic.cc
  Stmt LowerAtomic(const ir::AtomicNode& a);
  Stmt LowerTicket(const ir::AtomicNode& a);
  Stmt BulkReduceRows(const ir::AtomicNode& a, const ir::Region& dst,
                      const ir::Region& src);
  // Whether tile statement s touches a shared tile that bulk reductions
  // read (s not one of them): it waits for their reads first.
  bool WaitsForBulkReads(const Stmt& s);
  // parallel.cc
  Stmt LowerParallel(const ir::ForNode* op);
  // Every fragment load (unless !loads) and store in s.
  void ForEachFragmentAccess(
      const Stmt& s,
      const std::function<void(const ir::Buffer&, const std::vector<Expr>&)>&
          fn,
      bool loads = true);
  Stmt MapFragments(const ir::ForNode* loop, const Stmt& body,
                    const std::vector<const ir::VarNode*>& vars,
                    const FragmentLayout& d, const std::string& over,
                    const std::vector<Expr>& local);
  Stmt GuardSideEffects(const Stmt& s, const Expr& leader);
  // element_guards.cc: a T.Parallel body's global element accesses guarded
  // in the loop's variables (vars[i] in [0, extents[i])).
  Stmt GuardParallelBody(const Stmt& body, const std::vector<ir::Var>& vars,
                         const std::vector<int64_t>& extents);
  // gemm_mma.cc
  const GemmPlan& PlanOf(const ir::GemmNode& g);
  std::optional<MmaGemm> PlanMma(const ir::GemmNode& g);
  Stmt ClearAccumulator(const ir::GemmNode& g, const MmaGemm& m);
  Stmt LoadFragments(const MmaGemm& m, const ir::GemmNode& g, Expr buf, int kk);
  Stmt PackRegisterA(const MmaGemm& m, const ir::GemmNode& g, Expr buf, int kk);
  Stmt LoadA(const MmaGemm& m, const ir::GemmNode& g, Expr buf, int kk);
  Stmt LoadB(const MmaGemm& m, const ir::GemmNode& g, Expr buf, int kk);
  Stmt MmaStep(const MmaGemm& m, Expr buf, int kk);
  static Stmt WithFragments(const MmaGemm& m, Stmt body);
  Stmt LowerGemm(const ir::GemmNode& g);
  // kept_operands.cc
  std::optional<OperandKey> KeyOf(const ir::GemmNode& g, GemmOperand which);
  int FragmentRegisters() const;
  std::vector<ir::Buffer> PlanKeptOperands(const std::vector<Stmt>& stmts);
  // The lowered list `op` with its kept arrays allocated around it.
  Stmt AllocateKeptOperands(const ir::SeqNode* op,
                            const std::vector<Stmt>& lowered,
                            const std::vector<ir::Buffer>& kept);
  // gemm_wgmma.cc
  std::pair<ir::Buffer, Expr> WgmmaStart(const ir::Region& region,
                                         const WgmmaOperand& o, int k0,
                                         Expr mn0);
  WgmmaDescriptors WgmmaBase(const ir::Region& region, const WgmmaOperand& o,
                             Expr mn0, bool shared, std::vector<Stmt>& lets);
  Expr WgmmaDescriptor(const WgmmaDescriptors& d, int k0, Expr mn0);
  Expr WgmmaRowsA(const MmaGemm& m, int mi);
  Expr WgmmaColsB(const MmaGemm& m);
  ir::Var Warpgroup();
  // The Let of tl::warp_uniform(tx / 128) where thread index tx is bound
  // (the block's, a ping-pong group's); none when no gemm used it.
  std::vector<Stmt> WarpgroupLet(const ir::Var& tx);
  std::unordered_map<const ir::VarNode*, ir::Var> warpgroups_;
  Stmt WgmmaStep(const MmaGemm& m, const ir::GemmNode& g,
                 const WgmmaDescriptors& a, const WgmmaDescriptors& b, int kk,
                 int mi, int n0, int n, bool accumulate);
  Stmt WaitWgmma(const std::vector<ir::Buffer>& accumulators, int pending = 0);
  Stmt LowerWgmma(const ir::GemmNode& g, const MmaGemm& m);
  bool JoinsDeferredWgmma(const Stmt& s);
  bool EndsDeferredWgmma(const Stmt& s);
  // wgmma_pipeline.cc
  std::optional<Stmt> LowerWgmmaConsumerLoop(const ir::ForNode* op);
  // gemm_turns.cc: PassConfig::consumer_gemm_turns.
  bool TakesGemmTurns(const ir::ForNode* op);
  Stmt LowerGemmTurns(const ir::ForNode* op);
  // gemm_turns_rotated.cc: the same for a loop rotated by order / stage lists.
  bool TakesRotatedGemmTurns(const ir::SeqNode* op);
  Stmt LowerRotatedGemmTurns(const ir::SeqNode* op);
  Stmt GemmTurnSync();
  Stmt GemmTurnPass();
  // wgmma_overlap.cc: a scheduled consumer loop's body.
  Stmt LowerOverlappedWgmma(const ir::SeqNode* op);
  // tma_copy.cc
  int TensorMapOf(const TmaCopyPlan& plan);
  Stmt LowerTmaCopy(const ir::CopyNode& c);
  // tma_store.cc
  Stmt LowerEpilogueStore(const ir::CopyNode& c, const EpilogueStore& e);
  // fragment_pipeline.cc
  static std::optional<PipelinedGemm> MatchPipelinedGemm(const Stmt& body);
  std::optional<Stmt> LowerPipelinedGemm(const ir::ForNode* op);
  // gemm_fma.cc
  Stmt LowerGemmFma(const ir::GemmNode& g, const ir::Region& a,
                    const ir::Region& b);
  // reduce.cc
  // The shared plan's scratch buffer of a reduce / cumsum.
  ir::Buffer Scratch(const ir::StmtNode* op, DataType t);
  Stmt LowerReduce(const ir::ReduceNode& r);
  std::function<Expr(const std::vector<Expr>&)> Staged(const ir::ReduceNode& r,
                                                       const ir::Buffer& b,
                                                       std::vector<Stmt>& out);
  Stmt ReduceGeneric(const ir::ReduceNode& r);
  // reduce_rows.cc
  Stmt ReduceRows(const ir::ReduceNode& r);
  Stmt ReduceOne(const ir::ReduceNode& r,
                 const std::function<Expr(const std::vector<Expr>&)>& src,
                 const std::vector<Expr>& di,
                 const std::function<Stmt(Expr)>& set, const Expr& old);
  // cumsum.cc
  Stmt LowerCumsum(const ir::CumsumNode& c);
  // cumsum_rows.cc
  Stmt CumsumRows(const ir::CumsumNode& c);

  // Global -> shared copies that a commit follows: they become cp.async.
  std::unordered_set<const ir::CopyNode*> async_;
  // The shared sources of the bulk reductions (atomic.cc), found on first
  // use.
  std::optional<std::unordered_set<const ir::BufferNode*>> bulk_sources_;
  int in_parallel_ = 0;  // inside a T.Parallel body
  // Some copy became TMA stores: the consumers wait for them at the end.
  bool tma_stores_ = false;
  int gemm_count_ = 0;  // names the fragment registers
  int kept_count_ = 0;  // names the kept operand arrays
  // Lowering a gemm that is a statement of a list (its wait may wait), and
  // the accumulators of the list's committed, unwaited wgmma.
  bool defer_wgmma_ = false;
  std::vector<ir::Buffer> deferred_wgmma_;
  // In a scheduled loop's body: gemms with A in registers stay in flight too.
  bool overlap_wgmma_ = false;
  // Ping-pong: the arrive on the mainloop order barrier that follows a
  // consumer loop, issued right after the loop's last wgmma instead (before
  // the wait for it), and the arrives so moved (warp_specialized.cc).
  std::unordered_map<const ir::ForNode*, Stmt> arrive_after_issue_;
  std::unordered_set<const ir::StmtNode*> arrived_early_;
  // Consumer gemm turns (gemm_turns.cc): the consumer warpgroups of the
  // warp-specialized block that may take turns (0: none), and of the loop
  // being lowered that does.
  int turn_groups_ = 0;
  int in_turns_ = 0;
  // Where a gemm of the turn-taking code waits for the warpgroup's turn
  // (before its issue) and passes it on (after its commit; the last
  // warpgroup's final pass is left out, so every wait meets one pass).
  enum TurnMark { kTurnSync = 1, kTurnPass = 2, kTurnPassUnlessLast = 4 };
  // The turns' named barriers 2, 3, 4 (0 is __syncthreads', 1 the
  // consumers'), each a warpgroup's sync and its predecessor's arrive.
  static constexpr int kFirstTurnBarrier = 2;
  static constexpr int kTurnThreads = 256;
  std::unordered_map<const ir::GemmNode*, int> turn_marks_;
  // Per gemm, its A and B kept in registers: (array, filled by this gemm).
  std::unordered_map<const ir::GemmNode*,
                     std::array<std::optional<std::pair<ir::Buffer, bool>>, 2>>
      kept_;
};

}  // namespace tessel::passes::lower

#endif  // TESSEL_SRC_PASSES_LOWER_LOWERER_H_
