#include "tools/cli.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "jit/nvrtc.h"
#include "tessel/version.h"

namespace tessel::tools {
namespace {

// Edits from a to b: insertions, deletions, substitutions and swaps of
// neighbours ("lsit" is one from "list"): the optimal string alignment
// distance.
size_t Distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1,
                                     std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string DidYouMean(std::string_view word,
                       const std::vector<std::string>& known) {
  const std::string* best = nullptr;
  size_t best_distance = 0;
  for (const std::string& k : known) {
    const size_t d = Distance(word, k);
    if (best == nullptr || d < best_distance) {
      best = &k;
      best_distance = d;
    }
  }
  // Close enough to be a typo: at most a third of the word, and 3 edits.
  if (best == nullptr || best_distance == 0 || best_distance > 3 ||
      best_distance * 3 > std::max(word.size(), best->size())) {
    return "";
  }
  return absl::StrCat(" (did you mean \"", *best, "\"?)");
}

std::string VersionLine(std::string_view tool) {
  return absl::StrCat(std::string(tool), " ", std::string(version()),
                      " (NVRTC ", jit::NvrtcVersion(), ")");
}

}  // namespace tessel::tools
