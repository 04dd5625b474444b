// Float64 reference of paged decode attention (decode_attention.h): for
// each sequence b, query token t and head h, softmax(q k^T / sqrt(D)) v over
// the keys 0 .. L_b - q_len + t of the sequence, gathered from the paged
// cache through the block table (fp8 caches dequantized by kv_scale). A
// query that sees no key gives zeros.
//
//   HostTensor o = ReferenceDecodeAttention(q, k_cache, v_cache, table,
//                                           lens, /*k_scale=*/1, 1);
//   // o: f64 [B, q_len, H, D]
#ifndef TESSEL_SAMPLES_DECODE_ATTENTION_REFERENCE_H_
#define TESSEL_SAMPLES_DECODE_ATTENTION_REFERENCE_H_

#include "tessel/tessel.h"

namespace tessel::samples {

HostTensor ReferenceDecodeAttention(const HostTensor& q,
                                    const HostTensor& k_cache,
                                    const HostTensor& v_cache,
                                    const HostTensor& block_table,
                                    const HostTensor& seq_lens, double k_scale,
                                    double v_scale);

}  // namespace tessel::samples

#endif  // TESSEL_SAMPLES_DECODE_ATTENTION_REFERENCE_H_
