// The device prelude's inline asm (prelude/*.cuh), read back as instruction
// templates: the PTX emitter (src/codegen/ptx/) spells every instruction the
// prelude holds from here, so each is written once, in the prelude, with
// its arch guard (`#if ... __CUDA_ARCH__ >= 900`) beside it. NVRTC compiles
// the prelude as it is; the emitter gets the same text for the same target.
//
//   const PreludeAsm& prelude = PreludeAsm::Embedded(/*arch=*/90);
//   prelude.Spell("mbarrier_init", {"%r1", "%r2"})
//   // {"mbarrier.init.shared.b64 [%r1], %r2;"}
//
// An asm statement is found by the prelude function it is in and by how
// many operands its template names (%0 ... %n-1): overloads and the asm
// statements of one function differ in that (tma_load's 1d ... 5d, cp_async's
// .cg and .ca forms); equal ones (a pointer and an address overload) must
// spell the same text. Parse reads only what the prelude uses: functions
// marked __forceinline__, `asm [volatile] ("..." ...)` and #if / #ifdef on
// __CUDA_ARCH__; anything else it cannot decide is an error.
#ifndef TESSEL_SRC_CODEGEN_PRELUDE_ASM_H_
#define TESSEL_SRC_CODEGEN_PRELUDE_ASM_H_

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace tessel::codegen {

class PreludeAsm {
 public:
  using File = std::pair<std::string_view, std::string_view>;  // name, text

  // The asm of `files` as a device compile for __CUDA_ARCH__ = arch * 10
  // sees it.
  static absl::StatusOr<PreludeAsm> Parse(const std::vector<File>& files,
                                          int arch);
  // The embedded prelude's (prelude.h), parsed once per arch; the prelude
  // is part of the build, so a parse error aborts.
  static const PreludeAsm& Embedded(int arch);

  // The instructions of `function`'s asm that names operands.size()
  // operands, %i replaced by operands[i] and each register the asm declares
  // (`.reg .pred p;`) by locals' value for its name; one string per
  // instruction, braces and declarations left out. Empty when there is no
  // such asm (for this arch).
  std::vector<std::string> Spell(
      std::string_view function, const std::vector<std::string>& operands,
      const std::map<std::string, std::string>& locals = {}) const;

  // The opcode of `function`'s one-instruction asm written as
  // "opcode %0, %1, ..." (the destination first), for the emitter's own
  // operand formatting; empty when it has no such asm.
  std::string Opcode(std::string_view function) const;

 private:
  struct Asm {
    int operands = 0;
    std::string text;  // the template, escapes decoded ("...;\n")
  };
  const Asm* Find(std::string_view function, int operands) const;

  std::map<std::string, std::vector<Asm>, std::less<>> asm_;
};

}  // namespace tessel::codegen

#endif  // TESSEL_SRC_CODEGEN_PRELUDE_ASM_H_
