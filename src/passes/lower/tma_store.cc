// T.copy of a wgmma accumulator to global memory through a staging tile and
// the TMA (epilogue_store.h): per warpgroup and 128-byte column chunk, the
// threads store their converted pairs to the chunk's swizzled buffer, meet
// at their warpgroup's named barrier (the async-proxy fence before it comes
// from fence_proxy_async: the TMA store reads shared memory), and one
// thread stores the box.
#include "src/passes/epilogue_store.h"
#include "src/passes/intrinsics.h"
#include "src/passes/ir_util.h"
#include "src/passes/lower/lowerer.h"

namespace tessel::passes::lower {
namespace {

// Named barriers 2 + g, one per warpgroup g (0 is __syncthreads', 1 the
// consumers').
constexpr int kFirstBarrier = 2;
constexpr int kGroupThreads = 128;

}  // namespace

Stmt Lowerer::LowerEpilogueStore(const ir::CopyNode& c,
                                 const EpilogueStore& e) {
  std::string why;
  std::optional<EpilogueStorePlan> plan = PlanEpilogueStore(c, st_, &why);
  if (!plan || st_.consumer_groups != 1) {
    Fail(&c, "a TMA-store epilogue whose " + why + " (a tessel bug)");
    return Self(&c);
  }
  const ir::Region dst = MutateRegion(c.dst);
  const FragmentLayout& l = Layout(c.src.buffer);
  const ir::Buffer local = Local(c.src.buffer);
  const int rows = static_cast<int>(plan->group_rows);
  const int cols = static_cast<int>(plan->chunk_cols);
  TmaCopyPlan box;
  box.param = plan->param;
  box.box = {rows, cols};
  box.swizzle_bytes = 128;
  const int map = TensorMapOf(box);

  // Warpgroup g's rows are g * rows + the rows thread tx % 128 holds in
  // group 0 (warpgroups stacked along M, one warp column).
  const Expr group = Expr(tx_) / kGroupThreads;
  const Expr in_group = Expr(tx_) % kGroupThreads;
  const Expr elected = in_group == 0;
  const Expr barrier = group + kFirstBarrier;
  const int n8 = cols / 8;  // the n8 tiles of one chunk
  std::vector<Stmt> out;
  for (int chunk = 0; chunk < plan->chunks; ++chunk) {
    const Expr buf(chunk % e.buffers);
    auto wait_read = [&] {
      return MakeIf(elected,
                    Intrin(Intrinsic::kTmaStoreWait, {Expr(1), Expr(0)}));
    };
    auto sync = [&] {
      return Intrin(Intrinsic::kNamedBarrierSync,
                    {barrier, Expr(kGroupThreads)});
    };
    // One buffer: its last store must have read it before anyone writes.
    if (e.buffers == 1) {
      out.push_back(wait_read());
      out.push_back(sync());
    }
    ir::Var mi("mi"), nj("nj"), h("h");
    ranges_[mi.get()] = {0, l.mi() - 1};
    ranges_[nj.get()] = {0, n8 - 1};
    ranges_[h.get()] = {0, 1};
    const Expr ni = Expr(nj) + chunk * n8;
    std::vector<Expr> lo{mi, ni, Expr(h) * 2}, hi{mi, ni, Expr(h) * 2 + 1};
    // The columns of n8 tile ni run from ni * 8: those of tile nj are the
    // pair's column in the chunk.
    std::vector<Expr> at = l.Logical(in_group, {mi, nj, Expr(h) * 2});
    Expr off = SharedOffset(e.stage, {group, buf, at[0], at[1]});
    Stmt pair = Intrin(
        Intrinsic::kStorePair,
        {ir::Load(e.stage, {off}), ir::Load(local, lo), ir::Load(local, hi)});
    Stmt body = MakeFor(h, 0, 2, ir::ForKind::kUnrolled, pair);
    body = MakeFor(nj, 0, n8, ir::ForKind::kUnrolled, body);
    out.push_back(MakeFor(mi, 0, l.mi(), ir::ForKind::kUnrolled, body));
    // Two buffers: the store two chunks back read this one; waiting for
    // the last one before the barrier frees the next chunk's buffer.
    if (e.buffers == 2) out.push_back(wait_read());
    out.push_back(sync());
    const Expr row0 = dst.start[0] + group * rows;
    const Expr col0 = dst.start[1] + chunk * cols;
    Stmt issue = ir::Seq(
        {Intrin(Intrinsic::kTmaStore,
                {Expr(map),
                 SharedAddr(e.stage, SharedOffset(e.stage, {group, buf, Expr(0),
                                                            Expr(0)})),
                 col0, row0}),
         Intrin(Intrinsic::kTmaStoreCommit, {})});
    // A box wholly past the tensor's end stores nothing: skip it.
    out.push_back(
        MakeIf(And(elected, InBounds(dst.buffer, {row0, col0})), issue));
  }
  tma_stores_ = true;
  return ir::Seq(out);
}

}  // namespace tessel::passes::lower
