// The prelude one kernel needs: every prelude header, as PreludeHeaders(),
// but with a "tessel_prelude.cuh" that includes only the parts the kernel
// names, and <cuda_fp8.h> only for a kernel that names an fp8 type. NVRTC's
// front end then parses a fraction of the prelude (docs/benchmarks.md,
// "Compile latency"); the kernel's own text is unchanged.
//
//   jit::CudaSource& s = generated.source;
//   s.headers = codegen::PreludeHeadersFor(s.text);
//
// A part is needed when it mentions, as a whole word, a name the kernel
// writes as `tl::name` or `tessel::dev::name`, or a TESSEL_ macro the kernel
// uses: every part that declares an overload or specialization of a name the
// kernel uses is among them, so overload resolution sees what it sees with
// the whole prelude. types.cuh is always included. The headers are part of
// the cache key (jit/cache_key.h), so the subset keys the cache too.
#ifndef TESSEL_SRC_CODEGEN_PRELUDE_SUBSET_H_
#define TESSEL_SRC_CODEGEN_PRELUDE_SUBSET_H_

#include <string>
#include <string_view>
#include <vector>

#include "jit/nvrtc.h"

namespace tessel::codegen {

std::vector<jit::CudaHeader> PreludeHeadersFor(std::string_view kernel_text);

// The prelude parts ("copy_async.cuh", ...) PreludeHeadersFor includes for
// `kernel_text`, in the order tessel_prelude.cuh lists them.
std::vector<std::string> PreludePartsFor(std::string_view kernel_text);

}  // namespace tessel::codegen

#endif  // TESSEL_SRC_CODEGEN_PRELUDE_SUBSET_H_
