#include "samples/gemm_tune.h"

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/device_buffer.h"
#include "samples/status_macros.h"
#include "tessel/testing.h"

namespace tessel::samples {
namespace {

struct TileField {
  const char* name;
  int GemmTile::*field;
};
constexpr TileField kTileFields[] = {
    {"block_m", &GemmTile::block_m}, {"block_n", &GemmTile::block_n},
    {"block_k", &GemmTile::block_k}, {"num_stages", &GemmTile::num_stages},
    {"threads", &GemmTile::threads}, {"panel", &GemmTile::panel},
};

// The axis `name`: its pinned value, or `values`.
TuneSpace::Axis Axis(const char* name, std::vector<TuneValue> values,
                     const TuneConfig& pinned) {
  if (const TuneValue* v = pinned.Find(name)) return {name, {*v}};
  return {name, std::move(values)};
}

int64_t SharedBytes(const GemmConfig& c, const TuneConfig& t) {
  const int64_t stages = std::max<int64_t>(t.Int("num_stages", 1), 1);
  return stages * (t.Int("block_m", 0) + t.Int("block_n", 0)) *
         t.Int("block_k", 0) * dtype_bytes(c.in_dtype);
}

}  // namespace

TuneConfig GemmTileConfig(const GemmTile& tile) {
  TuneConfig c;
  for (const TileField& f : kTileFields) c.Set(f.name, tile.*f.field);
  return c;
}

absl::StatusOr<GemmTile> GemmTileFromConfig(const TuneConfig& config,
                                            GemmTile base) {
  for (const auto& [name, value] : config.values()) {
    const TileField* field = nullptr;
    for (const TileField& f : kTileFields) {
      if (name == f.name) field = &f;
    }
    if (field == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("gemm tile: unknown parameter \"", name, "\""));
    }
    if (!value.is_int() ||
        value.int_value() < std::numeric_limits<int>::min() ||
        value.int_value() > std::numeric_limits<int>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "gemm tile: ", name, "=", value.ToString(), " is not an int"));
    }
    base.*field->field = static_cast<int>(value.int_value());
  }
  return base;
}

TuneSpace GemmTuneSpace(const GemmConfig& config, const Target& target,
                        const TuneConfig& pinned) {
  const int64_t max_shared = target.max_shared_bytes();
  return TuneSpace::Product(
      {Axis("block_m", {64, 128, 256}, pinned),
       Axis("block_n", {64, 128, 256}, pinned),
       Axis("block_k", {32, 64}, pinned), Axis("num_stages", {2, 3, 4}, pinned),
       Axis("threads", {128, 256}, pinned),
       Axis("panel", {config.tile.panel}, pinned)},
      [config, max_shared, pinned](const TuneConfig& t) {
        const int64_t m = t.Int("block_m", 0), n = t.Int("block_n", 0);
        const int64_t per_thread =
            m * n / std::max<int64_t>(t.Int("threads", 1), 1);
        // Pinned values are the user's word: only the others are filtered.
        auto free = [&](const char* name) { return !pinned.Has(name); };
        if ((free("block_m") || free("block_n")) && (m > 2 * n || n > 2 * m)) {
          return false;
        }
        if (free("threads") && (per_thread < 32 || per_thread > 128)) {
          return false;
        }
        return max_shared <= 0 || SharedBytes(config, t) <= max_shared;
      });
}

absl::StatusOr<TuneResult> TuneGemm(const GemmConfig& config,
                                    const TuneSpace& space,
                                    const TuneOptions& options, uint64_t seed) {
  if (std::string why = testing::GpuUnavailableReason(); !why.empty()) {
    return absl::UnavailableError(
        absl::StrCat("gemm --tune times candidates on a GPU: ", why));
  }
  SAMPLES_ASSIGN_OR_RETURN(Workload w, GemmWorkload(config, seed));
  const HostTensor& a = w.tensors.at("A");
  const HostTensor& b = w.tensors.at("B");
  HostTensor& c = w.tensors.at("C");
  SAMPLES_ASSIGN_OR_RETURN(jit::DeviceBuffer a_dev,
                           jit::DeviceBuffer::Allocate(a.num_bytes()));
  SAMPLES_ASSIGN_OR_RETURN(jit::DeviceBuffer b_dev,
                           jit::DeviceBuffer::Allocate(b.num_bytes()));
  SAMPLES_ASSIGN_OR_RETURN(jit::DeviceBuffer c_dev,
                           jit::DeviceBuffer::Allocate(c.num_bytes()));
  SAMPLES_RETURN_IF_ERROR(a_dev.CopyFromHost(a.data(), a.num_bytes()));
  SAMPLES_RETURN_IF_ERROR(b_dev.CopyFromHost(b.data(), b.num_bytes()));
  const std::vector<TensorView> args = {
      TensorView::Contiguous(a_dev.ptr(), a.dtype(), a.shape()),
      TensorView::Contiguous(b_dev.ptr(), b.dtype(), b.shape()),
      TensorView::Contiguous(c_dev.ptr(), c.dtype(), c.shape())};

  std::optional<Expected> reference;
  TuneRequest request;
  request.kernel =
      absl::StrCat("gemm_", std::string(GemmLayoutName(config.layout)));
  request.space = space;
  request.args = args;
  request.factory = [config](const TuneConfig& t) -> absl::StatusOr<Program> {
    GemmConfig candidate = config;
    SAMPLES_ASSIGN_OR_RETURN(candidate.tile,
                             GemmTileFromConfig(t, config.tile));
    return GemmProgram(candidate);
  };
  request.check = [&](const CompiledKernel& kernel) -> absl::Status {
    if (!reference.has_value()) {
      SAMPLES_ASSIGN_OR_RETURN(std::vector<Expected> expected, w.reference(w));
      reference = expected.at(0);
    }
    // NaN everywhere first: a kernel that skips a tile cannot pass on the
    // previous candidate's output.
    SAMPLES_RETURN_IF_ERROR(c_dev.Fill(0xFF));
    SAMPLES_RETURN_IF_ERROR(kernel.launch(args));
    SAMPLES_RETURN_IF_ERROR(jit::SynchronizeStream(nullptr));
    SAMPLES_RETURN_IF_ERROR(c_dev.CopyToHost(c.data(), c.num_bytes()));
    ::testing::AssertionResult close = testing::AllClose(
        c, reference->reference, reference->rtol, reference->atol,
        /*worst_reported=*/2);
    if (!close) {
      return absl::InternalError(absl::StrCat(
          "C does not match the float64 reference: ", close.message()));
    }
    return absl::OkStatus();
  };
  return autotune(request, options);
}

}  // namespace tessel::samples
