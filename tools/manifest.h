// The warmup manifest: which kernels, with which parameters, to compile ahead
// of time. Format and JSON schema: docs/warmup.md, docs/kernels.schema.json.
//
//   ASSIGN_OR_RETURN(tessel::tools::Manifest manifest,
//                    tessel::tools::LoadManifest("samples/kernels.json"));
//   ASSIGN_OR_RETURN(tessel::tools::ManifestPrograms programs,
//                    tessel::tools::BuildManifestPrograms(
//                        manifest, tessel::KernelRegistry::Global(),
//                        {"sm_90a", "sm_80"}));
//   programs[3].at("sm_80");   // entry 3's program, its tiles sized for sm_80
//
// Every error names the JSON path it is about ("kernels[3].params.M:
// expected an integer, got \"4096\" (string)"); all errors of a file are
// reported at once, one per line. Hostile text is an error, never a crash:
// nesting deeper than 64, duplicate keys, numbers no double holds, archs the
// toolkit cannot compile for, files over 64 MiB and directories.
#ifndef TESSEL_TOOLS_MANIFEST_H_
#define TESSEL_TOOLS_MANIFEST_H_

#include <map>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tessel/program.h"
#include "tessel/registry.h"
#include "tessel/target.h"

namespace tessel::tools {

inline constexpr int kManifestVersion = 1;
inline constexpr size_t kMaxManifestBytes = size_t{64} << 20;

struct ManifestEntry {
  int index = 0;  // position in "kernels"
  std::string name;
  nlohmann::json params = nlohmann::json::object();
  // Archs this entry is limited to (empty: every --arch); e.g. a wgmma
  // kernel listed for "sm_90a" only.
  std::vector<std::string> archs;
  // NVRTC flags the application compiles with: they are part of the key.
  bool fast_math = false;
  bool lineinfo = false;
  // The pass config the application compiles with (part of the key too):
  // "pass_config": {"bulk_reduce_atomics": true, "cluster_size": 2}, the
  // fields of tessel::PassConfig by name (ManifestPassConfigFields()).
  PassConfig pass_config;

  // "kernels[3]"
  std::string Path() const;
  // "gemm {"K":4096,"M":4096,"N":4096}", then the pass config where it is
  // not the default: " [bulk_reduce_atomics=1]"
  std::string Describe() const;
};

struct Manifest {
  int version = kManifestVersion;
  std::vector<ManifestEntry> kernels;
};

// The field names the parser accepts (docs/kernels.schema.json lists the
// same; a test keeps them in step).
const std::vector<std::string>& ManifestTopLevelFields();
const std::vector<std::string>& ManifestEntryFields();
const std::vector<std::string>& ManifestPassConfigFields();

// OK for an arch tessel can compile for here: "sm_<NN>[a|f]", at least sm_80
// (tessel's CUDA path) and one this NVRTC supports.
absl::Status CheckSupportedArch(absl::string_view arch);

// `origin` names the text in syntax errors ("kernels.json:3:14: ...").
absl::StatusOr<Manifest> ParseManifest(absl::string_view text,
                                       absl::string_view origin = "manifest");
absl::StatusOr<Manifest> LoadManifest(const std::string& path);

// Each entry's Program for each arch it is built for (the factory sizes its
// tiles per target), by arch: programs[i].at("sm_80").
using ManifestPrograms = std::vector<std::map<std::string, Program>>;

// Builds every entry for each of `archs` that the entry allows, with the
// registry's factories: unknown names (listing the registered ones) and bad
// parameters, with their paths (and the arch, when only one arch fails).
absl::StatusOr<ManifestPrograms> BuildManifestPrograms(
    const Manifest& manifest, const KernelRegistry& registry,
    const std::vector<std::string>& archs);

}  // namespace tessel::tools

#endif  // TESSEL_TOOLS_MANIFEST_H_
