// Workloads of samples/decode_attention: a paged KV cache filled with random
// keys and values, sequences of the given lengths on shuffled pages, the
// attention kernel (and the splits' combine), the float64 reference; and the
// copy whose bandwidth the decode kernels are measured against.
//
//   absl::StatusOr<Workload> w =
//       DecodeAttentionWorkload(config, {0, 1, 17, 300}, /*seed=*/1);
//   absl::StatusOr<Workload> copy = CopyWorkload(256 << 20);  // f16 elements
#ifndef TESSEL_SAMPLES_DECODE_ATTENTION_WORKLOAD_H_
#define TESSEL_SAMPLES_DECODE_ATTENTION_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "samples/decode_attention.h"
#include "samples/workload.h"

namespace tessel::samples {

// config.B becomes the number of sequences and config.max_pages at least
// the longest one's pages. Unused block-table entries hold -1 (no page).
// The bench label: kernel "decode_attention", size "B64 L4096 H32 Hkv8
// D128" (L: the longest sequence), variant "" or "fp8kv", "q2", ...
absl::StatusOr<Workload> DecodeAttentionWorkload(DecodeAttentionConfig config,
                                                 const std::vector<int>& lens,
                                                 uint64_t seed);

// The copy whose bandwidth the decode rows are a fraction of: Y = X over n
// f16 elements seen as [n / 1024, 1024], each block of 256 threads moving
// [16, 1024] (32 KB: eight 16-byte loads in flight per thread) through
// registers, as a device-to-device copy does. n a multiple of 16384.
inline constexpr int kCopyCols = 1024, kCopyRows = 16;
inline constexpr int64_t kCopyTile = int64_t{kCopyCols} * kCopyRows;
absl::StatusOr<Program> CopyProgram(int64_t n);

// Y = X by CopyProgram (kernel "copy", bytes read + written), the bandwidth
// ceiling of the run.
absl::StatusOr<Workload> CopyWorkload(int64_t n);

// "0,1,17" -> {0, 1, 17} (lengths >= 0).
absl::StatusOr<std::vector<int>> ParseLengths(const std::string& text);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_DECODE_ATTENTION_WORKLOAD_H_
