#include "src/codegen/prelude.h"

#include <string_view>
#include <utility>

namespace tessel::codegen {

// Defined in the generated prelude_embedded.cc.
const std::vector<std::pair<std::string_view, std::string_view>>&
EmbeddedPreludeFiles();

const std::vector<jit::CudaHeader>& PreludeHeaders() {
  static const auto* headers = [] {
    auto* h = new std::vector<jit::CudaHeader>;
    for (const auto& [name, content] : EmbeddedPreludeFiles()) {
      h->push_back({std::string(name), std::string(content)});
    }
    return h;
  }();
  return *headers;
}

}  // namespace tessel::codegen
