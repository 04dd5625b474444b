// The parameter count of a kernel, read from its cubin: what the signature
// check at load uses when the driver has no cuFuncGetParamCount, so that it
// never has to probe cuFuncGetParamInfo past the last parameter (a failing
// driver call, which compute-sanitizer reports).
//
//   std::optional<size_t> n = CubinParamCount(cubin.image,
//   cubin.lowered_entry);
//
// The cubin is an ELF file; its section ".nv.info.<entry>" holds attribute
// records (u8 format, u8 attribute, u16 value or size, then `size` bytes
// for format 0x04), one EIATTR_KPARAM_INFO (0x17) record per parameter,
// whose value carries the parameter's ordinal at bytes 4..5.
#ifndef TESSEL_JIT_CUBIN_PARAMS_H_
#define TESSEL_JIT_CUBIN_PARAMS_H_

#include <cstddef>
#include <optional>

#include "absl/strings/string_view.h"

namespace tessel::jit {

// nullopt when `image` is not a 64-bit ELF with that section, or its records
// do not make ordinals 0..n-1 exactly once each: then the count is unknown.
std::optional<size_t> CubinParamCount(absl::string_view image,
                                      absl::string_view entry);

}  // namespace tessel::jit

#endif  // TESSEL_JIT_CUBIN_PARAMS_H_
