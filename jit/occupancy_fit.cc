#include "jit/occupancy_fit.h"

#include <algorithm>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "jit/cubin_elf.h"

namespace tessel::jit {
namespace {

// What one SM holds (CUDA C Programming Guide, "Compute Capabilities").
struct SmLimits {
  int threads;
  int blocks;
  int64_t shared_bytes;
  int64_t reserved_per_block;  // shared memory the system keeps per block
};

std::optional<SmLimits> LimitsOf(absl::string_view arch) {
  if (!absl::ConsumePrefix(&arch, "sm_")) return std::nullopt;
  while (!arch.empty() && absl::ascii_isalpha(arch.back())) {
    arch.remove_suffix(1);  // sm_90a, sm_100f: the same SM
  }
  int sm = 0;
  if (!absl::SimpleAtoi(arch, &sm)) return std::nullopt;
  switch (sm) {
    case 70:
    case 72:
      return SmLimits{2048, 32, 96 << 10, 0};
    case 75:
      return SmLimits{1024, 16, 64 << 10, 0};
    case 80:
    case 87:
      return SmLimits{2048, 32, 164 << 10, 1 << 10};
    case 86:
      return SmLimits{1536, 16, 100 << 10, 1 << 10};
    case 89:
      return SmLimits{1536, 24, 100 << 10, 1 << 10};
    case 90:
      return SmLimits{2048, 32, 228 << 10, 1 << 10};
    default:
      return std::nullopt;  // not guessed: no fit
  }
}

constexpr int kRegistersPerSm = 64 * 1024;
constexpr int kRegistersPerThread = 255;
constexpr int kWarpRegisterUnit = 256;  // a warp's registers come in these

int WarpsOf(const LaunchShape& launch) { return (launch.threads + 31) / 32; }

// The most registers per thread with which `blocks` blocks fit.
int RegistersFor(int blocks, int warps) {
  const int per_warp = kRegistersPerSm / (blocks * warps) / kWarpRegisterUnit *
                       kWarpRegisterUnit;
  return std::min(per_warp / 32, kRegistersPerThread);
}

// Blocks per SM by every limit but registers.
int BlocksWithoutRegisters(const SmLimits& sm, const LaunchShape& launch) {
  if (launch.threads <= 0 || launch.threads > 1024 || launch.shared_bytes < 0) {
    return 0;
  }
  int blocks = std::min(sm.blocks, sm.threads / (WarpsOf(launch) * 32));
  const int64_t shared = launch.shared_bytes + sm.reserved_per_block;
  if (shared > 0) {
    blocks =
        static_cast<int>(std::min<int64_t>(blocks, sm.shared_bytes / shared));
  }
  return blocks;
}

}  // namespace

std::optional<CubinResources> ResourcesOf(absl::string_view image,
                                          absl::string_view entry) {
  std::optional<uint64_t> function = CubinSymbolIndex(image, entry);
  std::optional<absl::string_view> info = CubinSection(image, ".nv.info");
  if (!function.has_value() || !info.has_value()) return std::nullopt;
  std::optional<std::vector<NvInfoRecord>> records = NvInfoRecords(*info);
  if (!records.has_value()) return std::nullopt;
  CubinResources resources;
  bool counted = false;
  for (const NvInfoRecord& record : *records) {
    if (record.attribute != kNvInfoRegCount &&
        record.attribute != kNvInfoFrameSize) {
      continue;
    }
    // (u32 function symbol, u32 value)
    uint64_t symbol, value;
    if (record.format != kNvInfoSizedValue ||
        !ReadLittleEndian(record.body, 0, 4, symbol) ||
        !ReadLittleEndian(record.body, 4, 4, value)) {
      return std::nullopt;
    }
    if (symbol != *function) continue;
    if (record.attribute == kNvInfoRegCount) {
      resources.registers = static_cast<int>(value);
      counted = true;
    } else {
      resources.frame_bytes = static_cast<int64_t>(value);
    }
  }
  if (!counted || resources.registers <= 0 ||
      resources.registers > kRegistersPerThread) {
    return std::nullopt;
  }
  return resources;
}

int BlocksPerSm(absl::string_view arch, const LaunchShape& launch,
                int registers) {
  std::optional<SmLimits> sm = LimitsOf(arch);
  if (!sm.has_value() || registers <= 0) return 0;
  const int blocks = BlocksWithoutRegisters(*sm, launch);
  if (blocks == 0) return 0;
  const int per_warp = (registers * 32 + kWarpRegisterUnit - 1) /
                       kWarpRegisterUnit * kWarpRegisterUnit;
  const int by_registers = kRegistersPerSm / per_warp / WarpsOf(launch);
  return std::min(blocks, by_registers);
}

std::optional<int> BlocksWorthAsking(absl::string_view arch,
                                     const LaunchShape& launch, int registers) {
  std::optional<SmLimits> sm = LimitsOf(arch);
  if (!sm.has_value()) return std::nullopt;
  const int now = BlocksPerSm(arch, launch, registers);
  const int most = BlocksWithoutRegisters(*sm, launch);
  if (now <= 0) return std::nullopt;
  std::optional<int> ask;
  for (int blocks = now + 1; blocks <= most; ++blocks) {
    // At most a fifth fewer registers than ptxas chose.
    if (RegistersFor(blocks, WarpsOf(launch)) * 5 < registers * 4) break;
    ask = blocks;
  }
  return ask;
}

std::optional<std::string> WithMinBlocksPerSm(absl::string_view ptx,
                                              int blocks) {
  for (absl::string_view own : {".maxnreg", ".minnctapersm", "setmaxnreg"}) {
    if (absl::StrContains(ptx, own)) return std::nullopt;
  }
  const size_t at = ptx.find("\n.maxntid ");
  if (at == absl::string_view::npos) return std::nullopt;
  const size_t end = ptx.find('\n', at + 1);
  if (end == absl::string_view::npos) return std::nullopt;
  return absl::StrCat(ptx.substr(0, end + 1), ".minnctapersm ", blocks, "\n",
                      ptx.substr(end + 1));
}

namespace {

// The log of a kept second compile: its note first, then the notes of the
// compiles it replaced, then its compiler's log.
std::string Noted(const std::string& note, const std::string& replaced,
                  const std::string& log) {
  std::string out = note;
  for (absl::string_view line : absl::StrSplit(replaced, '\n')) {
    if (absl::StartsWith(line, "tessel: ")) absl::StrAppend(&out, "\n", line);
  }
  if (!log.empty()) absl::StrAppend(&out, "\n", log);
  return out;
}

// (1) The spelling with more registers, made now; nullopt where none is
// offered or it is the same text.
std::optional<CompileInput> SpellingWithMoreRegisters(CompileInput& input) {
  if (!input.more_registers) return std::nullopt;
  const std::function<absl::StatusOr<PtxModule>()> spell =
      std::exchange(input.more_registers, nullptr);
  absl::StatusOr<PtxModule> rich = spell();
  if (!rich.ok() || rich->text == input.source.text) return std::nullopt;
  CompileInput other = input;
  other.source.text = std::move(rich->text);
  other.source.entry = std::move(rich->entry);
  return other;
}

// Whether `rich` (compiled from the spelling with more registers) is kept
// over `cubin`: no stack, and as many blocks per SM.
bool RicherIsBetter(const Cubin& cubin, const Cubin& rich,
                    const LaunchShape& launch) {
  std::optional<CubinResources> first =
      ResourcesOf(cubin.image, cubin.lowered_entry);
  std::optional<CubinResources> got =
      ResourcesOf(rich.image, rich.lowered_entry);
  return first.has_value() && got.has_value() && got->frame_bytes == 0 &&
         BlocksPerSm(rich.arch, launch, got->registers) >=
             BlocksPerSm(cubin.arch, launch, first->registers);
}

// (2) More blocks per SM asked of ptxas, where worth it.
void AskForBlocks(CompileInput& input, Cubin& cubin, CompileFunction compile) {
  if (input.launch.threads <= 0) return;
  std::optional<CubinResources> first =
      ResourcesOf(cubin.image, cubin.lowered_entry);
  if (!first.has_value()) return;
  const LaunchShape& launch = input.launch;
  std::optional<int> blocks =
      BlocksWorthAsking(cubin.arch, launch, first->registers);
  if (!blocks.has_value()) return;
  std::optional<std::string> text =
      WithMinBlocksPerSm(input.source.text, *blocks);
  if (!text.has_value()) return;
  CompileInput denser = input;
  denser.source.text = *std::move(text);
  absl::StatusOr<Cubin> second = compile(denser);
  if (!second.ok()) return;
  std::optional<CubinResources> got =
      ResourcesOf(second->image, second->lowered_entry);
  if (!got.has_value() || got->frame_bytes > first->frame_bytes ||
      BlocksPerSm(second->arch, launch, got->registers) < *blocks) {
    return;
  }
  second->log = Noted(
      absl::StrCat("tessel: compiled again with .minnctapersm ", *blocks, ": ",
                   first->registers, " -> ", got->registers, " registers, ",
                   BlocksPerSm(cubin.arch, launch, first->registers), " -> ",
                   *blocks, " blocks per SM"),
      cubin.log, second->log);
  second->compile_ms += cubin.compile_ms;
  input = std::move(denser);
  cubin = *std::move(second);
}

}  // namespace

absl::StatusOr<Cubin> CompileFitted(CompileInput& input,
                                    CompileFunction compile) {
  if (input.source.language != SourceLanguage::kPtx) return compile(input);
  std::optional<CompileInput> rich = SpellingWithMoreRegisters(input);
  absl::StatusOr<Cubin> rich_cubin = absl::UnknownError("not compiled");
  std::thread beside;
  if (rich.has_value()) {
    beside = std::thread([&] { rich_cubin = compile(*rich); });
  }
  absl::StatusOr<Cubin> cubin = compile(input);
  if (beside.joinable()) beside.join();
  if (!cubin.ok()) return cubin;
  if (rich.has_value() && rich_cubin.ok() &&
      RicherIsBetter(*cubin, *rich_cubin, input.launch)) {
    const std::optional<CubinResources> from =
        ResourcesOf(cubin->image, cubin->lowered_entry);
    rich_cubin->log = Noted(
        absl::StrCat("tessel: the spelling with more registers: ",
                     from->registers, " -> ",
                     ResourcesOf(rich_cubin->image, rich_cubin->lowered_entry)
                         ->registers,
                     " registers"),
        cubin->log, rich_cubin->log);
    rich_cubin->compile_ms =
        std::max(rich_cubin->compile_ms, cubin->compile_ms);
    input = *std::move(rich);
    cubin = std::move(rich_cubin);
  }
  AskForBlocks(input, *cubin, compile);
  return cubin;
}

}  // namespace tessel::jit
