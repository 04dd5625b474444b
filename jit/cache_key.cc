#include "jit/cache_key.h"

#include <xxhash.h>

#include <algorithm>
#include "absl/strings/string_view.h"

#include "absl/strings/escaping.h"
#include "jit/ptx_compile.h"
#include "jit/ptxas_version.h"

namespace tessel::jit {
namespace {

// Feeds a tag and a length before every field so that no two field lists
// hash the same bytes.
class KeyHasher {
 public:
  KeyHasher() : state_(XXH3_createState()) { XXH3_128bits_reset(state_); }
  ~KeyHasher() { XXH3_freeState(state_); }
  KeyHasher(const KeyHasher&) = delete;
  KeyHasher& operator=(const KeyHasher&) = delete;

  void Add(char tag, absl::string_view bytes) {
    const uint64_t size = bytes.size();
    unsigned char prefix[9] = {static_cast<unsigned char>(tag)};
    for (int i = 0; i < 8; ++i) prefix[1 + i] = (size >> (8 * i)) & 0xff;
    XXH3_128bits_update(state_, prefix, sizeof(prefix));
    XXH3_128bits_update(state_, bytes.data(), bytes.size());
  }
  void AddCount(char tag, uint64_t count) {
    char digits[8];
    for (int i = 0; i < 8; ++i) digits[i] = static_cast<char>(count >> (8 * i));
    Add(tag, absl::string_view(digits, sizeof(digits)));
  }

  std::string HexDigest() {
    XXH128_canonical_t canonical;
    XXH128_canonicalFromHash(&canonical, XXH3_128bits_digest(state_));
    return absl::BytesToHexString(
        absl::string_view(reinterpret_cast<const char*>(canonical.digest),
                          sizeof(canonical.digest)));
  }

 private:
  XXH3_state_t* state_;
};

}  // namespace

std::string TesselVersion() { return TESSEL_VERSION_STRING; }

absl::StatusOr<CacheKeyFields> MakeCacheKeyFields(
    const CudaSource& source, const CompileOptions& options) {
  absl::StatusOr<std::string> arch = ResolveArch(options);
  if (!arch.ok()) return arch.status();
  CacheKeyFields fields;
  fields.tessel_version = TesselVersion();
  fields.source = source.text;
  fields.entry = source.entry;
  fields.headers = source.headers;
  fields.options = NormalizedOptionsFor(source.language, options, *arch);
  fields.arch = *arch;
  fields.language = source.language;
  if (source.language == SourceLanguage::kPtx) {
    fields.ptxas_version = PtxasVersion();
  } else {
    fields.nvrtc_version = NvrtcVersion();
  }
  if (!source.ptx_translator.empty()) {
    fields.ptx_translator = source.ptx_translator;
    fields.ptxas_version = PtxasVersion();
  }
  return fields;
}

namespace {

std::string HashFields(uint32_t schema, absl::string_view tessel_version,
                       absl::string_view source, absl::string_view entry,
                       const std::vector<CudaHeader>& unsorted_headers,
                       const std::vector<std::string>& options,
                       absl::string_view nvrtc_version, absl::string_view arch,
                       SourceLanguage language, absl::string_view ptxas_version,
                       absl::string_view ptx_translator) {
  std::vector<const CudaHeader*> headers;
  for (const CudaHeader& header : unsorted_headers) headers.push_back(&header);
  std::sort(headers.begin(), headers.end(),
            [](const CudaHeader* a, const CudaHeader* b) {
              return a->name != b->name ? a->name < b->name
                                        : a->content < b->content;
            });
  KeyHasher hasher;
  hasher.AddCount('V', schema);
  hasher.Add('T', tessel_version);
  hasher.Add('S', source);
  hasher.Add('E', entry);
  hasher.AddCount('H', headers.size());
  for (const CudaHeader* header : headers) {
    hasher.Add('n', header->name);
    hasher.Add('c', header->content);
  }
  hasher.AddCount('O', options.size());
  for (const std::string& option : options) hasher.Add('o', option);
  hasher.Add('N', nvrtc_version);
  hasher.Add('A', arch);
  // Appended, never mixed in above: a CUDA key is the same bytes as ever.
  if (language == SourceLanguage::kPtx) {
    hasher.Add('L', SourceLanguageName(language));
    hasher.Add('P', ptxas_version);
  }
  if (!ptx_translator.empty()) {
    hasher.Add('X', ptx_translator);
    hasher.Add('P', ptxas_version);
  }
  return hasher.HexDigest();
}

}  // namespace

std::string ComputeCacheKey(const CacheKeyFields& fields) {
  return HashFields(fields.schema, fields.tessel_version, fields.source,
                    fields.entry, fields.headers, fields.options,
                    fields.nvrtc_version, fields.arch, fields.language,
                    fields.ptxas_version, fields.ptx_translator);
}

absl::StatusOr<std::string> ComputeCacheKey(const CudaSource& source,
                                            const CompileOptions& options) {
  absl::StatusOr<std::string> arch = ResolveArch(options);
  if (!arch.ok()) return arch.status();
  static const std::string* const nvrtc_version =
      new std::string(NvrtcVersion());
  static const std::string* const tessel_version =
      new std::string(TesselVersion());
  const bool ptx = source.language == SourceLanguage::kPtx;
  const bool translated = !source.ptx_translator.empty();
  return HashFields(
      kCacheSchemaVersion, *tessel_version, source.text, source.entry,
      source.headers, NormalizedOptionsFor(source.language, options, *arch),
      ptx ? "" : *nvrtc_version, *arch, source.language,
      ptx || translated ? PtxasVersion() : "", source.ptx_translator);
}

}  // namespace tessel::jit
