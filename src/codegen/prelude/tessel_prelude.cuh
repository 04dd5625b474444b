// tessel device prelude: everything a generated kernel may call.
//
// The codegen puts `#include "tessel_prelude.cuh"` at the top of each kernel
// and hands every file of this folder to NVRTC as a header by content. The
// functions live in tessel::dev; `tl` is the short alias generated code uses.
//
//   #include "tessel_prelude.cuh"
//   extern "C" __global__ void k(float* o) { o[0] = tl::exp2_approx(1.0f); }
#pragma once

// A kernel's NVRTC compile gets this file with only the parts below that it
// uses, and cuda_fp8.h (a tenth of a front end's time) only when it names an
// fp8 type (src/codegen/prelude_subset.h): no part uses fp8 itself.
#include <cuda_fp8.h>

#include "atomics.cuh"
#include "cluster.cuh"
#include "convert.cuh"
#include "copy_async.cuh"
#include "float_minmax.cuh"
#include "floor_div.cuh"
#include "ldmatrix.cuh"
#include "math.cuh"
#include "mbarrier.cuh"
#include "minmax.cuh"
#include "mma.cuh"
#include "rasterize.cuh"
#include "reduce.cuh"
#include "swizzle.cuh"
#include "sync.cuh"
#include "tma.cuh"
#include "types.cuh"
#include "wgmma.cuh"

namespace tl = tessel::dev;
