// Reading a cubin without a GPU: the bytes of an ELF section by name, and the
// attribute records of the ".nv.info" sections ptxas writes.
//
//   std::optional<absl::string_view> info = CubinSection(image, ".nv.info");
//   std::optional<std::vector<NvInfoRecord>> records = NvInfoRecords(*info);
//
// A record is a u8 format, a u8 attribute and a u16 that is the value, or
// (format 0x04, EIFMT_SVAL) the size of the bytes that follow. Every read is
// bounds-checked: bytes that are not a well-formed cubin give nullopt.
#ifndef TESSEL_JIT_CUBIN_ELF_H_
#define TESSEL_JIT_CUBIN_ELF_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"

namespace tessel::jit {

// The attributes tessel reads (cuobjdump -elf names them).
inline constexpr uint8_t kNvInfoSizedValue = 0x04;  // EIFMT_SVAL
inline constexpr uint8_t kNvInfoFrameSize = 0x11;   // EIATTR_FRAME_SIZE
inline constexpr uint8_t kNvInfoKparamInfo = 0x17;  // EIATTR_KPARAM_INFO
inline constexpr uint8_t kNvInfoParamBankSize =
    0x19;                                         // EIATTR_PARAM_CBANK_SIZE
inline constexpr uint8_t kNvInfoRegCount = 0x2f;  // EIATTR_REGCOUNT

struct NvInfoRecord {
  uint8_t format = 0;
  uint8_t attribute = 0;
  uint16_t value = 0;      // the value, or the size of `body`
  absl::string_view body;  // EIFMT_SVAL's bytes; empty otherwise
};

// A little-endian unsigned of `size` bytes at `offset`; false past the end.
bool ReadLittleEndian(absl::string_view bytes, uint64_t offset, int size,
                      uint64_t& out);

// The bytes of the section named `name` of a 64-bit little-endian ELF.
std::optional<absl::string_view> CubinSection(absl::string_view elf,
                                              absl::string_view name);

// The index in .symtab of the symbol named `name` (what the .nv.info records
// of a function name it by).
std::optional<uint64_t> CubinSymbolIndex(absl::string_view elf,
                                         absl::string_view name);

// The records of an .nv.info section, in order; nullopt if one runs past
// the section's end.
std::optional<std::vector<NvInfoRecord>> NvInfoRecords(
    absl::string_view section);

}  // namespace tessel::jit

#endif  // TESSEL_JIT_CUBIN_ELF_H_
