#include "samples/tensor_ops.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "samples/sample_util.h"
#include "samples/status_macros.h"
#include "tessel/registry.h"

namespace tessel::samples {
namespace {

namespace T = tessel;

absl::Status CheckLength(int64_t n) {
  if (n <= 0 || n > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("element-wise kernel: n must be in [1, 2^31), got ", n));
  }
  return absl::OkStatus();
}

absl::StatusOr<Program> MakeZero(const nlohmann::json& json) {
  KernelParams params(json);
  SAMPLES_ASSIGN_OR_RETURN(int64_t n, params.Int("n"));
  SAMPLES_ASSIGN_OR_RETURN(DataType dtype, params.Dtype("dtype", f32));
  SAMPLES_RETURN_IF_ERROR(params.CheckAllUsed());
  return ZeroProgram(n, dtype);
}

absl::StatusOr<Program> MakeCast(const nlohmann::json& json) {
  KernelParams params(json);
  SAMPLES_ASSIGN_OR_RETURN(int64_t n, params.Int("n"));
  SAMPLES_ASSIGN_OR_RETURN(DataType from, params.Dtype("from", f32));
  SAMPLES_ASSIGN_OR_RETURN(DataType to, params.Dtype("to", f16));
  SAMPLES_RETURN_IF_ERROR(params.CheckAllUsed());
  return CastProgram(n, from, to);
}

}  // namespace

absl::StatusOr<Program> ZeroProgram(int64_t n, DataType dtype) {
  SAMPLES_RETURN_IF_ERROR(CheckLength(n));
  const int len = static_cast<int>(n);
  T::ProgramBuilder p(absl::StrCat("zero_", DtypeName(dtype)));
  auto X = p.tensor("X", {len}, dtype);
  {
    T::Kernel kernel(T::ceildiv(len, kElementwiseTile), {.threads = 256});
    auto [bx] = kernel.block_index();
    auto zeros = T::alloc_fragment({kElementwiseTile}, dtype, "zeros");
    T::clear(zeros);
    T::copy(zeros, X(bx * kElementwiseTile));  // skips stores past n
  }
  return p.finish();
}

absl::StatusOr<Program> CastProgram(int64_t n, DataType from, DataType to) {
  SAMPLES_RETURN_IF_ERROR(CheckLength(n));
  const int len = static_cast<int>(n);
  T::ProgramBuilder p(
      absl::StrCat("cast_", DtypeName(from), "_to_", DtypeName(to)));
  auto X = p.tensor("X", {len}, from);
  auto Y = p.tensor("Y", {len}, to);
  {
    T::Kernel kernel(T::ceildiv(len, kElementwiseTile), {.threads = 256});
    auto [bx] = kernel.block_index();
    auto x = T::alloc_fragment({kElementwiseTile}, from, "x");
    auto y = T::alloc_fragment({kElementwiseTile}, to, "y");
    T::copy(X(bx * kElementwiseTile), x);
    for (auto i : T::Parallel(kElementwiseTile)) y(i) = T::cast(x(i), to);
    T::copy(y, Y(bx * kElementwiseTile));
  }
  return p.finish();
}

TESSEL_REGISTER_KERNEL(zero_tensor, MakeZero);
TESSEL_REGISTER_KERNEL(cast_tensor, MakeCast);

}  // namespace tessel::samples
