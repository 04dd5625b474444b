// Needs an sm_90a GPU (ctest label `gpu`): the GEMM sample's ping-pong
// kernel (PassConfig::pingpong_consumers) against the interpreter on the
// same random inputs, at ragged sizes (edge tiles of both groups, an odd
// number of tiles per block, fewer tiles than SMs) and a tile multiple,
// NN and NT.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/device_buffer.h"
#include "samples/gemm.h"
#include "tessel/compile.h"
#include "tessel/interpret.h"
#include "tests/codegen/gpu_util.h"

namespace tessel {
namespace {

using testing::DeviceTensor;

class PingpongGpu : public ::testing::TestWithParam<
                        std::tuple<int, int, int, samples::GemmLayout>> {
 protected:
  void SetUp() override {
    if (!testing::HaveGpu()) GTEST_SKIP() << "no CUDA device";
    if (Target::detect().arch() != "sm_90a")
      GTEST_SKIP() << "ping-pong needs sm_90a";
  }
};

HostTensor HostOf(const std::vector<float>& v, DataType t,
                  std::vector<int64_t> shape) {
  std::vector<double> d(v.begin(), v.end());
  absl::StatusOr<HostTensor> h = HostTensor::FromDoubles(t, shape, d);
  EXPECT_TRUE(h.ok()) << h.status();
  return std::move(*h);
}

TEST_P(PingpongGpu, MatchesTheInterpreter) {
  const auto [m, n, k, layout] = GetParam();
  const bool nt = layout == samples::GemmLayout::kNT;
  const samples::GemmConfig c{.M = m,
                              .N = n,
                              .K = k,
                              .layout = layout,
                              .tile = samples::PingpongGemmTile(90, f16)};
  absl::StatusOr<Program> p = samples::GemmProgram(c);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> kernel =
      compile(*p, {.target = Target::detect(),
                   .pass_config = {.pingpong_consumers = true}});
  ASSERT_TRUE(kernel.ok()) << kernel.status();

  const std::vector<int64_t> a_shape{m, k};
  const std::vector<int64_t> b_shape =
      nt ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
  std::vector<float> a =
      testing::Rounded(testing::Random(size_t(m) * k, 11), f16);
  std::vector<float> b =
      testing::Rounded(testing::Random(size_t(k) * n, 12), f16);
  auto A = DeviceTensor::From(a, f16, a_shape);
  auto B = DeviceTensor::From(b, f16, b_shape);
  auto C =
      DeviceTensor::From(std::vector<float>(size_t(m) * n, 7.0f), f16, {m, n});
  ASSERT_TRUE(kernel->launch({A.view, B.view, C.view}).ok());
  ASSERT_TRUE(jit::SynchronizeStream(nullptr).ok());
  std::vector<float> got = C.ToHost();

  HostTensor ha = HostOf(a, f16, a_shape), hb = HostOf(b, f16, b_shape);
  HostTensor hc(f16, {m, n});
  absl::Status s = interpret(*p, {&ha, &hb, &hc});
  ASSERT_TRUE(s.ok()) << s;
  // f32 sums in another order, rounded to f16: an element off by more
  // than a few f16 ulps is a wrong tile, stage or group.
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
    Sizes, PingpongGpu,
    ::testing::Values(
        std::tuple{1000, 1000, 1000, samples::GemmLayout::kNN},
        std::tuple{1000, 1000, 1000, samples::GemmLayout::kNT},
        std::tuple{200, 136, 88, samples::GemmLayout::kNN},
        // 17 x 18 tiles of 128: up to 3 a block on 132 SMs, K ragged.
        std::tuple{2100, 2200, 200, samples::GemmLayout::kNT},
        // 512 tiles: 3 or 4 a block, both groups turning twice.
        std::tuple{2048, 4096, 256, samples::GemmLayout::kNN},
        std::tuple{2048, 2048, 512, samples::GemmLayout::kNT}),
    [](const auto& info) {
      return absl::StrCat(
          std::get<0>(info.param), "x", std::get<1>(info.param), "x",
          std::get<2>(info.param), "_",
          std::string(samples::GemmLayoutName(std::get<3>(info.param))));
    });

}  // namespace
}  // namespace tessel
