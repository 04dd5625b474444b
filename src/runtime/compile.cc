#include "tessel/compile.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jit/kernel_cache.h"
#include "src/codegen/cuda_codegen.h"
#include "src/ir/walk.h"
#include "src/passes/plan_gemms.h"
#include "src/passes/wgmma.h"
#include "src/runtime/cpu_kernel.h"
#include "src/runtime/kernel_impl.h"
#include "src/runtime/lower.h"
#include "src/runtime/program_cache.h"
#include "src/runtime/program_index.h"
#include "src/runtime/strided_views.h"
#include "tessel/program.h"

namespace tessel {
namespace {

jit::KernelCache& IsolatedCache() {
  static auto* cache = [] {
    jit::KernelCacheOptions o;
    o.isolated = true;
    return new jit::KernelCache(o);
  }();
  return *cache;
}

// CompiledKernel::schedule(): the decisions a user tuning a kernel (or
// wondering why it is slow) needs, from the lowering state.
std::vector<std::string> Schedule(const passes::LoweringState& st) {
  std::vector<std::string> out;
  for (const passes::PlannedGemm& p : st.gemm_plans) {
    const auto* g = p.gemm.As<ir::GemmNode>();
    std::string line =
        absl::StrCat("gemm ", g->c.buffer->name, " += ", g->a.buffer->name,
                     " * ", g->b.buffer->name, ": ", p.plan.ToString());
    if (p.plan.instruction == passes::GemmInstruction::kFma) {
      // Why it is not on the tensor cores, in the user's terms: the tile,
      // the operands' scopes or layouts, the dtypes; fp8 (no mma.sync path)
      // why wgmma refused it (its layout, the arch, the tile).
      const std::string why = passes::FmaReason(*g, st);
      const DataType a = g->a.buffer->dtype, b = g->b.buffer->dtype;
      line += passes::IsFp8(a) && passes::IsFp8(b)
                  ? absl::StrCat(" (no tensor-core path for ",
                                 std::string(dtype_name(a)), " x ",
                                 std::string(dtype_name(b)), " -> ",
                                 std::string(dtype_name(g->c.buffer->dtype)),
                                 " here: ", why, ": FMA loops)")
                  : absl::StrCat(" (no tensor cores: ", why, ": FMA loops)");
    }
    out.push_back(std::move(line));
  }
  if (!st.specialize_declined.empty()) {
    out.push_back(absl::StrCat("warp-specialized: no (", st.specialize_declined,
                               "): the cp.async pipeline"));
  }
  if (st.producer_threads > 0) {
    std::string maps;
    for (const passes::TensorMapParam& m : st.tensor_maps) {
      absl::StrAppend(&maps, maps.empty() ? "" : ", ", m.name, " box [",
                      absl::StrJoin(m.box, ", "), "] swizzle ",
                      m.swizzle_bytes);
    }
    out.push_back(absl::StrCat("warp-specialized: ", st.producer_threads,
                               " TMA producer threads, ", st.threads,
                               " consumer threads; tensor maps ", maps));
    if (st.consumer_groups > 1) {
      out.push_back(absl::StrCat("ping-pong: ", st.consumer_groups,
                                 " consumer groups of ", st.threads,
                                 " threads take alternate output tiles"));
    }
  }
  for (const passes::EpilogueStore& e : st.epilogue_stores) {
    const auto* c = e.copy.As<ir::CopyNode>();
    std::vector<int64_t> shape;
    for (const ir::Expr& d : e.stage->shape)
      shape.push_back(*ir::AsConstInt(d));
    out.push_back(absl::StrCat(
        "epilogue: ", c->src.buffer->name, " -> ", c->dst.buffer->name,
        " through ", e.stage->name, " [", absl::StrJoin(shape, ", "),
        "] and TMA stores (", e.buffers,
        e.buffers == 1 ? " buffer" : " buffers", " per warpgroup)"));
  }
  // Warp-specialized kernels say why their epilogue kept plain stores.
  if (!st.config.disable_tma_store_epilogue && st.producer_threads > 0 &&
      st.epilogue_stores.empty())
    out.push_back(
        "epilogue: plain stores (no copy of a whole accumulator to a "
        "rank-2 f16 / bf16 tensor of 16-byte rows that the TMA can store)");
  if (st.persistent)
    out.push_back(
        "persistent grid: at most one block per SM, looping over "
        "the output tiles");
  if (st.cluster_size > 1) {
    out.push_back(absl::StrCat("clusters of ", st.cluster_size,
                               " blocks on tiles next to each other "
                               "along ",
                               st.cluster_var->name,
                               ", multicasting the operand tiles both read"));
  } else if (st.config.cluster_size > 1 && st.producer_threads > 0) {
    out.push_back(
        "clusters: none (a 2-d persistent grid of one consumer group with an "
        "even tile count along a block index that a copy's source does not "
        "use)");
  }
  return out;
}

}  // namespace

namespace runtime {
std::shared_ptr<KernelImpl> KernelFromLowered(const ir::Program& program,
                                              const CompileOptions& options,
                                              const Lowered& lowered,
                                              jit::CachedCubin cubin) {
  const passes::LoweringState& state = lowered.state;
  const codegen::GeneratedKernel* gen = &lowered.generated;
  auto impl = std::make_shared<runtime::KernelImpl>();
  impl->name = program.name;
  impl->source = gen->source.text;
  impl->entry = gen->source.entry;
  impl->lowered_ir = std::make_shared<runtime::LoweredIrText>(state.program);
  impl->arch = options.target.arch();
  impl->threads = gen->threads;
  impl->dynamic_smem_bytes = gen->dynamic_smem_bytes;
  impl->params = program.params;
  impl->dims = program.dims;
  // The scheduled kernel's grid: a persistent kernel's is not the user's.
  ir::Stmt body = state.program.body;
  ir::ForEachStmt(body, [&](const ir::Stmt& s) {
    if (const auto* k = s.As<ir::KernelNode>()) impl->grid = k->grid;
  });
  impl->alignment = state.alignment;
  impl->tensor_maps = state.tensor_maps;
  impl->persistent = state.persistent;
  impl->cluster_size = state.cluster_size;
  impl->schedule = Schedule(state);
  impl->cubin = std::move(cubin);
  impl->signature = gen->signature;
  return impl;
}

absl::StatusOr<std::shared_ptr<KernelImpl>> CompileCuda(
    const ir::Program& program, const CompileOptions& options,
    StrideMap strides) {
  absl::StatusOr<runtime::Lowered> lowered =
      runtime::Lower(program, options, std::move(strides));
  if (!lowered.ok()) return lowered.status();
  jit::KernelCache& cache =
      options.isolated ? IsolatedCache() : jit::KernelCache::Default();
  absl::StatusOr<jit::CachedCubin> cubin =
      cache.GetCubin(lowered->generated.source, lowered->jit_options);
  if (!cubin.ok()) {
    return absl::Status(
        cubin.status().code(),
        absl::StrCat(program.name, ": the generated CUDA did ",
                     "not compile (a tessel bug): ", cubin.status().message()));
  }
  return KernelFromLowered(program, options, *lowered, *std::move(cubin));
}
}  // namespace runtime

namespace {

// The CPU target refuses what the GPU lowering refuses, so that a program
// checked on Target::cpu() compiles for the GPU: the sm_90a passes and
// codegen run (no NVRTC, about a millisecond), and a user's error from them
// is the CPU target's error too. A lowering that cannot run here (no CUDA
// toolkit: Unavailable, NotFound) leaves the CPU target as it is.
absl::Status CheckGpuLowering(const ir::Program& program,
                              const CompileOptions& options) {
  CompileOptions gpu = options;
  gpu.target = Target::sm90a();
  gpu.direct_ptx = false;  // the errors are the passes' and the printer's
  absl::StatusOr<runtime::Lowered> lowered = runtime::Lower(program, gpu);
  if (lowered.ok() || absl::IsUnavailable(lowered.status()) ||
      absl::IsNotFound(lowered.status())) {
    return absl::OkStatus();
  }
  return absl::Status(
      lowered.status().code(),
      absl::StrCat(lowered.status().message(),
                   " (Target::cpu() refuses what the sm_90a lowering "
                   "refuses, so that both targets take the same programs)"));
}

// Passes, codegen and NVRTC (through the kernel cache); the interpreter's
// executable for the CPU target.
absl::StatusOr<std::shared_ptr<runtime::KernelImpl>> CompileUncached(
    const ir::Program& program, const CompileOptions& options) {
  if (options.target.kind() == Target::Kind::kCpu) {
    absl::StatusOr<std::shared_ptr<runtime::KernelImpl>> cpu =
        runtime::CompileForCpu(program);
    if (!cpu.ok()) return cpu;
    if (absl::Status s = CheckGpuLowering(program, options); !s.ok()) return s;
    return cpu;
  }
  // A program this build compiled before, in any process: no passes.
  jit::DiskCache& disk = jit::KernelCache::Default().disk();
  const std::optional<std::string> index_key =
      disk.enabled() ? runtime::ProgramIndexKey(program, options)
                     : std::nullopt;
  absl::StatusOr<std::shared_ptr<runtime::KernelImpl>> impl =
      index_key ? runtime::FindIndexed(*index_key, program, options) : nullptr;
  if (*impl == nullptr) {
    impl = runtime::CompileCuda(program, options);
    if (!impl.ok()) return impl;
    if (index_key) runtime::RecordIndexed(*index_key, program, **impl, disk);
  }
  // What a launch with strided views specializes (strided_views.h).
  (*impl)->program = std::make_shared<const ir::Program>(program);
  (*impl)->options = options;
  (*impl)->specializations =
      std::make_shared<runtime::StridedSpecializations>();
  return impl;
}

}  // namespace

absl::StatusOr<CompiledKernel> compile(const ir::Program& program,
                                       const CompileOptions& options) {
  runtime::ProgramCache& memo = runtime::ProgramCache::Global();
  const bool memoize = runtime::ProgramCache::Applies(options);
  runtime::ProgramCache::Key key;
  if (memoize) {
    key = runtime::ProgramCache::KeyOf(options);
    if (std::shared_ptr<const runtime::KernelImpl> hit =
            memo.Find(key, program)) {
      return CompiledKernel(std::const_pointer_cast<runtime::KernelImpl>(hit));
    }
  }
  absl::StatusOr<std::shared_ptr<runtime::KernelImpl>> impl =
      CompileUncached(program, options);
  if (!impl.ok()) return impl.status();
  if (memoize) memo.Insert(key, program, **impl);
  return CompiledKernel(*std::move(impl));
}

absl::StatusOr<CompiledKernel> compile(const Program& program,
                                       const CompileOptions& options) {
  if (!program.ir().body.defined()) {
    return absl::InvalidArgumentError(
        "compile: the Program is empty (default-constructed); "
        "ProgramBuilder::finish() returns one to compile");
  }
  return compile(program.ir(), options);
}

}  // namespace tessel
