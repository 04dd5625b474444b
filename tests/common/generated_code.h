// What a program becomes for one target without a GPU: the generated CUDA,
// the PTX where the PTX emitter spells the kernel, and a check that both
// compile paths (emitter + ptxas, NVRTC) take it.
#ifndef TESSEL_TESTS_COMMON_GENERATED_CODE_H_
#define TESSEL_TESTS_COMMON_GENERATED_CODE_H_

#include <gtest/gtest.h>

#include <string>

#include "jit/ptx_translation.h"
#include "src/runtime/lower.h"
#include "tessel/compile.h"

namespace tessel::testing {

struct GeneratedCode {
  std::string cuda;
  std::string ptx;  // empty where the kernel goes to NVRTC as CUDA
};

inline GeneratedCode Generate(const Program& program, const Target& target) {
  GeneratedCode code;
  absl::StatusOr<runtime::Lowered> lowered =
      runtime::Lower(program.ir(), {.target = target, .direct_ptx = true});
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  if (!lowered.ok()) return code;
  code.cuda = lowered->generated.source.text;
  absl::StatusOr<jit::CompileInput> input =
      jit::ChooseCompileInput(lowered->generated.source, lowered->jit_options);
  EXPECT_TRUE(input.ok()) << input.status();
  if (input.ok() && input->source.language == jit::SourceLanguage::kPtx)
    code.ptx = input->source.text;
  return code;
}

// The PTX emitter's kernel assembles, and NVRTC compiles the CUDA.
inline void ExpectCompilesBothWays(const Program& program,
                                   const Target& target) {
  absl::StatusOr<CompiledKernel> k = compile(program, {.target = target});
  EXPECT_TRUE(k.ok()) << k.status();
  k = compile(program, {.target = target, .direct_ptx = false});
  EXPECT_TRUE(k.ok()) << k.status();
}

}  // namespace tessel::testing

#endif  // TESSEL_TESTS_COMMON_GENERATED_CODE_H_
