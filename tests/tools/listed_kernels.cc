#include "tests/tools/listed_kernels.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "tessel/registry.h"
#include "tests/codegen/seed_cases.h"
#include "tests/codegen/test_programs.h"
#include "tests/interp/interp_programs.h"

namespace tessel::listing {
namespace {

ProgramOf Fixed(std::function<absl::StatusOr<Program>()> make) {
  return [make](const std::string&) -> absl::StatusOr<ir::Program> {
    absl::StatusOr<Program> p = make();
    if (!p.ok()) return p.status();
    return p->ir();
  };
}

ProgramOf FixedIr(ir::Program program) {
  return [program](const std::string&) { return program; };
}

void AddTestPrograms(std::vector<ListedKernel>& out) {
  namespace t = tessel::testing;
  auto add = [&](std::string name, ir::Program p) {
    out.push_back({"prog_" + name, FixedIr(std::move(p)), {}});
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
}

}  // namespace

std::vector<ListedKernel> ListedKernels(const tools::Manifest& manifest) {
  std::vector<ListedKernel> out;
  for (const tools::ManifestEntry& e : manifest.kernels) {
    CompileOptions options;
    options.fast_math = e.fast_math;
    options.lineinfo = e.lineinfo;
    options.pass_config = e.pass_config;
    ProgramOf build =
        [e](const std::string& arch) -> absl::StatusOr<ir::Program> {
      absl::StatusOr<Program> p =
          KernelRegistry::Global().Build(e.name, e.params, Target::cuda(arch));
      if (!p.ok()) return p.status();
      return p->ir();
    };
    out.push_back({absl::StrCat("manifest_", e.index, "_", e.name), build,
                   options, e.archs});
  }
  // The seed cases run on the interpreter (seed_cpu_test.cc).
  for (const seed_test::SeedCase& c : seed_test::SeedCases()) {
    out.push_back({"seed_" + c.name, Fixed(c.make), {}, {}, true});
  }
  AddTestPrograms(out);
  for (const interp_test::NamedProgram& p : interp_test::InterpPrograms()) {
    out.push_back({"interp_" + p.name, Fixed(p.make), {}, {}, true});
  }
  return out;
}

absl::StatusOr<std::vector<ListedKernel>> ListedKernelsOfManifest(
    const std::string& path) {
  absl::StatusOr<tools::Manifest> manifest = tools::LoadManifest(path);
  if (!manifest.ok()) return manifest.status();
  return ListedKernels(*manifest);
}

}  // namespace tessel::listing
