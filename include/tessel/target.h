// What compile() generates code for (Target) and the scheduler's switches
// (PassConfig): plain data, below the runtime, so that the passes and the
// codegen read them without seeing compile() (include/tessel/compile.h).
//
//   tessel::Target t = tessel::Target::sm90a();   // t.sm() == 90
//   tessel::PassConfig c{.disable_async_copy = true};
#ifndef TESSEL_TARGET_H_
#define TESSEL_TARGET_H_

#include <source_location>
#include <string>

#include "absl/status/status.h"

namespace tessel {

// What the code is generated for.
class Target {
 public:
  enum class Kind { kCuda, kCpu };

  // The arch of the device of the calling thread's current CUDA context, or
  // of device 0 when none is current ("sm_90a" on an H200). Without a GPU
  // the target carries the Unavailable status, which compile() returns.
  static Target detect();
  static Target sm80();
  static Target sm90a();
  // Any "sm_XY[a]" arch from sm_80 that this NVRTC compiles for; another
  // carries an InvalidArgument status naming the caller's line, which
  // compile() returns.
  static Target cuda(std::string arch, std::source_location loc =
                                           std::source_location::current());
  // The CPU interpreter: launch() runs the program on host memory, with
  // the interpreter's exact numerics and its user-bug checks.
  static Target cpu();

  Kind kind() const { return kind_; }
  const std::string& arch() const { return arch_; }
  int sm() const { return sm_; }  // 80, 90, ...
  // The most shared memory one block may use (opt-in limit), in bytes.
  int max_shared_bytes() const { return max_shared_bytes_; }
  const absl::Status& status() const { return status_; }
  std::string ToString() const;

 private:
  Kind kind_ = Kind::kCuda;
  std::string arch_;
  int sm_ = 0;
  int max_shared_bytes_ = 0;
  absl::Status status_;
};

// Switches of the scheduler, as TileLang's pass configs. Part of the cache
// key (it changes the generated source).
struct PassConfig {
  // sm_90a: Pipelined loops of TMA-able copies and gemms run on a TMA
  // producer warpgroup and consumer warpgroups (src/passes/warp_specialize.h);
  // either switch keeps the cp.async pipeline.
  bool disable_tma_lower = false;
  bool disable_warp_specialized = false;
  bool disable_async_copy = false;   // no cp.async: plain loads/stores
  bool disable_thread_sync = false;  // no barrier insertion (tests only)
  bool disable_wgmma = false;  // sm_90a: mma.sync instead of wgmma.mma_async
  // sm_90a warp-specialized kernels: one block per tile instead of a
  // persistent grid (one block per SM looping over the output tiles).
  bool disable_persistent_grid = false;
  // sm_90a persistent warp-specialized kernels of one consumer warpgroup
  // (128 threads): two copies of it take alternate output tiles, each with
  // its own accumulator, so one's epilogue overlaps the other's mainloop
  // (CUTLASS's "ping-pong"). Ignored where it does not apply
  // (src/passes/warp_specialize.h says where).
  bool pingpong_consumers = false;
  // sm_90a warp-specialized kernels: an epilogue T.copy of a wgmma
  // accumulator to a global tensor goes through a swizzled shared staging
  // tile, column chunk by chunk, and TMA stores (src/passes/epilogue_store.h
  // says when; elsewhere direct stores). This switch keeps direct stores.
  bool disable_tma_store_epilogue = false;
  // sm_90a warp-specialized kernels of two or three consumer warpgroups
  // whose loop issues a gemm on shared operands, then one with A in
  // registers (flash attention's Q K^T and P V): the warpgroups take turns
  // at the tensor cores, FlashAttention-3's "warp scheduler barrier", so one
  // warpgroup's softmax runs under the others' gemms. Ignored where it does
  // not apply (src/passes/lower/gemm_turns.cc says where).
  bool consumer_gemm_turns = false;
  // sm_90a: atomic_add of a shared f32 tile into a global one as bulk
  // reductions (cp.reduce.async.bulk .add.f32, one per row, from the TMA
  // unit) instead of vector atomics from every thread; needs 16-byte rows.
  bool bulk_reduce_atomics = false;
  // sm_90a loops scheduled by order / stage lists (wgmma groups left in
  // flight): a group whose shared operands only the TMA writes stays in
  // flight across a barrier instead of retiring before it; those writes
  // follow the consumers' pipeline arrivals, which retire every group
  // (src/passes/lower/wgmma_overlap.cc).
  bool wgmma_across_barriers = false;
  // sm_90a persistent warp-specialized kernels: blocks run in clusters of
  // this many (1 or 2) on neighbouring tiles that read the same tile of one
  // gemm operand; each block loads half of that tile and the TMA multicasts
  // it into both, so the pair reads it from L2 once. Ignored where it does
  // not apply (src/passes/warp_specialize.h says where).
  int cluster_size = 1;
  // The CUDA printer (src/codegen/cuda_rebase.cc): in an unrolled loop nest,
  // the global accesses copied 32 times or more index one base pointer
  // declared before the nest, so NVVM does not fold their whole index again
  // in every copy (NVRTC CPU time of the sm_90a gemm -11 %, its SASS the
  // same). Off by default: it changes other kernels' SASS (flash attention)
  // and has no GPU timing that settles it. Kernels the PTX emitter spells
  // (CompileOptions::direct_ptx) do not use it.
  bool rebase_unrolled_nests = false;
  // A folder: the IR after every pass is written there (also
  // $TESSEL_DUMP_IR).
  std::string dump_ir;

  std::string ToString() const;  // "async_copy=1 thread_sync=1 ..."
};

}  // namespace tessel

#endif  // TESSEL_TARGET_H_
