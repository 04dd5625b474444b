// The cache key of a compile: XXH3-128 over every input that shapes the
// cubin, as length-prefixed fields. No paths, no mtimes. A PTX source's key
// also hashes its language and ptxas's version (in place of NVRTC's), so
// the same text as CUDA and as PTX never share an entry. A CUDA source that
// offers a PTX translation (ptx_translation.h) appends the translator's
// identity and ptxas's version to its CUDA key: its cubin may be either
// compiler's. CUDA keys without one hash exactly what they did before PTX
// existed.
//
//   ASSIGN_OR_RETURN(CacheKeyFields fields,
//                    tessel::jit::MakeCacheKeyFields(source, options));
//   std::string key = tessel::jit::ComputeCacheKey(fields);  // 32 hex digits
#ifndef TESSEL_JIT_CACHE_KEY_H_
#define TESSEL_JIT_CACHE_KEY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/nvrtc.h"

namespace tessel::jit {

// Bump when the entry format or the key's fields change: the folder is
// v<schema>, so older entries are simply not seen (misses). 2: entries carry
// their stamp (key, arch, NVRTC and tessel versions, entry).
inline constexpr uint32_t kCacheSchemaVersion = 2;

struct CacheKeyFields {
  uint32_t schema = kCacheSchemaVersion;
  std::string tessel_version;
  std::string source;
  std::string entry;
  std::vector<CudaHeader> headers;   // order does not matter
  std::vector<std::string> options;  // NormalizedOptionsFor()
  std::string nvrtc_version;         // kCuda: what compiles it
  std::string arch;
  // Hashed only for kPtx, so that CUDA keys stay as they were.
  SourceLanguage language = SourceLanguage::kCuda;
  // kPtx, or a translation offered: what compiles it (PtxasVersion()).
  std::string ptxas_version;
  std::string ptx_translator;  // CudaSource::ptx_translator; empty: none
};

// tessel's version (TESSEL_VERSION_STRING at build time).
std::string TesselVersion();

// The fields for compiling `source` with `options` here: arch resolved,
// options normalized, this tessel and NVRTC (kCuda) or ptxas (kPtx, or a
// translation offered).
absl::StatusOr<CacheKeyFields> MakeCacheKeyFields(
    const CudaSource& source, const CompileOptions& options);

// 32 lowercase hex digits.
std::string ComputeCacheKey(const CacheKeyFields& fields);

// The same as ComputeCacheKey(*MakeCacheKeyFields(source, options)), without
// copying the source.
absl::StatusOr<std::string> ComputeCacheKey(const CudaSource& source,
                                            const CompileOptions& options);

}  // namespace tessel::jit

#endif  // TESSEL_JIT_CACHE_KEY_H_
