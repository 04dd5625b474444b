// `tessel-warmup --shard I/N`: which warmup jobs belong to shard I of N.
//
//   ASSIGN_OR_RETURN(tessel::tools::Shard shard,
//                    tessel::tools::ParseShard("2/3"));
//   if (shard.Contains(entry, "sm_90a")) { ... }
//
// A job's shard is a hash of what it compiles (kernel name, params, arch,
// NVRTC flags), not of its position: the same job lands in the same shard on
// every machine and in every run, whatever else the manifest lists and in
// whatever order, so N machines each running one I/N cover every job once.
#ifndef TESSEL_TOOLS_SHARD_H_
#define TESSEL_TOOLS_SHARD_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/manifest.h"

namespace tessel::tools {

inline constexpr int kMaxShards = 1 << 20;

struct Shard {
  int index = 1;  // 1-based, as written: 1 <= index <= count
  int count = 1;

  bool Contains(const ManifestEntry& entry, absl::string_view arch) const;
  std::string ToString() const;  // "2/3"
};

// "I/N" with 1 <= I <= N <= kMaxShards; anything else is InvalidArgument
// naming the text.
absl::StatusOr<Shard> ParseShard(absl::string_view text);

// The stable 64-bit identity of one job; its shard is 1 + hash % count.
uint64_t JobHash(const ManifestEntry& entry, absl::string_view arch);

}  // namespace tessel::tools

#endif  // TESSEL_TOOLS_SHARD_H_
