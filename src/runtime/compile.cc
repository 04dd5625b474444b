#include "tessel/compile.h"
#include "absl/strings/str_cat.h"
#include "jit/kernel_cache.h"
#include "src/codegen/cuda_codegen.h"
#include "src/ir/printer.h"
#include "src/passes/ir_util.h"
#include "src/passes/pipeline.h"
#include "src/runtime/kernel_impl.h"
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

}  // namespace

absl::StatusOr<CompiledKernel> compile(const ir::Program& program,
                                       const CompileOptions& options) {
  const Target& target = options.target;
  if (target.kind() == Target::Kind::kCpu) {
    return absl::UnimplementedError(
        "compile(): Target::cpu() (the interpreter) is not wired into "
        "compile() yet; run the program with the interpreter directly");
  }
  if (!target.status().ok()) return target.status();
  if (target.sm() < 80) {
    return absl::InvalidArgumentError(absl::StrCat(
        "compile(): ", target.arch(), " is below sm_80, the oldest arch the ",
        "CUDA path supports (cp.async, ldmatrix, mma.sync)"));
  }
  passes::LoweringState state;
  state.program = program;
  state.target = target;
  state.config = options.pass_config;
  if (absl::Status s = passes::RunPipeline(state); !s.ok()) return s;
  absl::StatusOr<codegen::GeneratedKernel> gen = codegen::EmitCuda(state);
  if (!gen.ok()) return gen.status();
  // The pass config changes the source; say so in it so it also keys the
  // cache when it does not.
  gen->source.text = absl::StrCat("// pass config: ", state.config.ToString(),
                                  "\n", gen->source.text);
  jit::CompileOptions jo;
  jo.arch = target.arch();
  jo.fast_math = options.fast_math;
  jo.lineinfo = options.lineinfo;
  jit::KernelCache& cache =
      options.isolated ? IsolatedCache() : jit::KernelCache::Default();
  absl::StatusOr<jit::CachedCubin> cubin = cache.GetCubin(gen->source, jo);
  if (!cubin.ok()) {
    return absl::Status(
        cubin.status().code(),
        absl::StrCat(program.name, ": the generated CUDA did ",
                     "not compile (a tessel bug): ", cubin.status().message()));
  }
  auto impl = std::make_shared<runtime::KernelImpl>();
  impl->name = program.name;
  impl->source = gen->source.text;
  impl->entry = gen->source.entry;
  impl->lowered_ir = ir::ToString(state.program);
  impl->arch = target.arch();
  impl->threads = gen->threads;
  impl->dynamic_smem_bytes = gen->dynamic_smem_bytes;
  impl->params = program.params;
  impl->dims = program.dims;
  ir::Stmt body = program.body;
  passes::ForEachStmt(body, [&](const ir::Stmt& s) {
    if (const auto* k = s.As<ir::KernelNode>()) impl->grid = k->grid;
  });
  impl->alignment = state.alignment;
  impl->cubin = *cubin;
  impl->signature = gen->signature;
  return CompiledKernel(std::move(impl));
}

absl::StatusOr<CompiledKernel> compile(const Program& program,
                                       const CompileOptions& options) {
  return compile(program.ir(), options);
}

}  // namespace tessel
