// Everything seed_gpu_test.cc does except the launch, without a GPU: each
// seed case's interpreter reference is complete and did something, and the
// program compiles (scheduler, codegen, NVRTC) for sm_90a, the H200's target.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "tessel/compile.h"
#include "tests/codegen/seed_cases.h"

namespace tessel::seed_test {
namespace {

class SeedCpu : public ::testing::TestWithParam<SeedCase> {};

TEST_P(SeedCpu, InterpretsAndCompilesForSm90a) {
  const SeedCase& c = GetParam();
  absl::StatusOr<Program> program = c.make();
  ASSERT_TRUE(program.ok()) << program.status();

  absl::StatusOr<std::vector<HostTensor>> initial = InitialArguments(c);
  ASSERT_TRUE(initial.ok()) << initial.status();
  std::vector<HostTensor> reference = *initial;
  const auto start = std::chrono::steady_clock::now();
  absl::Status s = InterpretInPlace(*program, reference);
  const double ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  ASSERT_TRUE(s.ok()) << s;
  std::printf("%s: interpreter %.0f ms\n", c.name.c_str(), ms);

  for (size_t i = 0; i < c.arguments.size(); ++i) {
    const Argument& a = c.arguments[i];
    const HostTensor& before = (*initial)[i];
    const HostTensor& after = reference[i];
    int64_t changed = 0;
    for (int64_t e = 0; e < after.num_elements(); ++e) {
      changed += after.get_flat(e) != before.get_flat(e);
    }
    if (a.role == Role::kInput) {
      EXPECT_EQ(changed, 0) << a.name << ": the program wrote an input";
    } else if (a.role == Role::kAccumulated) {
      // Every element is added to (each output is covered by the grid), and
      // adding a random nonzero term leaves an f32 unchanged only by chance.
      EXPECT_GT(changed, after.num_elements() * 9 / 10)
          << a.name << ": the interpreter added to few elements";
    }
    // kOutput started as NaN: InterpretInPlace checked that none is left.
  }

  absl::StatusOr<CompiledKernel> k =
      compile(*program, {.target = Target::sm90a()});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_GT(k->cubin_bytes(), 0u);
  EXPECT_EQ(k->arch(), "sm_90a");
}

INSTANTIATE_TEST_SUITE_P(Seeds, SeedCpu, ::testing::ValuesIn(SeedCases()),
                         [](const ::testing::TestParamInfo<SeedCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tessel::seed_test
