#include "jit/failed_source.h"

#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tessel::jit::internal {

std::string SourceFileName(const CudaSource& source) {
  std::string name;
  for (char c : source.entry) {
    name += absl::ascii_isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (name.size() >= 48) break;
  }
  if (name.empty()) name = "kernel";
  return name + (source.language == SourceLanguage::kPtx ? ".ptx" : ".cu");
}

std::string SaveFailedSource(const CudaSource& source) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  dir /= absl::StrCat("tessel-", getuid(), "-failed");
  ::mkdir(dir.c_str(), 0700);
  const std::string file = SourceFileName(source);
  const size_t dot = file.rfind('.');
  const std::string path =
      (dir /
       absl::StrFormat("%s-%016x%s", file.substr(0, dot),
                       XXH3_64bits(source.text.data(), source.text.size()),
                       file.substr(dot)))
          .string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << source.text;
  out.close();
  if (!out) return absl::StrCat("(could not write it to ", path, ")");
  return path;
}

}  // namespace tessel::jit::internal
