// tessel::Program: printing, hashing and equality over the IR.
#include "tessel/program.h"

#include "src/ir/printer.h"
#include "src/ir/program.h"
#include "src/ir/structural.h"

namespace tessel {

Program::Program() : impl_(std::make_shared<const ir::Program>()) {}

const std::string& Program::name() const { return impl_->name; }

std::string Program::to_string(bool locations) const {
  return ir::ToString(*impl_, {.locations = locations});
}

uint64_t Program::hash() const { return ir::StructuralHash(*impl_); }

bool operator==(const Program& a, const Program& b) {
  return a.impl_ == b.impl_ || ir::StructuralEqual(*a.impl_, *b.impl_);
}

}  // namespace tessel
