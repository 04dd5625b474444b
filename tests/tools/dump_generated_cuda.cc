// Writes the CUDA source and NVRTC options tessel generates for every kernel
// of a manifest, every seed case, every IR test program and every program
// the interpreter suites run (tests/tools/listed_kernels.h), for each arch,
// one file per (kernel, arch), so that a refactoring of the passes or codegen
// can be checked to change nothing: dump before, dump after, diff -r.
//
//   tessel_dump_generated_cuda MANIFEST OUT_DIR sm_80 sm_90a
//
// Manifest kernels are built for each arch, as tessel-warmup builds them
// (their factories may pick tiles per target). A kernel that fails to lower
// gets its file all the same, holding the status text, and the dump goes on.
// The prelude headers are written once under OUT_DIR/headers/; where a
// kernel's copy differs from the first one written (each kernel gets its own
// tessel_prelude.cuh, src/codegen/prelude_subset.h), that copy is
// headers/<header>.<kernel>.<arch>. Where the PTX emitter spells a kernel,
// its PTX goes beside the CUDA as <kernel>.<arch>.ptx (what a cache miss
// hands to ptxas). Run through tools/dump_generated_cuda.sh.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jit/nvrtc.h"
#include "tests/tools/generated_code.h"
#include "tests/tools/listed_kernels.h"

namespace {

namespace fs = std::filesystem;
using tessel::listing::ListedKernel;

// The CUDA text; `ptx` gets the PTX translation where there is one; the
// kernel's headers go into `headers`.
std::string Dump(const ListedKernel& k, const std::string& arch,
                 std::map<std::string, std::string>& headers,
                 std::string& ptx) {
  tessel::listing::GeneratedCode g = tessel::listing::GenerateCode(k, arch);
  ptx = g.ptx;
  for (const tessel::jit::CudaHeader& h : g.headers) {
    auto [it, inserted] = headers.emplace(h.name, h.content);
    if (!inserted && it->second != h.content) {
      headers.emplace(absl::StrCat(h.name, ".", k.name, ".", arch), h.content);
    }
  }
  return g.cuda;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s MANIFEST OUT_DIR ARCH...\n", argv[0]);
    return 2;
  }
  const absl::StatusOr<std::vector<ListedKernel>> kernels =
      tessel::listing::ListedKernelsOfManifest(argv[1]);
  if (!kernels.ok()) {
    std::fprintf(stderr, "%s\n", kernels.status().ToString().c_str());
    return 2;
  }

  const fs::path out = argv[2];
  fs::create_directories(out / "headers");
  std::map<std::string, std::string> headers;
  int failed = 0;
  for (const ListedKernel& k : *kernels) {
    for (int a = 3; a < argc; ++a) {
      std::string ptx;
      std::string text = Dump(k, argv[a], headers, ptx);
      if (!text.starts_with("// entry: ")) ++failed;
      const std::string base = absl::StrCat(k.name, ".", argv[a]);
      std::ofstream(out / (base + ".cu"), std::ios::binary) << text;
      if (!ptx.empty())
        std::ofstream(out / (base + ".ptx"), std::ios::binary) << ptx;
    }
  }
  for (const auto& [name, content] : headers) {
    std::ofstream(out / "headers" / name, std::ios::binary) << content;
  }
  std::printf("%zu kernels x %d archs, %d failed to lower, written to %s\n",
              kernels->size(), argc - 3, failed, argv[2]);
  return 0;
}
