// Float64 references of flash attention, forward and backward, with
// grouped-query heads: Q is [B, S, H, D], K and V are [B, S, Hkv, D] with
// Hkv dividing H (query head h reads key / value head h / (H / Hkv)).
//
//   AttentionForward f = ReferenceAttentionForward(q, k, v, causal);
//   // f.o [B, S, H, D], f.lse [B, H, S] (natural log of the softmax's sum,
//   // the scores scaled by 1/sqrt(D))
//   AttentionGrads g = ReferenceAttentionBackward(q, k, v, d_o, causal);
//   // Packed sequences (q [total, H, D], cu_seqlens [B + 1] i32): o
//   // [total, H, D], lse [H, total]; tokens after the last sequence get
//   // `unused`.
//   AttentionForward v = ReferenceVarlenAttentionForward(q, k, v, cu,
//                                                        causal, 3.0);
#ifndef TESSEL_SAMPLES_FLASH_ATTENTION_REFERENCE_H_
#define TESSEL_SAMPLES_FLASH_ATTENTION_REFERENCE_H_

#include "tessel/tessel.h"

namespace tessel::samples {

struct AttentionForward {
  HostTensor o;    // f64 [B, S, H, D]
  HostTensor lse;  // f64 [B, H, S]
};

struct AttentionGrads {
  HostTensor dq;  // f64 [B, S, H, D]
  HostTensor dk;  // f64 [B, S, Hkv, D], summed over each group's heads
  HostTensor dv;  // f64 [B, S, Hkv, D]
};

AttentionForward ReferenceAttentionForward(const HostTensor& q,
                                           const HostTensor& k,
                                           const HostTensor& v, bool causal);

AttentionForward ReferenceVarlenAttentionForward(const HostTensor& q,
                                                 const HostTensor& k,
                                                 const HostTensor& v,
                                                 const HostTensor& cu_seqlens,
                                                 bool causal, double unused);

AttentionGrads ReferenceAttentionBackward(const HostTensor& q,
                                          const HostTensor& k,
                                          const HostTensor& v,
                                          const HostTensor& d_o, bool causal);

// Packed sequences as ReferenceVarlenAttentionForward: each sequence's
// gradients by ReferenceAttentionBackward; tokens of no sequence get
// `unused`.
AttentionGrads ReferenceVarlenAttentionBackward(const HostTensor& q,
                                                const HostTensor& k,
                                                const HostTensor& v,
                                                const HostTensor& d_o,
                                                const HostTensor& cu_seqlens,
                                                bool causal, double unused);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_FLASH_ATTENTION_REFERENCE_H_
