// Where a backward block's sequence lies in its tensors, so one block body
// serves the fixed-length backward ([B, S, heads, D], sequence = batch
// index) and the varlen one ([total, heads, D], sequence b's tokens
// cu_seqlens[b] .. cu_seqlens[b + 1] - 1).
//
//   BackwardRows fixed{.batch = bz, .S = c.S};
//   BackwardRows packed{.batch = bz, .cu_seqlens = cu, .total = total};
//   T::copy(rows.Tile(Q, T::slice(0, 64), head), q);  // the sequence's rows
//
// Packed blocks mask keys and queries past the sequence's end (another
// sequence's tokens) and store their rows by guarded element stores (a tile
// copy clips only at the tensor's edge).
#ifndef TESSEL_SAMPLES_FLASH_ATTENTION_BWD_ROWS_H_
#define TESSEL_SAMPLES_FLASH_ATTENTION_BWD_ROWS_H_

#include "nlohmann/json.hpp"
#include "samples/flash_attention_bwd.h"
#include "tessel/tessel.h"

namespace tessel::samples {

struct BackwardRows {
  Expr batch;         // the sequence
  int S = 0;          // fixed-length: every sequence's length
  Buffer cu_seqlens;  // packed: the offsets [B + 1] i32
  Expr total;         // packed: the token axis's length

  bool packed() const { return cu_seqlens.defined(); }
  // The sequence's length (read where used: the TMA producer sees it too).
  Expr length() const;
  // Rows [rows.start, rows.stop) of the sequence in x, head `head`, every
  // column: x(batch, rows, head, :) or x(start + rows, head, :).
  BufferRef Tile(const Buffer& x, const Slice& rows, const Expr& head) const;
  // Entries [rows) of the forward's log-sum-exp: LSE [B, H, S] or [H,
  // total].
  BufferRef LseRow(const Buffer& lse, const Expr& head,
                   const Slice& rows) const;
  // The sequence's rows [rows) of x, head `head` = fragment (cast to x's
  // type); packed: only the sequence's own rows.
  void Store(const Buffer& fragment, const Buffer& x, const Slice& rows,
             const Expr& head) const;
};

// The preprocess's tensors and the main kernel's, in parameter order.
struct BackwardPreprocessTensors {
  Buffer O, dO, LSE, Delta, LSE2, dQ_acc;
};
struct BackwardMainTensors {
  Buffer Q, K, V, dO, LSE2, Delta, dQ_acc, dK, dV;
};

// Inside the kernel scopes: one preprocess block (query rows bx * 32 ..,
// head `head`) and one main block (key tile bx, key / value head kv_head).
void BackwardPreprocessBlock(const FlashAttentionBackwardConfig& config,
                             const BackwardPreprocessTensors& t,
                             const BackwardRows& rows, const Expr& bx,
                             const Expr& head);
void BackwardMainBlock(const FlashAttentionBackwardConfig& config,
                       const BackwardMainTensors& t, const BackwardRows& rows,
                       const Expr& bx, const Expr& kv_head);

// A registered backward's params (B, S, H, D; with tiles, also the tile and
// schedule switches).
absl::StatusOr<FlashAttentionBackwardConfig> BackwardConfigFromJson(
    const nlohmann::json& json, bool tiles);

// The main kernel's config from a registered backward's params: as above
// with tiles; without tile params, the target's tile (WithDeviceTile).
absl::StatusOr<FlashAttentionBackwardConfig> BackwardMainConfigFromJson(
    const nlohmann::json& json, const Target& target);

// Rows of one preprocess block.
inline constexpr int kBackwardPreprocessRows = 32;

// dQ's gemm untransposed / transposed per the config; an error where the
// config's options do not fit together.
absl::Status CheckBackwardMainConfig(const FlashAttentionBackwardConfig& c);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_FLASH_ATTENTION_BWD_ROWS_H_
