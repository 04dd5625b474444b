// A recorded tile program: what ProgramBuilder::finish() returns and what
// tessel::compile takes.
//
//   absl::StatusOr<T::Program> prog = Gemm(4096, 4096, 4096);
//   std::cout << prog->to_string();                 // TileLang-like text
//   if (prog->hash() == other.hash() && *prog == other) { ... same kernel ... }
//
// A Program is immutable and cheap to copy (it shares its graph).
#ifndef TESSEL_PROGRAM_H_
#define TESSEL_PROGRAM_H_

#include <cstdint>
#include <memory>
#include <string>

namespace tessel {

namespace ir {
struct Program;
}  // namespace ir
namespace dsl {
struct Access;
}  // namespace dsl

class Program {
 public:
  Program();  // an empty program named ""
  // A move copies the handle: a moved-from Program is still the program
  // (the IR is immutable and shared), never a null one.
  Program(const Program&) = default;
  Program& operator=(const Program&) = default;
  Program(Program&& other) noexcept : impl_(other.impl_) {}
  Program& operator=(Program&& other) noexcept {
    impl_ = other.impl_;
    return *this;
  }

  const std::string& name() const;
  // The printed IR; with locations, each op's line ends with "# file.cc:line".
  std::string to_string(bool locations = false) const;
  // Structural hash and equality: source locations and the names of loop
  // variables and local buffers do not count; everything else (program and
  // tensor names, shapes, dtypes, ops, constants) does.
  uint64_t hash() const;
  friend bool operator==(const Program& a, const Program& b);

  // The tile IR itself (src/ir/program.h), for tessel's own stages.
  const ir::Program& ir() const { return *impl_; }

 private:
  friend struct dsl::Access;
  std::shared_ptr<const ir::Program> impl_;
};

}  // namespace tessel

#endif  // TESSEL_PROGRAM_H_
