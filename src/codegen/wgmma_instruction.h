// wgmma.mma_async as both backends spell it: the CUDA printer's inline asm
// (cuda_intrinsics.cc) and the PTX emitter's line (ptx/ptx_intrinsics.cc).
// The prelude holds the instructions around it (prelude/wgmma.cuh) but not
// this one, whose accumulator list grows with N, so it is spelled here once.
//
//   WgmmaOpcode("f16", 128)  // "wgmma.mma_async.sync.aligned.m64n128k16
//                            //  .f32.f16.f16"
//   WgmmaImmediates("f16", /*trans_a=*/0, /*trans_b=*/1)  // "1, 1, 0, 1"
#ifndef TESSEL_SRC_CODEGEN_WGMMA_INSTRUCTION_H_
#define TESSEL_SRC_CODEGEN_WGMMA_INSTRUCTION_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"

namespace tessel::codegen {

// `type` is "f16" / "bf16" for A and B, or fp8 "e4m3.e5m2" (A's, B's):
// m64nNk16, or m64nNk32 for fp8 (32 bytes of K either way).
inline bool WgmmaIsFp8(const std::string& type) {
  return type.find('.') != std::string::npos;
}

inline std::string WgmmaOpcode(const std::string& type, int n) {
  const bool fp8 = WgmmaIsFp8(type);
  return absl::StrCat("wgmma.mma_async.sync.aligned.m64n", n, "k",
                      fp8 ? 32 : 16, ".f32.",
                      fp8 ? type : absl::StrCat(type, ".", type));
}

// The scale and transpose immediates after the scale-d predicate: fp8 reads
// K-major only (no transposes), A in registers (trans_a < 0) has none of
// its own.
inline std::string WgmmaImmediates(const std::string& type, int64_t trans_a,
                                   int64_t trans_b) {
  if (WgmmaIsFp8(type)) return "1, 1";
  if (trans_a < 0) return absl::StrCat("1, 1, ", trans_b);
  return absl::StrCat("1, 1, ", trans_a, ", ", trans_b);
}

}  // namespace tessel::codegen

#endif  // TESSEL_SRC_CODEGEN_WGMMA_INSTRUCTION_H_
