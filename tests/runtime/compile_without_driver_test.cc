// compile() for an explicit target never starts the CUDA driver: a process
// that only compiles (a warmup job, a build step, a CPU-target test) must
// not load libcuda, let alone make a context on a GPU it does not use.
#include <gtest/gtest.h>

#include "jit/driver_api.h"
#include "tessel/compile.h"
#include "tests/codegen/test_programs.h"

namespace tessel {
namespace {

class CompileWithoutDriver : public ::testing::Test {
 protected:
  void SetUp() override {
    jit::internal::ResetDriverForTesting("libtessel-no-such-driver.so.1");
  }
  void TearDown() override { jit::internal::ResetDriverForTesting(""); }
};

TEST_F(CompileWithoutDriver, AnExplicitTargetNeverLoadsTheDriver) {
  for (Target target : {Target::sm80(), Target::sm90a(), Target::cpu()}) {
    absl::StatusOr<CompiledKernel> k =
        compile(testing::Elementwise(1003), {.target = target});
    ASSERT_TRUE(k.ok()) << target.arch() << ": " << k.status();
    EXPECT_FALSE(jit::internal::DriverLoadAttemptedForTesting())
        << target.arch();
  }
}

}  // namespace
}  // namespace tessel
