#include "tessel/registry.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/registry/test_kernel.h"

namespace tessel {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;

absl::StatusOr<Program> MakeScale(const json& j) {
  KernelParams params(j);
  absl::StatusOr<int64_t> n = params.IntInRange("N", 1, 1 << 20);
  if (!n.ok()) return n.status();
  absl::StatusOr<double> scale = params.Number("scale", 2.0);
  if (!scale.ok()) return scale.status();
  if (absl::Status s = params.CheckAllUsed(); !s.ok()) return s;
  return testing::ScaleProgram("scale", static_cast<int>(*n),
                               static_cast<float>(*scale));
}

TEST(KernelRegistryTest, BuildsARegisteredKernelFromJson) {
  KernelRegistry registry;
  ASSERT_TRUE(registry.Register("scale", MakeScale).ok());
  EXPECT_TRUE(registry.Contains("scale"));
  absl::StatusOr<Program> p = registry.Build("scale", {{"N", 1024}});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name(), "scale");
  absl::StatusOr<Program> direct = testing::ScaleProgram("scale", 1024, 2);
  ASSERT_TRUE(direct.ok());
  EXPECT_TRUE(*p == *direct);
  // Different parameters, a different program.
  absl::StatusOr<Program> other = registry.Build("scale", {{"N", 2048}});
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(*p == *other);
}

// A factory that takes the target sizes its tiles for it; Build() without
// one builds for sm_90a, and an invalid target is its Status.
TEST(KernelRegistryTest, FactoriesGetTheTarget) {
  KernelRegistry registry;
  ASSERT_TRUE(registry
                  .Register("per_arch",
                            [](const json& j, const Target& target)
                                -> absl::StatusOr<Program> {
                              return testing::ScaleProgram(
                                  absl::StrCat("scale_", target.arch()),
                                  target.sm() >= 90 ? 256 : 128, 1);
                            })
                  .ok());
  absl::StatusOr<Program> p80 = registry.Build("per_arch", {}, Target::sm80());
  ASSERT_TRUE(p80.ok()) << p80.status();
  EXPECT_EQ(p80->name(), "scale_sm_80");
  absl::StatusOr<Program> p90 = registry.Build("per_arch", {});
  ASSERT_TRUE(p90.ok()) << p90.status();
  EXPECT_EQ(p90->name(), "scale_sm_90a");
  EXPECT_THAT(
      registry.Build("per_arch", {}, Target::cuda("hopper")).status().message(),
      HasSubstr("\"hopper\" is not an sm_XY arch"));
  // A plain factory builds the same for every target.
  ASSERT_TRUE(registry.Register("scale", MakeScale).ok());
  absl::StatusOr<Program> a =
      registry.Build("scale", {{"N", 64}}, Target::sm80());
  absl::StatusOr<Program> b = registry.Build("scale", {{"N", 64}});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(*a == *b);
}

// What a factory uses to fall back to fewer stages: the planner's verdict.
TEST(KernelRegistryTest, CheckSharedMemoryFitsAsksThePlanner) {
  absl::StatusOr<Program> p = testing::ScaleProgram("scale", 1024, 2);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(CheckSharedMemoryFits(*p, Target::sm80()).ok());
  EXPECT_TRUE(CheckSharedMemoryFits(*p, Target::cpu()).ok());
  EXPECT_FALSE(CheckSharedMemoryFits(*p, Target::cuda("x")).ok());
}

TEST(KernelRegistryTest, UnknownNameListsTheRegisteredOnes) {
  KernelRegistry registry;
  ASSERT_TRUE(registry.Register("scale", MakeScale).ok());
  ASSERT_TRUE(registry.Register("gemm", MakeScale).ok());
  absl::StatusOr<Program> p = registry.Build("scael", json::object());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(p.status().message(),
              HasSubstr("unknown kernel \"scael\"; registered kernels: "
                        "gemm, scale"));
  EXPECT_EQ(registry.Names(), (std::vector<std::string>{"gemm", "scale"}));
}

TEST(KernelRegistryTest, RejectsDuplicatesBadNamesAndEmptyFactories) {
  KernelRegistry registry;
  ASSERT_TRUE(registry.Register("scale", MakeScale).ok());
  EXPECT_EQ(registry.Register("scale", MakeScale).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(registry.Register("has space", MakeScale).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register("", MakeScale).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register("empty", KernelFactory()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(registry.Register("ns::gemm.v2-fp8", MakeScale).ok());
}

TEST(KernelRegistryTest, ParamsMustBeAnObjectNullMeansEmpty) {
  KernelRegistry registry;
  ASSERT_TRUE(registry.Register("scale", MakeScale).ok());
  absl::StatusOr<Program> p = registry.Build("scale", json::array({1, 2}));
  EXPECT_THAT(p.status().message(), HasSubstr("params: expected an object"));
  p = registry.Build("scale", json());
  EXPECT_THAT(p.status().message(),
              HasSubstr("params.N: missing (expected an integer)"));
}

TEST(KernelRegistryTest, FactoryErrorsNameTheParameter) {
  KernelRegistry registry;
  ASSERT_TRUE(registry.Register("scale", MakeScale).ok());
  absl::StatusOr<Program> p = registry.Build("scale", {{"N", "1024"}});
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(),
              HasSubstr("params.N: expected an integer, got \"1024\" "
                        "(string)"));
  p = registry.Build("scale", {{"N", 64}, {"scael", 2}});
  EXPECT_THAT(p.status().message(),
              HasSubstr("params.scael: unknown parameter (known: N, scale)"));
}

// The macro's registrations reach the global registry from an OBJECT
// library and from a static library linked whole (CMakeLists.txt).
TEST(KernelRegistryTest, MacroRegistersFromObjectAndWholeArchiveLibraries) {
  const std::vector<std::string> names = KernelRegistry::Global().Names();
  EXPECT_THAT(names, IsSupersetOf({"object_kernel", "archived_kernel"}));
  absl::StatusOr<Program> p =
      KernelRegistry::Global().Build("archived_kernel", {{"N", 512}});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name(), "archived");
  p = KernelRegistry::Global().Build("object_kernel", {{"N", 512}});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name(), "object");
}

TEST(KernelRegistryTest, DuplicateMacroRegistrationAborts) {
  EXPECT_DEATH(internal::RegisterKernelOrDie("object_kernel", MakeScale),
               "registered twice");
}

}  // namespace
}  // namespace tessel
