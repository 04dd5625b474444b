// What a stored autotuning result is keyed by, and the file it lives in.
//
//   tessel::autotuner::TuneKey key = tessel::autotuner::MakeTuneKey(
//       request, configs, {.name = "NVIDIA H200", .arch = "sm_90a"},
//       options.compile);
//   std::string file = key.FileName();  // "gemm_NN.1f3a...c0.json"
//
// Every field counts: another shape, dtype, device, arch, tessel version,
// compile switch or config space is another key, so a winner is never
// reused where it was not measured.
#ifndef TESSEL_SRC_AUTOTUNE_TUNE_KEY_H_
#define TESSEL_SRC_AUTOTUNE_TUNE_KEY_H_

#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tessel/autotune.h"

namespace tessel::autotuner {

// The device candidates are timed on.
struct DeviceIdentity {
  std::string name;  // "NVIDIA H200"
  std::string arch;  // "sm_90a"
};

struct TuneKey {
  std::string kernel;
  std::vector<std::string> tensors;  // "f16[512,512]", one per arg
  std::string extra;                 // TuneRequest::key_extra
  std::string device;
  std::string arch;
  std::string tessel_version;
  std::string compile;   // the compile switches that shape the code
  nlohmann::json space;  // the configs, in order (an array)

  // XXH3-128 of every field, as 32 lowercase hex digits.
  std::string Hash() const;
  // "<kernel, [A-Za-z0-9_-] only, at most 48>.<Hash()>.json"
  std::string FileName() const;
  // Every field, as stored in the file (the hash is the file's "key").
  nlohmann::json Fields() const;
};

TuneKey MakeTuneKey(const TuneRequest& request,
                    const std::vector<TuneConfig>& configs,
                    const DeviceIdentity& device,
                    const CompileOptions& compile);

}  // namespace tessel::autotuner

#endif  // TESSEL_SRC_AUTOTUNE_TUNE_KEY_H_
