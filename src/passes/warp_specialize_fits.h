// Whether a kernel may be warp-specialized (warp_specialize.h) before the
// specializer looks at its Pipelined loop's body, and why not: what
// CompiledKernel::schedule() tells a user whose sm_90a kernel kept the
// cp.async pipeline.
#ifndef TESSEL_SRC_PASSES_WARP_SPECIALIZE_FITS_H_
#define TESSEL_SRC_PASSES_WARP_SPECIALIZE_FITS_H_

#include <optional>
#include <string>

#include "src/passes/lowering_state.h"

namespace tessel::passes {

// nullopt: nothing to specialize (not sm_90a, or no Pipelined loop of two or
// more stages). "": the specializer may try (the body can still fail to
// split). Else why not: a PassConfig switch, the thread count (128, 256 or
// 384), the kernel's own mbarriers or barriers (they assume every thread
// runs every statement), more than one Pipelined loop.
std::optional<std::string> SpecializeRefusal(const LoweringState& state);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_WARP_SPECIALIZE_FITS_H_
