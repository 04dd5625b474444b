#include "tools/shard.h"

#include <xxhash.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tessel::tools {

absl::StatusOr<Shard> ParseShard(absl::string_view text) {
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shard ", text, ": ", why,
                     " (expected I/N with 1 <= I <= N, e.g. 2/3)"));
  };
  const size_t slash = text.find('/');
  if (slash == absl::string_view::npos) return bad("no '/'");
  // SimpleAtoi takes "+3" and " 3"; a shard is plain digits.
  const auto digits = [](absl::string_view s) {
    return !s.empty() && s.size() <= 9 &&
           s.find_first_not_of("0123456789") == absl::string_view::npos;
  };
  const absl::string_view i_text = text.substr(0, slash);
  const absl::string_view n_text = text.substr(slash + 1);
  Shard shard;
  if (!digits(i_text) || !digits(n_text) ||
      !absl::SimpleAtoi(i_text, &shard.index) ||
      !absl::SimpleAtoi(n_text, &shard.count)) {
    return bad("I and N must be positive integers");
  }
  if (shard.count < 1 || shard.count > kMaxShards) {
    return bad(absl::StrCat("N must be between 1 and ", kMaxShards));
  }
  if (shard.index < 1 || shard.index > shard.count) {
    return bad("I must be between 1 and N");
  }
  return shard;
}

uint64_t JobHash(const ManifestEntry& entry, absl::string_view arch) {
  // params.dump() is canonical: nlohmann's objects keep their keys sorted.
  // NUL never occurs inside the fields (dump() escapes it), so the
  // separators keep field boundaries unambiguous.
  std::string identity =
      absl::StrCat(entry.name, std::string(1, '\0'), entry.params.dump(),
                   std::string(1, '\0'), arch, std::string(1, '\0'),
                   entry.fast_math ? "fast_math" : "", std::string(1, '\0'),
                   entry.lineinfo ? "lineinfo" : "");
  // Only a pass config that is not the default joins the identity: the
  // jobs without one keep their shards.
  const PassConfig plain;
  if (entry.pass_config.ToString() != plain.ToString()) {
    absl::StrAppend(&identity, std::string(1, '\0'),
                    entry.pass_config.ToString());
  }
  return XXH3_64bits(identity.data(), identity.size());
}

bool Shard::Contains(const ManifestEntry& entry, absl::string_view arch) const {
  return count <= 1 ||
         static_cast<int>(JobHash(entry, arch) % static_cast<uint64_t>(count)) +
                 1 ==
             index;
}

std::string Shard::ToString() const { return absl::StrCat(index, "/", count); }

}  // namespace tessel::tools
