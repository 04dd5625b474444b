// Linear attention seed programs against float64 references of the math:
//   o_t  = scale * sum_{s <= t} (q_t . k_s) v_s
//   dq_t = scale * sum_{s <= t} (do_t . v_s) k_s
//   dk_s = scale * sum_{t >= s} (v_s . do_t) q_t
//   dv_s = scale * sum_{t >= s} (k_s . q_t) do_t
// with scale = 1/sqrt(DK), as the seed programs apply it (to q, or to dq).
#include <cmath>

#include "gtest/gtest.h"
#include "src/interp/interpreter.h"
#include "tessel/interpret.h"
#include "tessel/tessel.h"
#include "tests/dsl/seed_programs.h"
#include "tests/interp/test_util.h"

namespace tessel {
namespace {

using interp_test::ExpectBitwiseEqual;
using interp_test::ExpectClose;
using interp_test::RandomTensor;

// [B, S, H, D] tensors.
struct Dims {
  int B, S, H, DK, DV;
};

int64_t At(const Dims& d, int64_t b, int64_t s, int64_t h, int64_t i,
           int64_t D) {
  return ((b * d.S + s) * d.H + h) * D + i;
}

// x_s1 . y_s2, and the sum of the magnitudes of its terms.
double Dot(const HostTensor& x, const HostTensor& y, const Dims& d, int64_t b,
           int64_t s1, int64_t s2, int64_t h, int64_t D, double* magnitude) {
  double acc = 0;
  *magnitude = 0;
  for (int64_t i = 0; i < D; ++i) {
    const double p =
        x.get_flat(At(d, b, s1, h, i, D)) * y.get_flat(At(d, b, s2, h, i, D));
    acc += p;
    *magnitude += std::fabs(p);
  }
  return acc;
}

// out[b, t, h, :] = scale * sum over s in range(t) of (x_t . y_s) z_s; also
// the same sum over the magnitudes of every product (the scale of the
// rounding error: the kernels round partial dot products of each DK or DV
// tile to f16, which may cancel in the sum).
void CausalSum(const HostTensor& x, const HostTensor& y, const HostTensor& z,
               const Dims& d, int64_t DXY, int64_t DZ, bool upper, double scale,
               std::vector<double>* out, std::vector<double>* mag) {
  out->assign(d.B * d.S * d.H * DZ, 0.0);
  mag->assign(out->size(), 0.0);
  for (int64_t b = 0; b < d.B; ++b) {
    for (int64_t h = 0; h < d.H; ++h) {
      for (int64_t t = 0; t < d.S; ++t) {
        for (int64_t s = 0; s < d.S; ++s) {
          if (upper ? s < t : s > t) continue;
          double w_mag;
          const double w = scale * Dot(x, y, d, b, t, s, h, DXY, &w_mag);
          for (int64_t i = 0; i < DZ; ++i) {
            const double v = z.get_flat(At(d, b, s, h, i, DZ));
            (*out)[At(d, b, t, h, i, DZ)] += w * v;
            (*mag)[At(d, b, t, h, i, DZ)] += scale * w_mag * std::fabs(v);
          }
        }
      }
    }
  }
}

// The kernels round q*scale, the masked scores and the running state to f16
// on their way through shared memory: a few f16 ulps of the magnitudes.
constexpr double kRtol = 4e-3;

TEST(LinearAttentionTest, ForwardMatchesFloat64) {
  // Ragged sequence (100 = 64 + 36), two DK tiles adding into O with atomics
  // and two DV tiles.
  const Dims d{2, 100, 2, 128, 128};
  absl::StatusOr<Program> prog =
      seed::LinearAttentionForward(d.B, d.S, d.H, d.DK, d.DV);
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor q = RandomTensor(f16, {d.B, d.S, d.H, d.DK}, 21);
  HostTensor k = RandomTensor(f16, {d.B, d.S, d.H, d.DK}, 22);
  HostTensor v = RandomTensor(f16, {d.B, d.S, d.H, d.DV}, 23);
  HostTensor o(f32, {d.B, d.S, d.H, d.DV});
  absl::Status s = interpret(*prog, {&q, &k, &v, &o});
  ASSERT_TRUE(s.ok()) << s;
  std::vector<double> want, mag;
  CausalSum(q, k, v, d, d.DK, d.DV, /*upper=*/false, 1.0 / std::sqrt(d.DK),
            &want, &mag);
  ExpectClose(o, want, kRtol, 1e-6, mag);
}

TEST(LinearAttentionTest, BackwardGradientsMatchFloat64) {
  const Dims d{1, 100, 2, 128, 192};  // 3 DV tiles x 2 DK tiles
  absl::StatusOr<Program> prog =
      seed::LinearAttentionBackward(d.B, d.S, d.H, d.DK, d.DV);
  ASSERT_TRUE(prog.ok()) << prog.status();
  HostTensor q = RandomTensor(f16, {d.B, d.S, d.H, d.DK}, 31);
  HostTensor k = RandomTensor(f16, {d.B, d.S, d.H, d.DK}, 32);
  HostTensor v = RandomTensor(f16, {d.B, d.S, d.H, d.DV}, 33);
  HostTensor d_o = RandomTensor(f16, {d.B, d.S, d.H, d.DV}, 34);
  HostTensor dq(f32, {d.B, d.S, d.H, d.DK}), dk(f32, {d.B, d.S, d.H, d.DK}),
      dv(f32, {d.B, d.S, d.H, d.DV});
  absl::Status s = interp::Run(prog->ir(), {&q, &k, &v, &d_o, &dq, &dk, &dv},
                               {.num_threads = 1});
  ASSERT_TRUE(s.ok()) << s;
  const double scale = 1.0 / std::sqrt(d.DK);
  std::vector<double> want, mag;
  CausalSum(d_o, v, k, d, d.DV, d.DK, /*upper=*/false, scale, &want, &mag);
  ExpectClose(dq, want, kRtol, 1e-6, mag);
  CausalSum(v, d_o, q, d, d.DV, d.DK, /*upper=*/true, scale, &want, &mag);
  ExpectClose(dk, want, kRtol, 1e-6, mag);
  CausalSum(k, q, d_o, d, d.DK, d.DV, /*upper=*/true, scale, &want, &mag);
  ExpectClose(dv, want, kRtol, 1e-6, mag);

  // Several DV tiles add into dQ and dK, several DK tiles into dV: a threaded
  // run gives the same bits.
  HostTensor dq2(f32, dq.shape()), dk2(f32, dk.shape()), dv2(f32, dv.shape());
  s = interp::Run(prog->ir(), {&q, &k, &v, &d_o, &dq2, &dk2, &dv2},
                  {.num_threads = 3});
  ASSERT_TRUE(s.ok()) << s;
  ExpectBitwiseEqual(dq, dq2);
  ExpectBitwiseEqual(dk, dk2);
  ExpectBitwiseEqual(dv, dv2);
}

}  // namespace
}  // namespace tessel
