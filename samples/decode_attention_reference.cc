#include "samples/decode_attention_reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "samples/sample_util.h"

namespace tessel::samples {

HostTensor ReferenceDecodeAttention(const HostTensor& q,
                                    const HostTensor& k_cache,
                                    const HostTensor& v_cache,
                                    const HostTensor& block_table,
                                    const HostTensor& seq_lens, double k_scale,
                                    double v_scale) {
  const int64_t B = q.shape()[0], Tq = q.shape()[1], H = q.shape()[2],
                D = q.shape()[3];
  const int64_t P = k_cache.shape()[1], Hkv = k_cache.shape()[2];
  const int64_t max_pages = block_table.shape()[1], group = H / Hkv;
  const std::vector<double> qv = q.to_doubles(), kv = k_cache.to_doubles(),
                            vv = v_cache.to_doubles();
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  std::vector<double> out(B * Tq * H * D, 0.0);
  ParallelFor(B * Tq * H, [&](int64_t idx) {
    const int64_t h = idx % H, t = (idx / H) % Tq, b = idx / (H * Tq);
    const int64_t len = seq_lens.get_flat_int(b);
    // Keys 0 .. len - Tq + t.
    const int64_t keys = std::min(len, len - Tq + t + 1);
    if (keys <= 0) return;        // sees no key: zeros
    auto at = [&](int64_t key) {  // flat index of key's row for head h
      const int64_t page = block_table.get_flat_int(b * max_pages + key / P);
      return ((page * P + key % P) * Hkv + h / group) * D;
    };
    const double* qrow = &qv[idx * D];
    std::vector<double> p(keys);
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < keys; ++j) {
      double dot = 0;
      const int64_t k0 = at(j);
      for (int64_t e = 0; e < D; ++e) dot += qrow[e] * kv[k0 + e] * k_scale;
      p[j] = dot * scale;
      m = std::max(m, p[j]);
    }
    double sum = 0;
    for (double& x : p) sum += (x = std::exp(x - m));
    double* orow = &out[idx * D];
    for (int64_t j = 0; j < keys; ++j) {
      const int64_t v0 = at(j);
      const double w = p[j] / sum * v_scale;
      for (int64_t e = 0; e < D; ++e) orow[e] += w * vv[v0 + e];
    }
  });
  return F64Tensor(q.shape(), std::move(out));
}

}  // namespace tessel::samples
