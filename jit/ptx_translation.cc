#include "jit/ptx_translation.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tessel::jit {

absl::StatusOr<CompileInput> ChooseCompileInput(const CudaSource& source,
                                                const CompileOptions& options) {
  CompileInput input{.source = source, .options = options};
  input.source.to_ptx = nullptr;
  input.source.ptx_translator.clear();
  if (!source.to_ptx) return input;
  if (source.language != SourceLanguage::kCuda) {
    return absl::InvalidArgumentError(
        "a PTX translation is offered for a source that is not CUDA C++");
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<PtxModule> ptx = source.to_ptx();
  input.translate_ms = std::chrono::duration<double, std::milli>(
                           std::chrono::steady_clock::now() - start)
                           .count();
  if (absl::IsUnimplemented(ptx.status())) {
    input.ptx_fallback = std::string(ptx.status().message());
    return input;
  }
  if (!ptx.ok()) {
    return absl::Status(
        ptx.status().code(),
        absl::StrCat("translating ", source.entry, " to PTX (",
                     source.ptx_translator, "): ", ptx.status().message()));
  }
  input.source = CudaSource{.text = std::move(ptx->text),
                            .entry = std::move(ptx->entry),
                            .language = SourceLanguage::kPtx};
  input.options = CompileOptions{
      .arch = options.arch, .fast_math = false, .lineinfo = options.lineinfo};
  return input;
}

}  // namespace tessel::jit
