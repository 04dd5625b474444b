#include "tests/tools/generated_code.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jit/ptx_translation.h"
#include "src/runtime/lower.h"
#include "tessel/compile.h"

namespace tessel::listing {

GeneratedCode GenerateCode(const ListedKernel& k, const std::string& arch) {
  GeneratedCode out;
  absl::StatusOr<ir::Program> program = k.program(arch);
  if (!program.ok()) {
    out.cuda =
        absl::StrCat("build failed: ", program.status().ToString(), "\n");
    return out;
  }
  CompileOptions options = k.options;
  options.target = Target::cuda(arch);
  absl::StatusOr<runtime::Lowered> lowered = runtime::Lower(*program, options);
  if (!lowered.ok()) {
    out.cuda =
        absl::StrCat("lowering failed: ", lowered.status().ToString(), "\n");
    return out;
  }
  const jit::CudaSource& source = lowered->generated.source;
  if (absl::StatusOr<jit::CompileInput> input =
          jit::ChooseCompileInput(source, lowered->jit_options);
      input.ok() && input->source.language == jit::SourceLanguage::kPtx) {
    out.ptx = input->source.text;
  }
  std::vector<std::string> header_names;
  for (const jit::CudaHeader& h : source.headers)
    header_names.push_back(h.name);
  out.headers = source.headers;
  out.cuda = absl::StrCat(
      "// entry: ", source.entry, "\n// options: ",
      absl::StrJoin(jit::NormalizedOptions(lowered->jit_options, arch), " "),
      "\n// headers: ", absl::StrJoin(header_names, " "), "\n", source.text);
  return out;
}

}  // namespace tessel::listing
