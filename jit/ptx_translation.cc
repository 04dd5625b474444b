#include "jit/ptx_translation.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tessel::jit {

CompileInput Untranslated(const CudaSource& source,
                          const CompileOptions& options, std::string why) {
  CompileInput input{
      .source = source, .options = options, .ptx_fallback = std::move(why)};
  input.source.to_ptx = nullptr;
  input.source.ptx_translator.clear();
  return input;
}

absl::StatusOr<CompileInput> ChooseCompileInput(const CudaSource& source,
                                                const CompileOptions& options) {
  if (!source.to_ptx) return Untranslated(source, options, "");
  if (source.language != SourceLanguage::kCuda) {
    return absl::InvalidArgumentError(
        "a PTX translation is offered for a source that is not CUDA C++");
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<PtxModule> ptx = source.to_ptx();
  const double translate_ms = std::chrono::duration<double, std::milli>(
                                  std::chrono::steady_clock::now() - start)
                                  .count();
  if (absl::IsUnimplemented(ptx.status())) {
    CompileInput input =
        Untranslated(source, options, std::string(ptx.status().message()));
    input.translate_ms = translate_ms;
    return input;
  }
  if (!ptx.ok()) {
    return absl::Status(
        ptx.status().code(),
        absl::StrCat("translating ", source.entry, " to PTX (",
                     source.ptx_translator, "): ", ptx.status().message()));
  }
  return CompileInput{.source = CudaSource{.text = std::move(ptx->text),
                                           .entry = std::move(ptx->entry),
                                           .language = SourceLanguage::kPtx},
                      .options = CompileOptions{.arch = options.arch,
                                                .fast_math = false,
                                                .lineinfo = options.lineinfo},
                      .translate_ms = translate_ms,
                      .launch = ptx->launch,
                      .more_registers = std::move(ptx->more_registers)};
}

}  // namespace tessel::jit
