// Needs an sm_90a GPU (ctest label `gpu`): the GEMM sample's tile in
// cluster pairs (PassConfig::cluster_size 2) against the interpreter on the
// same random inputs: pairs along M (B multicast) and along N (A
// multicast), ragged M, N and K, fewer pairs than clusters, several pairs a
// cluster, NN and NT.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "jit/device_buffer.h"
#include "samples/gemm.h"
#include "tessel/compile.h"
#include "tessel/interpret.h"
#include "tests/codegen/gpu_util.h"

namespace tessel {
namespace {

using testing::DeviceTensor;

class ClusterGpu : public ::testing::TestWithParam<
                       std::tuple<int, int, int, samples::GemmLayout>> {
 protected:
  void SetUp() override {
    if (!testing::HaveGpu()) GTEST_SKIP() << "no CUDA device";
    if (Target::detect().arch() != "sm_90a")
      GTEST_SKIP() << "clusters of the TMA pipeline need sm_90a";
  }
};

HostTensor HostOf(const std::vector<float>& v, DataType t,
                  std::vector<int64_t> shape) {
  std::vector<double> d(v.begin(), v.end());
  absl::StatusOr<HostTensor> h = HostTensor::FromDoubles(t, shape, d);
  EXPECT_TRUE(h.ok()) << h.status();
  return std::move(*h);
}

TEST_P(ClusterGpu, MatchesTheInterpreter) {
  const auto [m, n, k, layout] = GetParam();
  const bool nt = layout == samples::GemmLayout::kNT;
  const samples::GemmConfig c{.M = m,
                              .N = n,
                              .K = k,
                              .layout = layout,
                              .tile = samples::DefaultGemmTile(90, f16)};
  absl::StatusOr<Program> p = samples::GemmProgram(c);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> kernel = compile(
      *p, {.target = Target::detect(), .pass_config = {.cluster_size = 2}});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  ASSERT_TRUE(absl::StrContains(kernel->source(), "tl::cluster_sync();"));

  const std::vector<int64_t> a_shape{m, k};
  const std::vector<int64_t> b_shape =
      nt ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
  std::vector<float> a =
      testing::Rounded(testing::Random(size_t(m) * k, 21), f16);
  std::vector<float> b =
      testing::Rounded(testing::Random(size_t(k) * n, 22), f16);
  auto A = DeviceTensor::From(a, f16, a_shape);
  auto B = DeviceTensor::From(b, f16, b_shape);
  auto C =
      DeviceTensor::From(std::vector<float>(size_t(m) * n, 7.0f), f16, {m, n});
  // Twice: the second launch finds the cluster count remembered.
  for (int launch = 0; launch < 2; ++launch) {
    ASSERT_TRUE(kernel->launch({A.view, B.view, C.view}).ok());
    ASSERT_TRUE(jit::SynchronizeStream(nullptr).ok());
  }
  std::vector<float> got = C.ToHost();

  HostTensor ha = HostOf(a, f16, a_shape), hb = HostOf(b, f16, b_shape);
  HostTensor hc(f16, {m, n});
  absl::Status s = interpret(*p, {&ha, &hb, &hc});
  ASSERT_TRUE(s.ok()) << s;
  // f32 sums in another order, rounded to f16: an element off by more
  // than a few f16 ulps is a wrong half, stage or pair.
  int bad = 0;
  for (int64_t i = 0; i < int64_t(m) * n; ++i) {
    const double want = hc.get_flat(i);
    if (std::abs(got[i] - want) > 1e-2 + 1e-2 * std::abs(want) && ++bad < 5) {
      ADD_FAILURE() << "C[" << i / n << ", " << i % n << "] = " << got[i]
                    << ", the interpreter " << want;
    }
  }
  EXPECT_EQ(bad, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, ClusterGpu,
    ::testing::Values(
        // 8 x 4 tiles: 16 pairs along M, K ragged.
        std::tuple{1000, 1000, 1000, samples::GemmLayout::kNN},
        std::tuple{1000, 1000, 1000, samples::GemmLayout::kNT},
        // 9 x 4 tiles: pairs along N (A multicast).
        std::tuple{1100, 1000, 520, samples::GemmLayout::kNN},
        std::tuple{1100, 1000, 520, samples::GemmLayout::kNT},
        // One pair.
        std::tuple{200, 136, 88, samples::GemmLayout::kNN},
        // 512 tiles: 256 pairs, several a cluster.
        std::tuple{4096, 4096, 256, samples::GemmLayout::kNN},
        std::tuple{2048, 4096, 512, samples::GemmLayout::kNT}),
    [](const auto& info) {
      return absl::StrCat(
          std::get<0>(info.param), "x", std::get<1>(info.param), "x",
          std::get<2>(info.param), "_",
          std::string(samples::GemmLayoutName(std::get<3>(info.param))));
    });

}  // namespace
}  // namespace tessel
