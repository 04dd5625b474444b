#include "samples/gemm_tune.h"

#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "samples/status_macros.h"
#include "samples/tune_workload.h"

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
    {"cluster", &GemmTile::cluster},
};

// Schedule switches of the tile, 0 / 1 parameters.
struct SwitchField {
  const char* name;
  bool GemmTile::*field;
};
constexpr SwitchField kSwitchFields[] = {
    {"pingpong", &GemmTile::pingpong},
    {"persistent", &GemmTile::persistent},
};

int64_t SharedBytes(const GemmConfig& c, const TuneConfig& t) {
  const int64_t stages = std::max<int64_t>(t.Int("num_stages", 1), 1);
  return stages * (t.Int("block_m", 0) + t.Int("block_n", 0)) *
         t.Int("block_k", 0) * dtype_bytes(c.in_dtype);
}

}  // namespace

TuneConfig GemmTileConfig(const GemmTile& tile) {
  TuneConfig c;
  for (const TileField& f : kTileFields) c.Set(f.name, tile.*f.field);
  for (const SwitchField& f : kSwitchFields)
    c.Set(f.name, tile.*f.field ? 1 : 0);
  return c;
}

absl::StatusOr<GemmTile> GemmTileFromConfig(const TuneConfig& config,
                                            GemmTile base) {
  for (const auto& [name, value] : config.values()) {
    const SwitchField* on_off = nullptr;
    for (const SwitchField& f : kSwitchFields) {
      if (name == f.name) on_off = &f;
    }
    if (on_off != nullptr) {
      if (!value.is_int() || (value.int_value() != 0 && value.int_value() != 1))
        return absl::InvalidArgumentError(absl::StrCat(
            "gemm tile: ", name, "=", value.ToString(), " is not 0 or 1"));
      base.*on_off->field = value.int_value() == 1;
      continue;
    }
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
  // Rows of 64 or 128 bytes of K: 32 / 64 f16 columns, 64 / 128 fp8 ones
  // (fp8 wgmma needs the 128-byte rows).
  const int eb = dtype_bytes(config.in_dtype);
  // sm_90a's ping-pong consumers (PassConfig::pingpong_consumers) apply to
  // one consumer warpgroup per tile (128 threads).
  const bool hopper = target.sm() >= 90;
  std::vector<TuneValue> stages = {2, 3, 4};
  if (hopper) stages.push_back(6);
  // sm_90a's schedules: persistent or one block per tile; cluster pairs
  // (PassConfig::cluster_size) on the persistent cooperative kernel.
  const std::vector<TuneValue> off = {0};
  const std::vector<TuneValue> on = {1};
  const std::vector<TuneValue> both = {0, 1};
  return TuneSpace::Product(
      {PinnedAxis("block_m", {64, 128, 256}, pinned),
       PinnedAxis("block_n", {64, 128, 256}, pinned),
       PinnedAxis("block_k", {64 / eb, 128 / eb}, pinned),
       PinnedAxis("num_stages", stages, pinned),
       PinnedAxis("threads", {128, 256}, pinned),
       PinnedAxis("panel", {config.tile.panel}, pinned),
       PinnedAxis("pingpong", hopper ? both : off, pinned),
       PinnedAxis("cluster", hopper ? std::vector<TuneValue>{1, 2} : on,
                  pinned),
       PinnedAxis("persistent", hopper ? std::vector<TuneValue>{1, 0} : on,
                  pinned)},
      [config, max_shared, pinned](const TuneConfig& t) {
        const int64_t m = t.Int("block_m", 0), n = t.Int("block_n", 0);
        const int64_t per_thread =
            m * n / std::max<int64_t>(t.Int("threads", 1), 1);
        // Pinned values are the user's word: only the others are filtered.
        auto free = [&](const char* name) { return !pinned.Has(name); };
        // Ping-pong with one warpgroup's tile and a deep ring (4 or 6
        // stages: its tiles are small); 6 stages only for it.
        const bool pp = t.Int("pingpong", 0) == 1;
        const int64_t st = t.Int("num_stages", 0);
        if (free("pingpong") && pp &&
            (t.Int("threads", 0) != 128 || (st != 4 && st != 6))) {
          return false;
        }
        if (free("num_stages") && st == 6 && !pp) return false;
        // Pairs and ping-pong need the persistent grid, and pairs take one
        // consumer group (ping-pong has two): the pass ignores them
        // elsewhere, so such candidates would repeat another.
        const bool pair = t.Int("cluster", 1) == 2;
        const bool persistent = t.Int("persistent", 1) == 1;
        if ((free("cluster") || free("persistent")) && pair && !persistent) {
          return false;
        }
        if ((free("pingpong") || free("persistent")) && pp && !persistent) {
          return false;
        }
        if ((free("cluster") || free("pingpong")) && pair && pp) return false;
        if ((free("block_m") || free("block_n")) && (m > 2 * n || n > 2 * m)) {
          return false;
        }
        if (free("threads") && (per_thread < 32 || per_thread > 128)) {
          return false;
        }
        return max_shared <= 0 || SharedBytes(config, t) <= max_shared;
      });
}

void ApplyGemmSchedule(const TuneConfig& config, CompileOptions& options) {
  options.pass_config.pingpong_consumers = config.Int("pingpong", 0) == 1;
  options.pass_config.cluster_size = static_cast<int>(config.Int("cluster", 1));
  options.pass_config.disable_persistent_grid |=
      config.Int("persistent", 1) == 0;
}

absl::StatusOr<TuneResult> TuneGemm(const GemmConfig& config,
                                    const TuneSpace& space,
                                    const TuneOptions& options, uint64_t seed) {
  SAMPLES_ASSIGN_OR_RETURN(Workload w, GemmWorkload(config, seed));
  return TuneWorkload(
      w, absl::StrCat("gemm_", std::string(GemmLayoutName(config.layout))),
      space,
      [config](const TuneConfig& t) -> absl::StatusOr<Program> {
        GemmConfig candidate = config;
        SAMPLES_ASSIGN_OR_RETURN(candidate.tile,
                                 GemmTileFromConfig(t, config.tile));
        return GemmProgram(candidate);
      },
      options, ApplyGemmSchedule);
}

}  // namespace tessel::samples
