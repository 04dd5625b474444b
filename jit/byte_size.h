// Sizes as people write them in environment variables: "1073741824", "512M",
// "1G" (K, M, G are powers of 1024), and the size variables the caches read.
//
//   std::optional<uint64_t> b = ParseByteSize("512M");   // 536870912
//   uint64_t max = ByteSizeFromEnv("TESSEL_CACHE_MAX_BYTES", 1 << 30);
#ifndef TESSEL_JIT_BYTE_SIZE_H_
#define TESSEL_JIT_BYTE_SIZE_H_

#include <cstdint>
#include <optional>
#include <string>

namespace tessel::jit {

// nullopt for anything else, or a size past 2^64.
std::optional<uint64_t> ParseByteSize(std::string text);

// The variable's size, or `fallback` when it is unset; a value that is not
// a size prints a warning on stderr (once per value in a process) and gives
// `fallback`.
uint64_t ByteSizeFromEnv(const char* name, uint64_t fallback);

}  // namespace tessel::jit

#endif  // TESSEL_JIT_BYTE_SIZE_H_
