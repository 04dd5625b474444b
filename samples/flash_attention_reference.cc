#include "samples/flash_attention_reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "samples/sample_util.h"

namespace tessel::samples {
namespace {

// Sizes and flat indexing of the [B, S, heads, D] tensors.
struct Dims {
  explicit Dims(const HostTensor& q, const HostTensor& k)
      : B(q.shape()[0]),
        S(q.shape()[1]),
        H(q.shape()[2]),
        Hkv(k.shape()[2]),
        D(q.shape()[3]) {}
  int64_t q_at(int64_t b, int64_t s, int64_t h) const {
    return ((b * S + s) * H + h) * D;
  }
  int64_t kv_at(int64_t b, int64_t s, int64_t h) const {
    return ((b * S + s) * Hkv + h / (H / Hkv)) * D;
  }
  int64_t B, S, H, Hkv, D;
};

// The probabilities of query row s of head h (keys 0 .. keys-1) and the
// row's log-sum-exp.
double Probabilities(const Dims& d, const std::vector<double>& q,
                     const std::vector<double>& k, int64_t b, int64_t s,
                     int64_t h, bool causal, std::vector<double>& p) {
  const int64_t keys = causal ? s + 1 : d.S;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d.D));
  p.assign(keys, 0);
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t t = 0; t < keys; ++t) {
    double dot = 0;
    for (int64_t e = 0; e < d.D; ++e)
      dot += q[d.q_at(b, s, h) + e] * k[d.kv_at(b, t, h) + e];
    p[t] = dot * scale;
    m = std::max(m, p[t]);
  }
  double sum = 0;
  for (double& x : p) sum += (x = std::exp(x - m));
  for (double& x : p) x /= sum;
  return m + std::log(sum);
}

}  // namespace

AttentionForward ReferenceAttentionForward(const HostTensor& q,
                                           const HostTensor& k,
                                           const HostTensor& v, bool causal) {
  const Dims d(q, k);
  std::vector<double> qv = q.to_doubles(), kv = k.to_doubles(),
                      vv = v.to_doubles();
  std::vector<double> out(d.B * d.S * d.H * d.D), lse(d.B * d.H * d.S);
  ParallelFor(d.B * d.H * d.S, [&](int64_t idx) {
    const int64_t s = idx % d.S, h = (idx / d.S) % d.H, b = idx / (d.S * d.H);
    std::vector<double> p;
    lse[idx] = Probabilities(d, qv, kv, b, s, h, causal, p);
    for (int64_t e = 0; e < d.D; ++e) {
      double o = 0;
      for (size_t t = 0; t < p.size(); ++t)
        o += p[t] * vv[d.kv_at(b, int64_t(t), h) + e];
      out[d.q_at(b, s, h) + e] = o;
    }
  });
  return {F64Tensor(q.shape(), std::move(out)),
          F64Tensor({d.B, d.H, d.S}, std::move(lse))};
}

namespace {

// Tokens [begin, begin + n) of a packed [total, heads, D] tensor as a
// [1, n, heads, D] one.
HostTensor Tokens(const HostTensor& t, int64_t begin, int64_t n) {
  const int64_t row = t.shape()[1] * t.shape()[2];
  HostTensor out(t.dtype(), {1, n, t.shape()[1], t.shape()[2]});
  const size_t bytes = static_cast<size_t>(row * dtype_bytes(t.dtype()));
  std::copy_n(t.data() + begin * bytes, n * bytes, out.data());
  return out;
}

}  // namespace

AttentionForward ReferenceVarlenAttentionForward(const HostTensor& q,
                                                 const HostTensor& k,
                                                 const HostTensor& v,
                                                 const HostTensor& cu_seqlens,
                                                 bool causal, double unused) {
  const int64_t total = q.shape()[0], H = q.shape()[1], D = q.shape()[2];
  std::vector<double> out(total * H * D, unused), lse(H * total, unused);
  for (int64_t b = 0; b + 1 < cu_seqlens.num_elements(); ++b) {
    const int64_t begin = cu_seqlens.get_flat_int(b);
    const int64_t n = cu_seqlens.get_flat_int(b + 1) - begin;
    AttentionForward f = ReferenceAttentionForward(
        Tokens(q, begin, n), Tokens(k, begin, n), Tokens(v, begin, n), causal);
    const std::vector<double> o = f.o.to_doubles(), l = f.lse.to_doubles();
    std::copy(o.begin(), o.end(), out.begin() + begin * H * D);
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t s = 0; s < n; ++s) lse[h * total + begin + s] = l[h * n + s];
    }
  }
  return {F64Tensor(q.shape(), std::move(out)),
          F64Tensor({H, total}, std::move(lse))};
}

AttentionGrads ReferenceAttentionBackward(const HostTensor& q,
                                          const HostTensor& k,
                                          const HostTensor& v,
                                          const HostTensor& d_o, bool causal) {
  const Dims d(q, k);
  std::vector<double> qv = q.to_doubles(), kv = k.to_doubles(),
                      vv = v.to_doubles(), dov = d_o.to_doubles();
  const double scale = 1.0 / std::sqrt(static_cast<double>(d.D));
  std::vector<double> dq(qv.size()), dk(kv.size()), dv(vv.size());
  // One (batch, kv head) per task: the group's query heads add into the
  // same dK / dV rows, so they share a task.
  ParallelFor(d.B * d.Hkv, [&](int64_t idx) {
    const int64_t b = idx / d.Hkv, g = idx % d.Hkv, G = d.H / d.Hkv;
    std::vector<double> p, dp;
    for (int64_t h = g * G; h < (g + 1) * G; ++h) {
      for (int64_t s = 0; s < d.S; ++s) {
        Probabilities(d, qv, kv, b, s, h, causal, p);
        const int64_t keys = static_cast<int64_t>(p.size());
        // dP = dO V^T; Delta = rowsum(dO * O) = sum_t P dP.
        dp.assign(keys, 0);
        double delta = 0;
        for (int64_t t = 0; t < keys; ++t) {
          for (int64_t e = 0; e < d.D; ++e)
            dp[t] += dov[d.q_at(b, s, h) + e] * vv[d.kv_at(b, t, h) + e];
          delta += p[t] * dp[t];
        }
        for (int64_t t = 0; t < keys; ++t) {
          const double ds = p[t] * (dp[t] - delta) * scale;
          for (int64_t e = 0; e < d.D; ++e) {
            dq[d.q_at(b, s, h) + e] += ds * kv[d.kv_at(b, t, h) + e];
            dk[d.kv_at(b, t, h) + e] += ds * qv[d.q_at(b, s, h) + e];
            dv[d.kv_at(b, t, h) + e] += p[t] * dov[d.q_at(b, s, h) + e];
          }
        }
      }
    }
  });
  return {F64Tensor(q.shape(), std::move(dq)),
          F64Tensor(k.shape(), std::move(dk)),
          F64Tensor(v.shape(), std::move(dv))};
}

AttentionGrads ReferenceVarlenAttentionBackward(const HostTensor& q,
                                                const HostTensor& k,
                                                const HostTensor& v,
                                                const HostTensor& d_o,
                                                const HostTensor& cu_seqlens,
                                                bool causal, double unused) {
  const int64_t total = q.shape()[0];
  std::vector<double> dq(q.num_elements(), unused),
      dk(k.num_elements(), unused), dv(v.num_elements(), unused);
  const int64_t q_row = q.num_elements() / std::max<int64_t>(total, 1);
  const int64_t kv_row = k.num_elements() / std::max<int64_t>(total, 1);
  for (int64_t b = 0; b + 1 < cu_seqlens.num_elements(); ++b) {
    const int64_t begin = cu_seqlens.get_flat_int(b);
    const int64_t n = cu_seqlens.get_flat_int(b + 1) - begin;
    if (n == 0) continue;
    AttentionGrads g = ReferenceAttentionBackward(
        Tokens(q, begin, n), Tokens(k, begin, n), Tokens(v, begin, n),
        Tokens(d_o, begin, n), causal);
    const std::vector<double> gq = g.dq.to_doubles(), gk = g.dk.to_doubles(),
                              gv = g.dv.to_doubles();
    std::copy(gq.begin(), gq.end(), dq.begin() + begin * q_row);
    std::copy(gk.begin(), gk.end(), dk.begin() + begin * kv_row);
    std::copy(gv.begin(), gv.end(), dv.begin() + begin * kv_row);
  }
  return {F64Tensor(q.shape(), std::move(dq)),
          F64Tensor(k.shape(), std::move(dk)),
          F64Tensor(v.shape(), std::move(dv))};
}

}  // namespace tessel::samples
