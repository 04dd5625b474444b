#include "jit/cubin_params.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tessel::jit {
namespace {

constexpr uint8_t kFormatSizedValue = 0x04;  // EIFMT_SVAL: u16 size, bytes
constexpr uint8_t kKparamInfo = 0x17;        // EIATTR_KPARAM_INFO
constexpr uint8_t kParamBankSize = 0x19;     // EIATTR_PARAM_CBANK_SIZE

// Little-endian reads that fail instead of reading past the end.
bool Read(absl::string_view bytes, uint64_t offset, int size, uint64_t& out) {
  if (offset > bytes.size() || bytes.size() - offset < uint64_t(size)) {
    return false;
  }
  out = 0;
  for (int i = 0; i < size; ++i) {
    out |= uint64_t{static_cast<unsigned char>(bytes[offset + i])} << (8 * i);
  }
  return true;
}

// The bytes of the section named `name`, or nullopt.
std::optional<absl::string_view> Section(absl::string_view elf,
                                         absl::string_view name) {
  if (elf.size() < 64 ||
      elf.substr(0, 4) !=
          "\x7f"
          "ELF" ||
      elf[4] != 2 || elf[5] != 1) {
    return std::nullopt;  // not a 64-bit little-endian ELF
  }
  uint64_t shoff, shentsize, shnum, shstrndx;
  if (!Read(elf, 0x28, 8, shoff) || !Read(elf, 0x3a, 2, shentsize) ||
      !Read(elf, 0x3c, 2, shnum) || !Read(elf, 0x3e, 2, shstrndx) ||
      shentsize < 64 || shstrndx >= shnum) {
    return std::nullopt;
  }
  auto section = [&](uint64_t i, uint64_t& name_offset, uint64_t& offset,
                     uint64_t& size) {
    const uint64_t header = shoff + i * shentsize;
    return Read(elf, header, 4, name_offset) &&
           Read(elf, header + 24, 8, offset) &&
           Read(elf, header + 32, 8, size) && offset <= elf.size() &&
           size <= elf.size() - offset;
  };
  uint64_t ignored, names_offset, names_size;
  if (!section(shstrndx, ignored, names_offset, names_size)) {
    return std::nullopt;
  }
  const absl::string_view names = elf.substr(names_offset, names_size);
  for (uint64_t i = 0; i < shnum; ++i) {
    uint64_t name_offset, offset, size;
    if (!section(i, name_offset, offset, size)) return std::nullopt;
    if (name_offset >= names.size()) continue;
    const absl::string_view rest = names.substr(name_offset);
    if (rest.substr(0, rest.find('\0')) == name) {
      return elf.substr(offset, size);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<size_t> CubinParamCount(absl::string_view image,
                                      absl::string_view entry) {
  const std::string name = absl::StrCat(".nv.info.", entry);
  std::optional<absl::string_view> info = Section(image, name);
  if (!info.has_value()) return std::nullopt;
  std::vector<int> seen;  // per ordinal: how many records name it
  uint64_t param_bytes = 0;
  for (uint64_t at = 0; at < info->size();) {
    uint64_t format, attribute, value;
    if (!Read(*info, at, 1, format) || !Read(*info, at + 1, 1, attribute) ||
        !Read(*info, at + 2, 2, value)) {
      return std::nullopt;
    }
    const uint64_t body = at + 4;
    at = body + (format == kFormatSizedValue ? value : 0);
    if (at > info->size()) return std::nullopt;
    if (attribute == kParamBankSize && format != kFormatSizedValue) {
      param_bytes = value;
    }
    if (attribute != kKparamInfo) continue;
    uint64_t ordinal;
    if (format != kFormatSizedValue || value < 6 ||
        !Read(*info, body + 4, 2, ordinal) || ordinal > 4096) {
      return std::nullopt;
    }
    if (seen.size() <= ordinal) seen.resize(ordinal + 1, 0);
    ++seen[ordinal];
  }
  for (int count : seen) {
    if (count != 1) return std::nullopt;
  }
  // Parameter bytes without parameter records: a layout this does not know.
  if (seen.empty() && param_bytes != 0) return std::nullopt;
  return seen.size();
}

}  // namespace tessel::jit
