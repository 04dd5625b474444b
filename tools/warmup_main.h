// WarmupMain with its seams open, for tests and for tessel's own binaries.
//
//   tessel::tools::WarmupMainConfig config;
//   config.lower = MyLowering;  // instead of the passes + codegen
//   return tessel::tools::WarmupMainWithConfig(argc, argv, config);
#ifndef TESSEL_TOOLS_WARMUP_MAIN_H_
#define TESSEL_TOOLS_WARMUP_MAIN_H_

#include <functional>

#include "tessel/registry.h"
#include "tools/lowering.h"
#include "tools/warmup_driver.h"

namespace tessel::tools {

struct WarmupMainConfig {
  const KernelRegistry* registry = &KernelRegistry::Global();
  LowerFn lower = LowerWithCodegen;
  std::function<void(const WarmupJob&, absl::string_view stage)>
      child_hook_for_testing;
};

int WarmupMainWithConfig(int argc, char** argv, const WarmupMainConfig& config);

}  // namespace tessel::tools

#endif  // TESSEL_TOOLS_WARMUP_MAIN_H_
