#include "jit/cubin_elf.h"

namespace tessel::jit {

bool ReadLittleEndian(absl::string_view bytes, uint64_t offset, int size,
                      uint64_t& out) {
  if (offset > bytes.size() || bytes.size() - offset < uint64_t(size)) {
    return false;
  }
  out = 0;
  for (int i = 0; i < size; ++i) {
    out |= uint64_t{static_cast<unsigned char>(bytes[offset + i])} << (8 * i);
  }
  return true;
}

std::optional<absl::string_view> CubinSection(absl::string_view elf,
                                              absl::string_view name) {
  if (elf.size() < 64 ||
      elf.substr(0, 4) !=
          "\x7f"
          "ELF" ||
      elf[4] != 2 || elf[5] != 1) {
    return std::nullopt;  // not a 64-bit little-endian ELF
  }
  uint64_t shoff, shentsize, shnum, shstrndx;
  if (!ReadLittleEndian(elf, 0x28, 8, shoff) ||
      !ReadLittleEndian(elf, 0x3a, 2, shentsize) ||
      !ReadLittleEndian(elf, 0x3c, 2, shnum) ||
      !ReadLittleEndian(elf, 0x3e, 2, shstrndx) || shentsize < 64 ||
      shstrndx >= shnum) {
    return std::nullopt;
  }
  auto section = [&](uint64_t i, uint64_t& name_offset, uint64_t& offset,
                     uint64_t& size) {
    const uint64_t header = shoff + i * shentsize;
    return ReadLittleEndian(elf, header, 4, name_offset) &&
           ReadLittleEndian(elf, header + 24, 8, offset) &&
           ReadLittleEndian(elf, header + 32, 8, size) &&
           offset <= elf.size() && size <= elf.size() - offset;
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

std::optional<uint64_t> CubinSymbolIndex(absl::string_view elf,
                                         absl::string_view name) {
  std::optional<absl::string_view> symbols = CubinSection(elf, ".symtab");
  std::optional<absl::string_view> names = CubinSection(elf, ".strtab");
  if (!symbols.has_value() || !names.has_value()) return std::nullopt;
  constexpr uint64_t kSymbolBytes = 24;  // Elf64_Sym
  for (uint64_t i = 0; i < symbols->size() / kSymbolBytes; ++i) {
    uint64_t at;
    if (!ReadLittleEndian(*symbols, i * kSymbolBytes, 4, at) ||
        at >= names->size()) {
      continue;
    }
    const absl::string_view rest = names->substr(at);
    if (rest.substr(0, rest.find('\0')) == name) return i;
  }
  return std::nullopt;
}

std::optional<std::vector<NvInfoRecord>> NvInfoRecords(
    absl::string_view section) {
  std::vector<NvInfoRecord> records;
  for (uint64_t at = 0; at < section.size();) {
    uint64_t format, attribute, value;
    if (!ReadLittleEndian(section, at, 1, format) ||
        !ReadLittleEndian(section, at + 1, 1, attribute) ||
        !ReadLittleEndian(section, at + 2, 2, value)) {
      return std::nullopt;
    }
    const uint64_t body = at + 4;
    const uint64_t size = format == kNvInfoSizedValue ? value : 0;
    if (body + size > section.size()) return std::nullopt;
    records.push_back({.format = static_cast<uint8_t>(format),
                       .attribute = static_cast<uint8_t>(attribute),
                       .value = static_cast<uint16_t>(value),
                       .body = section.substr(body, size)});
    at = body + size;
  }
  return records;
}

}  // namespace tessel::jit
