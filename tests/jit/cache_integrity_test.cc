// An entry stands for its key only: swapped, planted or re-labelled files
// are misses (and removed), on load and in CacheDirectory::Verify.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/cache_directory.h"
#include "jit/counters.h"
#include "jit/kernel_cache.h"
#include "tests/jit/test_util.h"

namespace tessel::jit {
namespace {

using testing::TempDir;
using ::testing::UnorderedElementsAre;

const CompileOptions kSm90{.arch = "sm_90a"};

// Variants of one kernel that differ only in a constant, and two others:
// every one a real NVRTC cubin of about the same size.
std::vector<CudaSource> SmallKernels() {
  std::vector<CudaSource> sources;
  for (const char* scale : {"2.0f", "3.0f"}) {
    sources.push_back(
        CudaSource{.text = absl::StrCat(
                       "extern \"C\" __global__ void scale(float* y, int n) {\n"
                       "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                       "  if (i < n) y[i] *= ",
                       scale, ";\n}\n"),
                   .entry = "scale"});
  }
  sources.push_back(testing::SaxpySource("swap"));
  sources.push_back(CudaSource{
      .text = "extern \"C\" __global__ void row_sum(const float* x, float* y,\n"
              "                                     int n) {\n"
              "  float s = 0;\n"
              "  for (int j = 0; j < n; ++j) s += x[blockIdx.x * n + j];\n"
              "  y[blockIdx.x] = s;\n"
              "}\n",
      .entry = "row_sum"});
  return sources;
}

KernelCacheOptions InDir(const std::string& dir) {
  return KernelCacheOptions{.disk = {.dir = dir}};
}

// Every pair of entry files swapped: `verify` finds both of each pair, and a
// load of either key is a miss that compiles the right kernel again.
TEST(CacheIntegrityTest, EverySwapOfTwoEntriesIsDetected) {
  TempDir tmp;
  const std::vector<CudaSource> sources = SmallKernels();
  std::vector<CachedCubin> warm;
  {
    KernelCache cache(InDir(tmp.path()));
    for (const CudaSource& source : sources) {
      absl::StatusOr<CachedCubin> cubin = cache.GetCubin(source, kSm90);
      ASSERT_TRUE(cubin.ok()) << cubin.status();
      warm.push_back(*cubin);
    }
  }
  const CacheDirectory dir(tmp.path());
  std::vector<std::string> good;
  for (const CachedCubin& c : warm) {
    good.push_back(testing::ReadFile(dir.EntryPath(c.key, ".cubin")));
  }
  auto restore = [&] {
    for (size_t i = 0; i < warm.size(); ++i) {
      testing::WriteFile(dir.EntryPath(warm[i].key, ".cubin"), good[i]);
    }
  };
  auto swap = [&](size_t a, size_t b) {
    testing::WriteFile(dir.EntryPath(warm[a].key, ".cubin"), good[b]);
    testing::WriteFile(dir.EntryPath(warm[b].key, ".cubin"), good[a]);
  };
  int pairs = 0, found_by_verify = 0, found_on_load = 0;
  for (size_t a = 0; a < warm.size(); ++a) {
    for (size_t b = a + 1; b < warm.size(); ++b) {
      ++pairs;
      swap(a, b);
      absl::StatusOr<CacheVerifyReport> report = dir.Verify();
      ASSERT_TRUE(report.ok()) << report.status();
      EXPECT_EQ(report->good, static_cast<int>(warm.size()) - 2);
      EXPECT_THAT(report->removed,
                  UnorderedElementsAre(warm[a].key, warm[b].key))
          << a << "<->" << b;
      if (report->removed.size() == 2) ++found_by_verify;
      restore();

      swap(a, b);
      bool both = true;
      for (size_t i : {a, b}) {
        KernelCache fresh(InDir(tmp.path()));  // as a new process would
        absl::StatusOr<CachedCubin> got = fresh.GetCubin(sources[i], kSm90);
        ASSERT_TRUE(got.ok()) << got.status();
        EXPECT_NE(got->origin, CubinOrigin::kDisk) << a << "<->" << b;
        EXPECT_TRUE(got->cubin->image == warm[i].cubin->image)
            << "key " << i << " loaded another kernel";
        both = both && got->origin == CubinOrigin::kCompiled &&
               got->cubin->image == warm[i].cubin->image;
      }
      if (both) ++found_on_load;
      restore();
    }
  }
  EXPECT_EQ(pairs, 6);
  EXPECT_EQ(found_by_verify, pairs);
  EXPECT_EQ(found_on_load, pairs);
  EXPECT_EQ(dir.Verify()->good, static_cast<int>(warm.size()));
}

// The .json beside an entry is for people; what `list` reports and what is
// loaded come from the entry itself, and `verify` replaces a sidecar that
// disagrees with its entry.
TEST(CacheIntegrityTest, SidecarIsNotTrusted) {
  TempDir tmp;
  const CudaSource source = testing::SaxpySource("sidecar");
  absl::StatusOr<CachedCubin> warm =
      KernelCache(InDir(tmp.path())).GetCubin(source, kSm90);
  ASSERT_TRUE(warm.ok()) << warm.status();
  const CacheDirectory dir(tmp.path());
  const std::string json = dir.EntryPath(warm->key, ".json");
  for (const char* sidecar :
       {"garbage{", R"({"key": "00", "entry": "evil", "arch": "sm_80"})"}) {
    testing::WriteFile(json, sidecar);
    absl::StatusOr<std::vector<CacheEntryInfo>> listed = dir.List();
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->size(), 1u);
    EXPECT_EQ((*listed)[0].arch, "sm_90a") << sidecar;
    EXPECT_EQ((*listed)[0].entry, "saxpy") << sidecar;

    absl::StatusOr<CachedCubin> hit =
        KernelCache(InDir(tmp.path())).GetCubin(source, kSm90);
    ASSERT_TRUE(hit.ok());
    EXPECT_EQ(hit->origin, CubinOrigin::kDisk);
    EXPECT_TRUE(hit->cubin->image == warm->cubin->image);
    EXPECT_EQ(hit->cubin->arch, "sm_90a");

    absl::StatusOr<CacheVerifyReport> report = dir.Verify();
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(report->good, 1);
    EXPECT_THAT(report->sidecars, UnorderedElementsAre(warm->key)) << sidecar;
    EXPECT_FALSE(std::filesystem::exists(json)) << sidecar;
  }
}

}  // namespace
}  // namespace tessel::jit
