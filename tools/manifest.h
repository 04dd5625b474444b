// The warmup manifest: which kernels, with which parameters, to compile ahead
// of time. Format and JSON schema: docs/warmup.md, docs/kernels.schema.json.
//
//   ASSIGN_OR_RETURN(tessel::tools::Manifest manifest,
//                    tessel::tools::LoadManifest("samples/kernels.json"));
//   ASSIGN_OR_RETURN(std::vector<tessel::Program> programs,
//                    tessel::tools::BuildManifestPrograms(
//                        manifest, tessel::KernelRegistry::Global()));
//
// Every error names the JSON path it is about ("kernels[3].params.M:
// expected an integer, got \"4096\" (string)"); all errors of a file are
// reported at once, one per line.
#ifndef TESSEL_TOOLS_MANIFEST_H_
#define TESSEL_TOOLS_MANIFEST_H_

#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tessel/program.h"
#include "tessel/registry.h"

namespace tessel::tools {

inline constexpr int kManifestVersion = 1;

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

  // "kernels[3]"
  std::string Path() const;
  // "gemm {"K":4096,"M":4096,"N":4096}"
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

// `origin` names the text in syntax errors ("kernels.json:3:14: ...").
absl::StatusOr<Manifest> ParseManifest(absl::string_view text,
                                       absl::string_view origin = "manifest");
absl::StatusOr<Manifest> LoadManifest(const std::string& path);

// Builds every entry's Program with the registry's factories: unknown names
// (listing the registered ones) and bad parameters, with their paths.
absl::StatusOr<std::vector<Program>> BuildManifestPrograms(
    const Manifest& manifest, const KernelRegistry& registry);

}  // namespace tessel::tools

#endif  // TESSEL_TOOLS_MANIFEST_H_
