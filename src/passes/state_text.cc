#include "src/passes/state_text.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "src/ir/parser.h"
#include "src/ir/printer.h"
#include "src/ir/walk.h"
#include "src/passes/state_text_names.h"
#include "tessel/status_macros.h"

namespace tessel::passes {
namespace {

// The program's statements in pre-order, blocks (Seq) not counted.
std::vector<ir::Stmt> Statements(const ir::Program& p) {
  std::vector<ir::Stmt> out;
  ir::ForEachStmt(p.body, [&](const ir::Stmt& s) {
    if (!s.As<ir::SeqNode>()) out.push_back(s);
  });
  return out;
}

std::string Declaration(const ir::Buffer& b) {
  std::string text = ir::ToString(
      ir::MakeStmt<ir::AllocateNode>(b, ir::Seq({}), ir::SourceLoc()));
  return text.substr(0, text.find('\n'));
}

}  // namespace

std::string StateText(const LoweringState& state) {
  std::vector<ir::Stmt> stmts = Statements(state.program);
  auto index = [&](const ir::Stmt& s) -> std::string {
    for (size_t i = 0; i < stmts.size(); ++i)
      if (stmts[i].get() == s.get()) return absl::StrCat(i);
    return "-";  // not in the program: reads back as an error
  };
  std::vector<std::string> lines;
  auto add = [&](auto&&... parts) {
    lines.push_back(absl::StrCat("#   ", parts...));
  };
  if (state.threads != 0) add("threads ", state.threads);
  if (state.producer_threads != 0)
    add("producer_threads ", state.producer_threads);
  if (state.consumer_groups != 1)
    add("consumer_groups ", state.consumer_groups);
  if (state.persistent) add("persistent");
  for (const auto& [v, extent] : state.tile_block_vars)
    add("tile_block_var ", v.name(), " ", extent);
  std::vector<std::string> names;
  for (const ir::BufferNode* b : state.tma_barriers) names.push_back(b->name);
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) add("tma_barrier ", n);
  if (state.cluster_size != 1) {
    add("cluster ", state.cluster_size, " ",
        state.cluster_var.defined() ? state.cluster_var.name() : "-", " ",
        state.cluster_empty ? state.cluster_empty->name : "-");
  }
  std::vector<std::string> loops;
  for (size_t i = 0; i < stmts.size(); ++i) {
    const auto* f = stmts[i].As<ir::ForNode>();
    if (f && state.wgmma_overlap_loops.count(f->var.get()))
      loops.push_back(absl::StrCat(i));
  }
  for (const std::string& l : loops) add("wgmma_overlap_loop ", l);
  for (const EpilogueStore& e : state.epilogue_stores)
    add("epilogue_store ", index(e.copy), " ", e.buffers, " ",
        Declaration(e.stage));
  if (state.thread_var.defined()) add("thread_var ", state.thread_var.name());
  if (!state.specialize_declined.empty())
    add("specialize_declined ", state.specialize_declined);
  std::map<std::string, std::string> layouts;
  for (const auto& [b, l] : state.layouts) {
    FragmentLayout::Fields f = l.fields();
    layouts[b->name] = absl::StrCat(
        NameOf(kLayoutKinds, f.kind), " ", absl::StrJoin(f.shape, " "),
        " threads ", f.threads, " warps ", f.warps_m, " ", f.warps_n, " tiles ",
        f.mi, " ", f.ni, " vec ", f.vec, " group ", f.group, " warpgroup_rows ",
        f.warpgroup_rows ? 1 : 0,
        f.padded_rows != 0 ? absl::StrCat(" padded_rows ", f.padded_rows) : "",
        f.warpgroup_cols ? " warpgroup_cols 1" : "");
  }
  for (const auto& [n, l] : layouts) add("layout ", n, " ", l);
  names.clear();
  for (const ir::BufferNode* b : state.wgmma_declined) names.push_back(b->name);
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) add("wgmma_declined ", n);
  const SharedPlan& smem = state.smem;
  if (smem.total_bytes != 0) add("smem_total ", smem.total_bytes);
  if (smem.scratch_offset != 0 || smem.scratch_bytes != 0)
    add("smem_scratch ", smem.scratch_offset, " ", smem.scratch_bytes);
  // The scratch buffers live in the state only: declared in their line,
  // their offsets with them (two may share a name).
  std::vector<const ir::BufferNode*> scratch;
  for (const auto& [op, b] : smem.scratch) scratch.push_back(b.get());
  auto placed = [&](const ir::BufferNode* b) {
    auto off = smem.offset.find(b);
    auto bytes = smem.bytes.find(b);
    return absl::StrCat(
        off == smem.offset.end() ? "-" : absl::StrCat(off->second), " ",
        bytes == smem.bytes.end() ? "-" : absl::StrCat(bytes->second));
  };
  std::vector<std::string> offsets;
  for (const auto& [b, off] : smem.offset) {
    if (std::find(scratch.begin(), scratch.end(), b) != scratch.end()) continue;
    auto bytes = smem.bytes.find(b);
    offsets.push_back(
        absl::StrCat(b->name, " ", off, " ",
                     bytes == smem.bytes.end() ? -1 : bytes->second));
  }
  std::sort(offsets.begin(), offsets.end());
  for (const std::string& o : offsets) add("smem ", o);
  for (size_t i = 0; i < smem.scratch.size(); ++i) {
    const auto& [op, b] = smem.scratch[i];
    size_t first =
        std::find(scratch.begin(), scratch.end(), b.get()) - scratch.begin();
    if (first < i) {
      add("scratch ", index(op), " as ", first);
    } else {
      add("scratch ", index(op), " ", placed(b.get()), " ", Declaration(b));
    }
  }
  for (const PlannedGemm& g : state.gemm_plans) {
    const GemmPlan& p = g.plan;
    auto operand = [](const GemmOperandPlan& o) {
      return absl::StrCat(NameOf(kOperandPaths, o.path), " ", o.k_major ? 1 : 0,
                          " ", o.atom_bytes);
    };
    // A gemm the lowering replaced is named by its operands.
    std::string key = index(g.gemm);
    if (key == "-") {
      const auto* node = g.gemm.As<ir::GemmNode>();
      key = absl::StrCat("- ", node->c.buffer->name, " ", node->a.buffer->name,
                         " ", node->b.buffer->name);
    }
    add("gemm ", key, " ", NameOf(kInstructions, p.instruction), " warps ",
        p.warps_m, " ", p.warps_n, " warp_tile ", p.warp_m, " ", p.warp_n,
        " tiles ", p.m_tiles, " ", p.n_tiles, " warpgroup_rows ",
        p.warpgroup_rows ? 1 : 0, " k_steps ", p.k_steps, " k_step ", p.k_step,
        " wgmma_n ", p.wgmma_n, " a ", operand(p.a), " b ", operand(p.b),
        p.small_m != 0 ? absl::StrCat(" small_m ", p.small_m) : "",
        p.fma_reason.empty() ? "" : " fma_reason ", p.fma_reason);
  }
  for (const AlignmentRequirement& a : state.alignment)
    add("alignment ", a.param, " ", a.multiple, " ", a.reason);
  for (const TensorMapParam& t : state.tensor_maps)
    add("tensor_map ", t.param, " ", t.name, " swizzle ", t.swizzle_bytes,
        " box ", absl::StrJoin(t.box, " "));
  if (lines.empty()) return "";
  return absl::StrCat("# state\n", absl::StrJoin(lines, "\n"), "\n");
}

}  // namespace tessel::passes
