// Checks that the CPU target (the interpreter) and the sm_90a lowering agree
// on a program: both accept it (it runs on the interpreter with zeroed
// arguments, and compiles for sm_90a through NVRTC, no GPU needed), or both
// refuse it with the same Status.
#ifndef TESSEL_TESTS_CODEGEN_AGREEMENT_H_
#define TESSEL_TESTS_CODEGEN_AGREEMENT_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/ir/op.h"
#include "src/ir/program.h"
#include "tessel/compile.h"
#include "tessel/interpret.h"
#include "tessel/tessel.h"

namespace tessel::agreement {

// Runs `p` on the interpreter with zero-filled arguments of its parameters'
// (constant) shapes and compiles it for sm_90a.
inline void ExpectBothTargetsAccept(const absl::StatusOr<Program>& p) {
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<HostTensor> args;
  for (const ir::Buffer& param : p->ir().params) {
    std::vector<int64_t> shape;
    for (const ir::Expr& e : param->shape) shape.push_back(*ir::AsConstInt(e));
    args.emplace_back(param->dtype, shape);
  }
  std::vector<HostTensor*> ptrs;
  for (HostTensor& a : args) ptrs.push_back(&a);
  absl::Status cpu = interpret(*p, ptrs);
  EXPECT_TRUE(cpu.ok()) << p->name() << " on the interpreter: " << cpu;
  absl::StatusOr<CompiledKernel> gpu = compile(*p, {.target = Target::sm90a()});
  EXPECT_TRUE(gpu.ok()) << p->name() << " for sm_90a: " << gpu.status();
}

// Both targets refuse `p`: the same code, a message naming this file.
inline void ExpectBothTargetsRefuse(const absl::StatusOr<Program>& p,
                                    const std::string& why) {
  if (!p.ok()) {  // finish() refuses it, for every target
    EXPECT_THAT(std::string(p.status().message()),
                ::testing::AllOf(::testing::HasSubstr(why),
                                 ::testing::HasSubstr("_test.cc:")));
    return;
  }
  absl::StatusOr<CompiledKernel> cpu = compile(*p, {.target = Target::cpu()});
  absl::StatusOr<CompiledKernel> gpu = compile(*p, {.target = Target::sm90a()});
  EXPECT_FALSE(cpu.ok()) << p->name() << " compiles for the CPU";
  EXPECT_FALSE(gpu.ok()) << p->name() << " compiles for sm_90a";
  if (cpu.ok() || gpu.ok()) return;
  EXPECT_EQ(cpu.status(), gpu.status());
  EXPECT_THAT(std::string(cpu.status().message()), ::testing::HasSubstr(why));
}

}  // namespace tessel::agreement

#endif  // TESSEL_TESTS_CODEGEN_AGREEMENT_H_
