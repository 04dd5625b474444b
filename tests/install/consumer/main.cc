// A host application that links the installed tessel and records a small
// tile program through the public headers alone.
#include <iostream>

#include "tessel/tessel.h"
#include "tessel/version.h"

namespace T = tessel;

int main() {
  T::ProgramBuilder p("scale");
  auto X = p.tensor("X", {256, 64}, T::f32);
  {
    T::Kernel kernel(4, {.threads = 128});
    auto [bx] = kernel.block_index();
    auto tile = T::alloc_shared({64, 64}, T::f32);
    T::copy(X(bx * 64, 0), tile);
    for (auto [i, j] : T::Parallel(64, 64)) tile(i, j) = tile(i, j) * 2.0f;
    T::copy(tile, X(bx * 64, 0));
  }
  absl::StatusOr<T::Program> program = p.finish();
  if (!program.ok()) {
    std::cerr << program.status() << "\n";
    return 1;
  }
  std::cout << "tessel " << T::version() << " recorded:\n"
            << program->to_string();
  return 0;
}
