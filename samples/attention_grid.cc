#include "samples/attention_grid.h"

#include <algorithm>

namespace tessel::samples {
namespace {

// Blocks of one group: about a wave of one-block-an-SM kernels (132 SMs on
// an H200).
constexpr int kGroupBlocks = 128;
constexpr int kMaxGroup = 8;
constexpr int kMaxGridZ = 65535;  // and y's

}  // namespace

AttentionGrid::AttentionGrid(int tiles, int heads, int batch,
                             bool longest_first)
    : tiles_(tiles), heads_(heads), batch_(batch) {
  // The tiles move to y, whose limit is z's.
  if (!longest_first || tiles <= 1 || tiles > kMaxGridZ) return;
  const int64_t blocks = static_cast<int64_t>(heads) * batch;
  int group = std::clamp(kGroupBlocks / tiles, 1, kMaxGroup);
  while (blocks % group != 0) --group;
  if (blocks / group <= kMaxGridZ) group_ = group;
}

AttentionBlock AttentionGrid::Block(const Expr& x, const Expr& y,
                                    const Expr& z) const {
  if (group_ == 0) return {.rank = x, .head = y, .batch = z};
  const Expr head_batch = group_ == 1 ? z : z * group_ + x;
  return {.rank = y, .head = head_batch % heads_, .batch = head_batch / heads_};
}

}  // namespace tessel::samples
