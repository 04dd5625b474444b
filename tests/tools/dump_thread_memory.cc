// Prints each listed kernel's per-thread fragment and local bytes
// (src/passes/thread_memory.h) for each arch, largest first: the evidence
// behind passes::kMaxThreadMemoryBytes, to look at again when kernels grow.
//
//   tessel_dump_thread_memory samples/kernels.json sm_80 sm_90a | head
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/passes/pass_list.h"
#include "src/passes/thread_memory.h"
#include "tests/tools/listed_kernels.h"

namespace {

struct Row {
  int64_t bytes = 0;
  std::string text;
};

Row Measure(const tessel::listing::ListedKernel& k, const std::string& arch) {
  absl::StatusOr<tessel::ir::Program> program = k.program(arch);
  if (!program.ok())
    return {-1, absl::StrCat(k.name, " ", arch, ": build failed")};
  tessel::passes::LoweringState state;
  state.program = *program;
  state.target = tessel::Target::cuda(arch);
  state.config = k.options.pass_config;
  absl::Status s = tessel::passes::RunPasses(state, "layout_inference");
  if (!s.ok()) {
    return {-1, absl::StrCat(k.name, " ", arch, ": ", s.ToString())};
  }
  tessel::passes::ThreadMemory m = tessel::passes::MeasureThreadMemory(state);
  std::vector<std::string> parts;
  for (const tessel::passes::ThreadArray& a : m.arrays) {
    parts.push_back(absl::StrCat(a.alloc->buffer->name, "[",
                                 absl::StrJoin(a.local_shape, ","), "] ",
                                 a.bytes));
  }
  return {m.total_bytes, absl::StrCat(m.total_bytes, " B/thread  ", k.name, " ",
                                      arch, " (", state.threads, " threads): ",
                                      absl::StrJoin(parts, ", "))};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MANIFEST ARCH...\n", argv[0]);
    return 2;
  }
  absl::StatusOr<std::vector<tessel::listing::ListedKernel>> kernels =
      tessel::listing::ListedKernelsOfManifest(argv[1]);
  if (!kernels.ok()) {
    std::fprintf(stderr, "%s\n", kernels.status().ToString().c_str());
    return 2;
  }
  std::vector<Row> rows;
  for (const tessel::listing::ListedKernel& k : *kernels) {
    for (int a = 2; a < argc; ++a) rows.push_back(Measure(k, argv[a]));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) {
    return x.bytes > y.bytes;
  });
  std::printf("limit %lld B/thread\n",
              static_cast<long long>(tessel::passes::kMaxThreadMemoryBytes));
  for (const Row& r : rows) std::printf("%s\n", r.text.c_str());
  return 0;
}
