// One more block per SM for a PTX kernel whose registers alone keep it out,
// and the spelling that does less in its loops where its registers allow.
//
// ptxas spends registers freely. The emitter's rmsnorm (512 threads) got 40
// where NVVM's PTX of the same kernel got 32, and layernorm (256 threads) 70
// against 62: three blocks fit an SM instead of four, and these memory-bound
// kernels ran 1-3 % slower than NVRTC's on an H200. ptxas meets an occupancy
// when asked (`.minnctapersm`), so a PTX kernel whose blocks per SM are
// limited by its registers, where a cut of at most a fifth would fit more,
// is compiled again asking for them:
//
//   rmsnorm, 512 threads:  40 registers, 3 blocks  ->  .minnctapersm 4: 32
//   layernorm, 256 threads: 70 registers, 3 blocks ->  .minnctapersm 4: 64
//
// The second cubin is kept only if it has those blocks and no more stack than
// the first (no spills); otherwise the first is. A cut of more than a fifth
// is not asked for: the GEMMs' and attention's hundred-odd registers are
// what their speed is made of. Kernels that set their own register budgets
// (`.maxnreg`, `.minnctapersm`, `setmaxnreg`) are left as they are.
#ifndef TESSEL_JIT_OCCUPANCY_FIT_H_
#define TESSEL_JIT_OCCUPANCY_FIT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jit/nvrtc.h"
#include "jit/ptx_translation.h"

namespace tessel::jit {

// What ptxas gave the kernel `entry` (its name in the cubin): registers per
// thread and stack bytes per thread (spills show here). nullopt when the
// cubin does not say.
struct CubinResources {
  int registers = 0;
  int64_t frame_bytes = 0;
};
std::optional<CubinResources> ResourcesOf(absl::string_view image,
                                          absl::string_view entry);

// Blocks of `launch` that fit one SM of `arch` with `registers` per thread
// (the occupancy calculator's arithmetic: registers by warp in units of 256,
// 1 KB of shared memory reserved per block from sm_80 on). 0 for an arch
// this does not know, or a launch that does not fit.
int BlocksPerSm(absl::string_view arch, const LaunchShape& launch,
                int registers);

// The blocks per SM worth asking ptxas for, given what it gave: more than
// now, reachable with at most a fifth fewer registers, not past the limits
// of threads, blocks and shared memory. nullopt: nothing to ask for.
std::optional<int> BlocksWorthAsking(absl::string_view arch,
                                     const LaunchShape& launch, int registers);

// `ptx` with ".minnctapersm `blocks`" after its .maxntid directive; nullopt
// when it has no .maxntid, or sets its own register budget.
std::optional<std::string> WithMinBlocksPerSm(absl::string_view ptx,
                                              int blocks);

// Compiles `input` as a cache miss does. A PTX module (with its launch
// shape) is fitted, each later cubin kept only when it is better; `input`
// then becomes what it was compiled from, and the cubin's log says so:
//  1. where the module offers a spelling with more registers
//     (CompileInput::more_registers: the emitter's, with loop-invariant
//     values computed once before their loop), both are compiled at once,
//     on two threads; that one is kept if it has no stack and as many
//     blocks per SM;
//  2. more blocks per SM are asked for where that is worth it (above).
// The first compile's error is returned (the caller may fall back to
// NVRTC); a later compile's failure keeps what it would replace. `compile`
// is how the caller compiles (isolated or not); it is called from two
// threads at once.
using CompileFunction =
    absl::FunctionRef<absl::StatusOr<Cubin>(const CompileInput&)>;
absl::StatusOr<Cubin> CompileFitted(CompileInput& input,
                                    CompileFunction compile);

}  // namespace tessel::jit

#endif  // TESSEL_JIT_OCCUPANCY_FIT_H_
