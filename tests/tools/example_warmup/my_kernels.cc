// docs/warmup.md's example: a host application's kernel, registered for its
// own warmup binary.
#include <tessel/registry.h>
#include <tessel/tessel.h>

#include <nlohmann/json.hpp>

namespace T = tessel;

absl::StatusOr<T::Program> MakeScale(const nlohmann::json& json) {
  T::KernelParams params(json);
  absl::StatusOr<int64_t> n = params.IntInRange("N", 1, 1 << 30);
  if (!n.ok()) return n.status();
  absl::Status unused = params.CheckAllUsed();
  if (!unused.ok()) return unused;

  T::ProgramBuilder p("my_scale");
  auto X = p.tensor("X", {static_cast<int>(*n)}, T::f32);
  {
    T::Kernel kernel(T::ceildiv(X.shape()[0], 256), {.threads = 128});
    auto [bx] = kernel.block_index();
    auto t = T::alloc_fragment({256}, T::f32, "t");
    T::copy(X(bx * 256), t);
    for (auto i : T::Parallel(256)) t(i) = t(i) * 2;
    T::copy(t, X(bx * 256));
  }
  return p.finish();
}

TESSEL_REGISTER_KERNEL(my_scale, MakeScale);
