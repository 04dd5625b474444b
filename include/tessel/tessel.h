// tessel: GPU tile kernels in C++, in the spirit of TileLang.
//
//   #include <tessel/tessel.h>
//   namespace T = tessel;
//   T::ProgramBuilder p("scale");
//   auto X = p.tensor("X", {T::dim("N")}, T::f32);
//   {
//     T::Kernel kernel(T::ceildiv(X.shape()[0], 256), {.threads = 128});
//     auto [bx] = kernel.block_index();
//     auto t = T::alloc_fragment({256}, T::f32, "t");
//     T::copy(X(bx * 256), t);
//     for (auto i : T::Parallel(256)) t(i) = t(i) * 2;
//     T::copy(t, X(bx * 256));
//   }
//   absl::StatusOr<T::Program> prog = p.finish();
//
// Compiling, allocating and launching it: docs/quickstart.md. Each
// TileLang construct's counterpart: docs/tilelang-guide.md.
#ifndef TESSEL_TESSEL_H_
#define TESSEL_TESSEL_H_

#include "tessel/builder.h"
#include "tessel/compile.h"
#include "tessel/device.h"
#include "tessel/dtype.h"
#include "tessel/expr.h"
#include "tessel/host_tensor.h"
#include "tessel/program.h"
#include "tessel/runtime.h"
#include "tessel/status_macros.h"
#include "tessel/target.h"
#include "tessel/version.h"

#endif  // TESSEL_TESSEL_H_
