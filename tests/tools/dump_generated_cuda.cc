// Writes the CUDA source and NVRTC options tessel generates for every kernel
// of a manifest, every seed case and every IR test program, for each arch,
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
// headers/<header>.<kernel>.<arch>. Run through tools/dump_generated_cuda.sh.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jit/nvrtc.h"
#include "src/runtime/lower.h"
#include "tessel/compile.h"
#include "tessel/registry.h"
#include "tests/codegen/seed_cases.h"
#include "tests/codegen/test_programs.h"
#include "tools/manifest.h"

namespace {

namespace fs = std::filesystem;

using ProgramOf =
    std::function<absl::StatusOr<tessel::ir::Program>(const std::string& arch)>;

struct Named {
  std::string name;   // the file name's stem: letters, digits, '_', '.'
  ProgramOf program;  // built per arch, as tessel-warmup builds them
  tessel::CompileOptions options;
};

ProgramOf Fixed(absl::StatusOr<tessel::ir::Program> program) {
  return [program](const std::string&) { return program; };
}

absl::StatusOr<tessel::ir::Program> IrOf(
    absl::StatusOr<tessel::Program> program) {
  if (!program.ok()) return program.status();
  return program->ir();
}

std::vector<Named> TestPrograms() {
  namespace t = tessel::testing;
  std::vector<Named> out;
  auto add = [&](std::string name, tessel::ir::Program p) {
    out.push_back({"prog_" + name, Fixed(std::move(p)), {}});
  };
  add("gemm", t::Gemm({}));
  add("gemm_bf16_panel",
      t::Gemm({.dtype = tessel::DataType::kBF16, .panel = 4}));
  add("gemm_symbolic", t::Gemm({.symbolic = true}));
  add("gemm_transpose_b", t::Gemm({.transpose_b = true}));
  add("wgmma_gemm", t::Gemm(t::WgmmaGemm(false)));
  add("wgmma_gemm_transpose_b", t::Gemm(t::WgmmaGemm(true)));
  add("wgmma_two_warpgroups", t::Gemm(t::WgmmaTwoWarpgroupsGemm()));
  add("elementwise", t::Elementwise(1000));
  add("copy_round_trip", t::CopyRoundTrip(100, 70));
  add("reverse_tile", t::ReverseTile(3));
  add("double_buffered", t::DoubleBuffered(4));
  add("atomic_accumulate", t::AtomicAccumulate(4, 64));
  add("gemm_row_max", t::GemmRowMax(128, 128, 64));
  add("reduce_and_cumsum", t::ReduceAndCumsum());
  add("mbarrier_pipeline", t::MbarrierPipeline(4));
  return out;
}

std::string Dump(const Named& k, const std::string& arch,
                 std::map<std::string, std::string>& headers) {
  absl::StatusOr<tessel::ir::Program> program = k.program(arch);
  if (!program.ok()) {
    return absl::StrCat("build failed: ", program.status().ToString(), "\n");
  }
  tessel::CompileOptions options = k.options;
  options.target = tessel::Target::cuda(arch);
  absl::StatusOr<tessel::runtime::Lowered> lowered =
      tessel::runtime::Lower(*program, options);
  if (!lowered.ok()) {
    return absl::StrCat("lowering failed: ", lowered.status().ToString(), "\n");
  }
  const tessel::jit::CudaSource& source = lowered->generated.source;
  std::vector<std::string> header_names;
  for (const tessel::jit::CudaHeader& h : source.headers) {
    header_names.push_back(h.name);
    auto [it, inserted] = headers.emplace(h.name, h.content);
    if (!inserted && it->second != h.content) {
      headers.emplace(absl::StrCat(h.name, ".", k.name, ".", arch), h.content);
    }
  }
  return absl::StrCat(
      "// entry: ", source.entry, "\n// options: ",
      absl::StrJoin(tessel::jit::NormalizedOptions(lowered->jit_options, arch),
                    " "),
      "\n// headers: ", absl::StrJoin(header_names, " "), "\n", source.text);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s MANIFEST OUT_DIR ARCH...\n", argv[0]);
    return 2;
  }
  absl::StatusOr<tessel::tools::Manifest> manifest =
      tessel::tools::LoadManifest(argv[1]);
  if (!manifest.ok()) {
    std::fprintf(stderr, "%s\n", manifest.status().ToString().c_str());
    return 2;
  }
  std::vector<Named> kernels;
  for (const tessel::tools::ManifestEntry& e : manifest->kernels) {
    tessel::CompileOptions options;
    options.fast_math = e.fast_math;
    options.lineinfo = e.lineinfo;
    ProgramOf build = [e](const std::string& arch) {
      return IrOf(tessel::KernelRegistry::Global().Build(
          e.name, e.params, tessel::Target::cuda(arch)));
    };
    kernels.push_back(
        {absl::StrCat("manifest_", e.index, "_", e.name), build, options});
  }
  for (const tessel::seed_test::SeedCase& c : tessel::seed_test::SeedCases()) {
    kernels.push_back({"seed_" + c.name, Fixed(IrOf(c.make())), {}});
  }
  for (Named& k : TestPrograms()) kernels.push_back(std::move(k));

  const fs::path out = argv[2];
  fs::create_directories(out / "headers");
  std::map<std::string, std::string> headers;
  int failed = 0;
  for (const Named& k : kernels) {
    for (int a = 3; a < argc; ++a) {
      std::string text = Dump(k, argv[a], headers);
      if (!text.starts_with("// entry: ")) ++failed;
      std::ofstream(out / absl::StrCat(k.name, ".", argv[a], ".cu"),
                    std::ios::binary)
          << text;
    }
  }
  for (const auto& [name, content] : headers) {
    std::ofstream(out / "headers" / name, std::ios::binary) << content;
  }
  std::printf("%zu kernels x %d archs, %d failed to lower, written to %s\n",
              kernels.size(), argc - 3, failed, argv[2]);
  return 0;
}
