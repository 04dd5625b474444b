#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "jit/context.h"
#include "jit/nvrtc.h"
#include "tessel/compile.h"

namespace tessel {
namespace {

// Shared memory a block may opt into (the CUDA guide's compute-capability
// table): the consumer Blackwells (12.x) have the 99 KB of sm_86 / sm_89.
int MaxSharedFor(int sm) {
  if (sm >= 120) return 101376;             // 99 KB
  if (sm >= 90) return 232448;              // 227 KB
  if (sm == 80 || sm == 87) return 166912;  // 163 KB
  if (sm >= 86) return 101376;              // 99 KB
  if (sm >= 70) return 98304;
  return 49152;
}

// The NN of "sm_NN", "sm_NNa" or "sm_NNf"; 0 for anything else. Strict: the
// arch goes into NVRTC's -arch flag as written, so "sm_90b", "sm_8x0" or
// "sm_80\0x" (once read as sm_90 / sm_80) would fail there, blamed on the
// generated code.
int ParseSm(const std::string& arch) {
  if (arch.size() < 5 || arch.size() > 8 || arch.rfind("sm_", 0) != 0) return 0;
  std::string_view digits = std::string_view(arch).substr(3);
  if (digits.back() == 'a' || digits.back() == 'f') digits.remove_suffix(1);
  if (digits.size() < 2 || digits.size() > 4 || digits[0] == '0') return 0;
  int sm = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return 0;
    sm = sm * 10 + (c - '0');
  }
  return sm;
}

// Why tessel cannot compile for arch, or "" when it can.
std::string ArchProblem(const std::string& arch, int sm) {
  if (arch.rfind("sm_", 0) != 0 || sm == 0)
    return "is not an sm_XY arch (e.g. sm_90a)";
  if (sm < 80) {
    return "is older than sm_80, the oldest arch tessel's CUDA path "
           "supports (cp.async, ldmatrix, mma.sync)";
  }
  const std::vector<int> known = jit::NvrtcSupportedSms();
  if (!known.empty() &&
      std::find(known.begin(), known.end(), sm) == known.end()) {
    return absl::StrCat("is not an arch that NVRTC ", jit::NvrtcVersion(),
                        " compiles for (it knows sm_",
                        absl::StrJoin(known, ", sm_"), ")");
  }
  return "";
}

}  // namespace

Target Target::cuda(std::string arch, std::source_location loc) {
  Target t;
  t.kind_ = Kind::kCuda;
  t.sm_ = ParseSm(arch);
  if (std::string why = ArchProblem(arch, t.sm_); !why.empty()) {
    t.status_ = absl::InvalidArgumentError(
        absl::StrCat(loc.file_name(), ":", loc.line(), ": Target::cuda(\"",
                     arch, "\"): \"", arch, "\" ", why));
  }
  t.arch_ = std::move(arch);
  t.max_shared_bytes_ = MaxSharedFor(t.sm_);
  return t;
}

Target Target::sm80() { return cuda("sm_80"); }
Target Target::sm90a() { return cuda("sm_90a"); }

Target Target::cpu() {
  Target t;
  t.kind_ = Kind::kCpu;
  t.arch_ = "cpu";
  return t;
}

Target Target::detect() {
  // Per device: a host program that makes another GPU's context current
  // gets that GPU's arch.
  static absl::Mutex mu(absl::kConstInit);
  static auto* detected = new std::map<CUdevice, Target>;  // never released
  absl::StatusOr<CUcontext> context = jit::ResolveContext(nullptr);
  absl::StatusOr<CUdevice> device =
      context.ok() ? jit::ContextDevice(**jit::Driver(), *context)
                   : absl::StatusOr<CUdevice>(context.status());
  if (!device.ok()) {
    Target t;
    t.status_ = absl::UnavailableError(absl::StrCat(
        "Target::detect(): no GPU to detect (", device.status().message(),
        "); give an explicit target such as Target::sm90a() to compile "
        "without one"));
    return t;
  }
  absl::MutexLock lock(&mu);
  if (auto it = detected->find(*device); it != detected->end()) {
    return it->second;
  }
  absl::StatusOr<std::string> arch = jit::DetectArch(*context);
  if (!arch.ok()) {
    Target t;
    t.status_ = absl::UnavailableError(
        absl::StrCat("Target::detect(): ", arch.status().message()));
    return t;
  }
  Target t = cuda(*arch);
  if (!t.status_.ok()) {
    t.status_ = absl::InvalidArgumentError(
        absl::StrCat("Target::detect(): the GPU is ", *arch, ", which ",
                     ArchProblem(*arch, t.sm_)));
  }
  absl::StatusOr<int> smem = jit::DeviceAttribute(
      CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, *context);
  if (smem.ok() && *smem > 0) t.max_shared_bytes_ = *smem;
  detected->emplace(*device, t);
  return t;
}

std::string Target::ToString() const {
  if (kind_ == Kind::kCpu) return "cpu";
  return absl::StrCat(arch_, " (", max_shared_bytes_, " B shared per block)");
}

std::string PassConfig::ToString() const {
  return absl::StrCat(
      "tma_lower=", !disable_tma_lower,
      " warp_specialized=", !disable_warp_specialized,
      " async_copy=", !disable_async_copy,
      " thread_sync=", !disable_thread_sync, " wgmma=", !disable_wgmma,
      " persistent_grid=", !disable_persistent_grid,
      // Only when set: the default's text (part of every
      // generated source and cache key) stays as it was.
      pingpong_consumers ? " pingpong_consumers=1" : "",
      disable_tma_store_epilogue ? " tma_store_epilogue=0" : "",
      consumer_gemm_turns ? " consumer_gemm_turns=1" : "",
      bulk_reduce_atomics ? " bulk_reduce_atomics=1" : "",
      wgmma_across_barriers ? " wgmma_across_barriers=1" : "",
      cluster_size != 1 ? absl::StrCat(" cluster_size=", cluster_size) : "",
      rebase_unrolled_nests ? " rebase_unrolled_nests=1" : "");
}

}  // namespace tessel
