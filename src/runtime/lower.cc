#include "src/runtime/lower.h"

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "jit/ptx_compile.h"
#include "src/codegen/prelude_subset.h"
#include "src/codegen/ptx/ptx_codegen.h"
#include "src/passes/pass_list.h"

namespace tessel::runtime {
namespace {

// Whether the PTX translation is offered: CompileOptions::direct_ptx, or
// $TESSEL_PTX=1 / 0 for the whole process (a warmup, a test run; README,
// docs/ptx_backend.md), never with fast_math (the emitter spells IEEE
// arithmetic only), and only where a ptxas is found.
bool PtxBackend(const CompileOptions& options) {
  static const int env = [] {
    const char* v = std::getenv("TESSEL_PTX");
    if (v == nullptr || *v == '\0') return -1;
    return std::string(v) == "0" ? 0 : 1;
  }();
  const bool wanted = env < 0 ? options.direct_ptx : env == 1;
  return wanted && !options.fast_math && jit::PtxasAvailable();
}

// The kernel as a PTX module, headed by its pass config as the CUDA text is.
absl::StatusOr<jit::PtxModule> PtxModuleOf(
    const std::shared_ptr<const passes::LoweringState>& state,
    codegen::PtxEmitOptions options) {
  absl::StatusOr<codegen::GeneratedKernel> ptx =
      codegen::EmitPtx(*state, options);
  if (!ptx.ok()) return ptx.status();
  return jit::PtxModule{
      .text = absl::StrCat("// pass config: ", state->config.ToString(), "\n",
                           ptx->source.text),
      .entry = ptx->source.entry,
      .launch = {.threads = ptx->threads,
                 .shared_bytes = ptx->dynamic_smem_bytes}};
}

}  // namespace

absl::StatusOr<Lowered> Lower(const ir::Program& program,
                              const CompileOptions& options,
                              StrideMap strides) {
  const Target& target = options.target;
  if (target.kind() == Target::Kind::kCpu) {
    return absl::InvalidArgumentError(
        "the CPU target has no CUDA lowering: compile() builds it for the "
        "interpreter");
  }
  // Target::cuda() refuses archs below sm_80 and those NVRTC does not know.
  if (!target.status().ok()) return target.status();
  if (target.sm() == 0) {
    return absl::InvalidArgumentError(
        "compile(): the target is a default-constructed Target; use "
        "Target::detect(), Target::sm90a(), Target::cuda(\"sm_XY\") or "
        "Target::cpu()");
  }
  Lowered lowered;
  lowered.state.program = program;
  lowered.state.target = target;
  lowered.state.config = options.pass_config;
  lowered.state.strides = std::move(strides);
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
  };
  const Clock::time_point start = Clock::now();
  if (absl::Status s = passes::RunPasses(lowered.state); !s.ok()) return s;
  const Clock::time_point passes_done = Clock::now();
  absl::StatusOr<codegen::GeneratedKernel> gen =
      codegen::EmitCuda(lowered.state);
  if (!gen.ok()) return gen.status();
  lowered.passes_ms = ms(start, passes_done);
  lowered.codegen_ms = ms(passes_done, Clock::now());
  lowered.generated = *std::move(gen);
  // The pass config changes the source; say so in it so it also keys the
  // cache when it does not.
  jit::CudaSource& source = lowered.generated.source;
  source.text = absl::StrCat(
      "// pass config: ", lowered.state.config.ToString(), "\n", source.text);
  if (PtxBackend(options)) {
    // Emitted only on a cache miss (jit/ptx_translation.h), from a copy of
    // the state: the cubin may be wanted after `lowered` is gone.
    auto state = std::make_shared<const passes::LoweringState>(lowered.state);
    // Loop-invariant values stay in their loops first (as ptxas sees them
    // best where registers are short); the spelling that computes them once
    // is compiled too where registers are to spare (jit/occupancy_fit.h).
    source.to_ptx = [state]() -> absl::StatusOr<jit::PtxModule> {
      absl::StatusOr<jit::PtxModule> ptx =
          PtxModuleOf(state, {.hoist_out_of_loops = false});
      if (ptx.ok()) {
        ptx->more_registers = [state] { return PtxModuleOf(state, {}); };
      }
      return ptx;
    };
    source.ptx_translator = std::string(codegen::PtxEmitterId());
  }
  // Only the prelude parts the kernel uses: less for NVRTC's front end.
  source.headers = codegen::PreludeHeadersFor(source.text);
  lowered.jit_options.arch = target.arch();
  lowered.jit_options.fast_math = options.fast_math;
  lowered.jit_options.lineinfo = options.lineinfo;
  // Generated kernels use no textures, device-side launches or runtime API
  // types: NVRTC's -minimal leaves those declarations out of its builtin
  // header (about 5 ms less front end per kernel, the same SASS).
  lowered.jit_options.extra.push_back("-minimal");
  return lowered;
}

}  // namespace tessel::runtime
