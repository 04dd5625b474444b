#include "jit/cubin_params.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/cubin_elf.h"

namespace tessel::jit {

std::optional<size_t> CubinParamCount(absl::string_view image,
                                      absl::string_view entry) {
  const std::string name = absl::StrCat(".nv.info.", entry);
  std::optional<absl::string_view> info = CubinSection(image, name);
  if (!info.has_value()) return std::nullopt;
  std::optional<std::vector<NvInfoRecord>> records = NvInfoRecords(*info);
  if (!records.has_value()) return std::nullopt;
  std::vector<int> seen;  // per ordinal: how many records name it
  uint64_t param_bytes = 0;
  for (const NvInfoRecord& record : *records) {
    if (record.attribute == kNvInfoParamBankSize &&
        record.format != kNvInfoSizedValue) {
      param_bytes = record.value;
    }
    if (record.attribute != kNvInfoKparamInfo) continue;
    uint64_t ordinal;
    if (record.format != kNvInfoSizedValue || record.value < 6 ||
        !ReadLittleEndian(record.body, 4, 2, ordinal) || ordinal > 4096) {
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
