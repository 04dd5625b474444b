// Block-uniform scalars (T::let) without a GPU: the interpreter against a
// host loop, and the generated CUDA and PTX for sm_90a and sm_80 (each let
// declared once, NVRTC / ptxas compile it). The launches are
// let_gpu_test.cc's.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "tessel/compile.h"
#include "tessel/host_tensor.h"
#include "tessel/interpret.h"
#include "tests/codegen/let_cases.h"
#include "tests/common/count.h"
#include "tests/common/generated_code.h"

namespace tessel::testing {
namespace {

constexpr int kBatch = 8, kPages = 40, kMaxPages = 16;

// Out[b] = sum over the first ceildiv(Lens[b], 64) pages of Q[b] @ page;
// untouched (-7) where Lens[b] is 0 and `guarded_store`.
HostTensor Expected(const PagedArgs& a, bool guarded_store) {
  const HostTensor &q = a.tensors[0], &cache = a.tensors[1],
                   &table = a.tensors[2], &lens = a.tensors[3];
  HostTensor out = a.tensors[4];
  for (int b = 0; b < kBatch; ++b) {
    const int len = static_cast<int>(lens.get_flat(b));
    if (len == 0 && guarded_store) continue;
    const int n = (len + 63) / 64;
    for (int i = 0; i < 64; ++i) {
      for (int j = 0; j < 64; ++j) {
        double s = 0;
        for (int p = 0; p < n; ++p) {
          const int page = static_cast<int>(table.get_flat(b * kMaxPages + p));
          for (int l = 0; l < 64; ++l) {
            s += q.get_flat((b * 64 + i) * 64 + l) *
                 cache.get_flat((page * 64 + l) * 64 + j);
          }
        }
        out.set_flat((b * 64 + i) * 64 + j, s);
      }
    }
  }
  return out;
}

void ExpectNear(const HostTensor& got, const HostTensor& want) {
  ASSERT_EQ(got.num_elements(), want.num_elements());
  int bad = 0;
  for (int64_t i = 0; i < got.num_elements() && bad < 5; ++i) {
    if (std::abs(got.get_flat(i) - want.get_flat(i)) >
        1e-3 * (1 + std::abs(want.get_flat(i)))) {
      ADD_FAILURE() << "element " << i << ": " << got.get_flat(i) << " vs "
                    << want.get_flat(i);
      ++bad;
    }
  }
}

TEST(Let, PagedGatherRunsInTheInterpreter) {
  absl::StatusOr<Program> program =
      PagedGatherProgram(kBatch, kPages, kMaxPages);
  ASSERT_TRUE(program.ok()) << program.status();
  PagedArgs a = MakePagedArgs(kBatch, kPages, kMaxPages);
  HostTensor want = Expected(a, /*guarded_store=*/true);
  std::vector<HostTensor*> ptrs;
  for (HostTensor& t : a.tensors) ptrs.push_back(&t);
  ASSERT_TRUE(interpret(*program, ptrs).ok());
  ExpectNear(a.tensors[4], want);
}

TEST(Let, GuardedGemmRunsInTheInterpreter) {
  absl::StatusOr<Program> program =
      GuardedGemmProgram(kBatch, kPages, kMaxPages);
  ASSERT_TRUE(program.ok()) << program.status();
  PagedArgs a = MakePagedArgs(kBatch, kPages, kMaxPages);
  HostTensor want = Expected(a, /*guarded_store=*/false);
  std::vector<HostTensor*> ptrs;
  for (HostTensor& t : a.tensors) ptrs.push_back(&t);
  absl::Status s = interpret(*program, ptrs);
  ASSERT_TRUE(s.ok()) << s;
  ExpectNear(a.tensors[4], want);
}

// Each let is one register per thread, assigned once; sm_90a's producer
// issues the page's TMA copy (reading the table itself), sm_80 pipelines
// cp.async copies; NVRTC (and ptxas, where the PTX emitter spells the
// kernel) compile both.
TEST(Let, EachLetIsDeclaredOnceAndCompiles) {
  for (bool paged : {true, false}) {
    absl::StatusOr<Program> program =
        paged ? PagedGatherProgram(kBatch, kPages, kMaxPages)
              : GuardedGemmProgram(kBatch, kPages, kMaxPages);
    ASSERT_TRUE(program.ok()) << program.status();
    for (Target t : {Target::sm90a(), Target::sm80()}) {
      SCOPED_TRACE(t.sm());
      const GeneratedCode code = Generate(*program, t);
      const std::string& cuda = code.cuda;
      EXPECT_EQ(Count(cuda, "const int npages = "), 1) << cuda;
      EXPECT_EQ(Count(cuda, "const int page = "), 1) << cuda;
      if (paged) {
        EXPECT_EQ(Count(cuda, "const int len = Lens[bx];"), 1) << cuda;
        EXPECT_EQ(Count(cuda, "if ((len > 0))"), 1) << cuda;
        EXPECT_EQ(Count(cuda, t.sm() >= 90 ? "tl::tma_load(" : "tl::cp_async<"),
                  t.sm() >= 90 ? 1 : 2)
            << cuda;
      }
      EXPECT_FALSE(code.ptx.empty());  // the PTX emitter spells the kernel
      ExpectCompilesBothWays(*program, t);
    }
  }
}

}  // namespace
}  // namespace tessel::testing
