// The pass tests' one way to run the scheduler: the passes of
// src/passes/pass_list.cc on a program, up to and including `stop` ("": all
// of them); a failing pass fails the calling test. ExpectGolden compares
// a dump with its golden file.
#ifndef TESSEL_TESTS_PASSES_RUN_PASSES_H_
#define TESSEL_TESTS_PASSES_RUN_PASSES_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "src/passes/pass_list.h"
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
  absl::Status s = RunPasses(st, stop);
  EXPECT_TRUE(s.ok()) << s;
  return st;
}

// Compares text with tests/passes/golden/<name>.txt (TESSEL_SOURCE_DIR);
// TESSEL_UPDATE_GOLDEN=1 rewrites the file instead.
inline void ExpectGolden(const std::string& name, const std::string& text) {
  const char* root = std::getenv("TESSEL_SOURCE_DIR");
  std::string dir = std::string(root ? root : ".") + "/tests/passes/golden/";
  std::string path = dir + name + ".txt";
  if (std::getenv("TESSEL_UPDATE_GOLDEN")) {
    std::ofstream(path) << text;
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing golden " << path
                         << " (run with TESSEL_UPDATE_GOLDEN=1)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(text, want.str()) << "golden " << path;
}

}  // namespace tessel::passes

#endif  // TESSEL_TESTS_PASSES_RUN_PASSES_H_
