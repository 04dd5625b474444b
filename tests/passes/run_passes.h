// The pass tests' one way to run the scheduler: the passes of
// src/passes/pipeline.cc on a program, up to and including `stop` ("": all
// of them); a failing pipeline fails the calling test.
#ifndef TESSEL_TESTS_PASSES_RUN_PASSES_H_
#define TESSEL_TESTS_PASSES_RUN_PASSES_H_

#include <gtest/gtest.h>

#include <string>

#include "src/passes/pipeline.h"
#include "tessel/target.h"

namespace tessel::passes {

inline LoweringState RunPasses(const ir::Program& p,
                               const std::string& stop = "",
                               PassConfig config = {},
                               Target target = Target::sm90a()) {
  LoweringState st;
  st.program = p;
  st.target = target;
  st.config = config;
  absl::Status s = RunPipeline(st, stop);
  EXPECT_TRUE(s.ok()) << s;
  return st;
}

}  // namespace tessel::passes

#endif  // TESSEL_TESTS_PASSES_RUN_PASSES_H_
