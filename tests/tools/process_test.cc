// The tools as processes: tessel-warmup and tessel-cache run as a user runs
// them, several at once, and a fresh application process after a warmup.
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/cache_directory.h"
#include "nlohmann/json.hpp"
#include "tests/tools/test_util.h"

namespace tessel::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::LeftoversUnder;
using testing::Process;
using testing::ReadFile;
using testing::RunCommand;
using testing::RunResult;
using testing::SourcePath;
using testing::TempDir;
using testing::WriteFile;

std::string SmallManifest() {
  return SourcePath("tests/tools/testdata/small.json");
}

// "N compiled, M already cached" of a warmup summary.
std::pair<int, int> CompiledAndCached(const std::string& output) {
  std::smatch m;
  const std::regex summary(R"((\d+) compiled, (\d+) already cached)");
  if (!std::regex_search(output, m, summary)) return {-1, -1};
  return {std::stoi(m[1]), std::stoi(m[2])};
}

RunResult Warmup(const TempDir& scratch, const std::string& cache,
                 std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {
      TESSEL_WARMUP_BIN, "--manifest", SmallManifest(), "--arch", "sm_80",
      "--cache-dir",     cache,        "--jobs",        "2"};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunCommand(args, scratch);
}

nlohmann::json Probe(const TempDir& scratch, const std::string& cache) {
  RunResult r = RunCommand(
      {TESSEL_HIT_PROBE_BIN, SmallManifest(), "sm_80", cache}, scratch);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const size_t brace = r.output.rfind('{');
  return nlohmann::json::parse(
      brace == std::string::npos ? "" : r.output.substr(brace), nullptr, false);
}

// An arch named twice, in one list or in two flags, is warmed once.
TEST(WarmupProcessTest, AnArchNamedTwiceIsWarmedOnce) {
  TempDir scratch, cache;
  RunResult r = Warmup(scratch, cache.path(), {"--arch", "sm_80,sm_80"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(CompiledAndCached(r.output), std::make_pair(3, 0)) << r.output;
}

TEST(WarmupProcessTest, TwoWarmupsAtOnceCompileEachKernelOnce) {
  TempDir scratch, cache;
  std::vector<std::string> args = {
      TESSEL_WARMUP_BIN, "--manifest",   SmallManifest(),
      "--arch",          "sm_90a,sm_80", "--cache-dir",
      cache.path(),      "--jobs",       "3"};
  Process a(args, scratch / "a.txt");
  Process b(args, scratch / "b.txt");
  ASSERT_EQ(a.Wait(), 0) << a.Output();
  ASSERT_EQ(b.Wait(), 0) << b.Output();
  auto [compiled_a, cached_a] = CompiledAndCached(a.Output());
  auto [compiled_b, cached_b] = CompiledAndCached(b.Output());
  EXPECT_EQ(compiled_a + compiled_b, 6) << a.Output() << b.Output();
  EXPECT_EQ(cached_a + cached_b, 6);
  const jit::CacheDirectory dir(cache.path());
  absl::StatusOr<jit::CacheVerifyReport> verify = dir.Verify(false);
  ASSERT_TRUE(verify.ok());
  EXPECT_EQ(verify->good, 6);
  EXPECT_THAT(verify->removed, IsEmpty());
  EXPECT_THAT(LeftoversUnder(cache.path()), IsEmpty());
}

// After a warmup, a new application process gets every kernel from disk:
// zero NVRTC calls, and no pass (the warmup wrote the program index's
// records). Against an empty cache the same process compiles each, and the
// next process finds them all through the index.
TEST(WarmupProcessTest, FreshProcessAfterWarmupMakesNoNvrtcCalls) {
  TempDir scratch, warmed, cold;
  RunResult warm = Warmup(scratch, warmed.path());
  ASSERT_EQ(warm.exit_code, 0) << warm.output;
  EXPECT_EQ(CompiledAndCached(warm.output), std::make_pair(3, 0));

  nlohmann::json hit = Probe(scratch, warmed.path());
  EXPECT_EQ(hit["kernels"], 3);
  EXPECT_EQ(hit["nvrtc_compiles"], 0) << hit;
  EXPECT_EQ(hit["disk_hits"], 3) << hit;
  EXPECT_EQ(hit["index_hits"], 3) << hit;

  nlohmann::json miss = Probe(scratch, cold.path());
  EXPECT_EQ(miss["misses"], 3) << miss;
  // One compile each, and at most two more for a PTX kernel's registers
  // (jit/occupancy_fit.h: the spelling with LICM, then .minnctapersm).
  EXPECT_GE(miss["nvrtc_compiles"], 3) << miss;
  EXPECT_LE(miss["nvrtc_compiles"], 9) << miss;
  EXPECT_EQ(miss["disk_hits"], 0) << miss;
  EXPECT_EQ(miss["index_hits"], 0) << miss;
  nlohmann::json next = Probe(scratch, cold.path());
  EXPECT_EQ(next["nvrtc_compiles"], 0) << next;
  EXPECT_EQ(next["index_hits"], 3) << next;
}

// Applications started at once on one empty cache: each kernel compiled
// and its program record written by several of them, none broken; the next
// one compiles nothing and lowers nothing.
TEST(WarmupProcessTest, ApplicationsAtOnceShareRecordsWithoutHarm) {
  TempDir scratch, cache;
  std::vector<std::unique_ptr<Process>> apps;
  for (int i = 0; i < 4; ++i) {
    apps.push_back(std::make_unique<Process>(
        std::vector<std::string>{TESSEL_HIT_PROBE_BIN, SmallManifest(), "sm_80",
                                 cache.path()},
        scratch / absl::StrCat("app", i, ".txt")));
  }
  for (auto& app : apps) EXPECT_EQ(app->Wait(), 0) << app->Output();
  nlohmann::json next = Probe(scratch, cache.path());
  EXPECT_EQ(next["kernels"], 3) << next;
  EXPECT_EQ(next["nvrtc_compiles"], 0) << next;
  EXPECT_EQ(next["index_hits"], 3) << next;
  EXPECT_THAT(LeftoversUnder(cache.path()), IsEmpty());
}

TEST(WarmupProcessTest, ManifestErrorsExitTwoNamingThePath) {
  TempDir scratch, cache;
  WriteFile(scratch / "bad.json", R"({"kernels": [
      {"name": "seed_gemm", "params": {"M": 128, "N": 128, "K": 64}},
      {"name": "seed_gemm", "params": {"M": 128.5, "N": 128, "K": 64}},
      {"name": "seed_gemmm"}]})");
  RunResult r =
      RunCommand({TESSEL_WARMUP_BIN, "--manifest", scratch / "bad.json",
                  "--arch", "sm_80", "--cache-dir", cache.path()},
                 scratch);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output,
              HasSubstr("kernels[1].params.M: expected an integer, got 128.5"));
  EXPECT_THAT(r.output,
              HasSubstr("kernels[2].name: unknown kernel \"seed_gemmm\""));
  EXPECT_THAT(r.output, HasSubstr("registered kernels: "));
  EXPECT_THAT(r.output, HasSubstr(" seed_gemm,"));
  EXPECT_THAT(testing::FilesUnder(cache.path()), IsEmpty());

  r = RunCommand({TESSEL_WARMUP_BIN, "--manifest", SmallManifest()}, scratch);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--arch are required"));
  r = RunCommand({TESSEL_WARMUP_BIN, "--jobs", "zero"}, scratch);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--jobs zero: expected an integer"));
}

// Each used to crash (134, 139) or warm nothing with exit 0.
TEST(WarmupProcessTest, HostileManifestsExitTwoNamingWhere) {
  TempDir scratch, cache;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"kernels": [{"name": "seed_gemm", "params": {"M": 1e309}}]})",
       "kernels[0].params.M: number 1e309 is out of range"},
      {std::string(200000, '[') + std::string(200000, ']'),
       "nested deeper than 64 levels"},
      {R"({"kernels": [{"name": "seed_gemm", "archs": ["sm_12"]}]})",
       "kernels[0].archs[0]: sm_12 is older than sm_80"},
      {R"({"kernels": [{"name": "seed_gemm"}], "kernels": []})",
       "kernels: duplicate key"},
      {R"({"kernels": [{"name": "seed_gemm", "archs": ["sm_080"]}]})",
       "kernels[0].archs[0]"},
      // Nothing to warm at all is a mistake, not a green run.
      {R"({"kernels": []})", "nothing to warm: the manifest lists no kernels"},
      {R"({"kernels": [{"name": "seed_gemm", "archs": ["sm_90a"]}]})",
       "nothing to warm: no manifest entry is for --arch sm_80"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = scratch / ("hostile" + std::to_string(i));
    WriteFile(path, cases[i].first);
    RunResult r = RunCommand({TESSEL_WARMUP_BIN, "--manifest", path, "--arch",
                              "sm_80", "--cache-dir", cache.path()},
                             scratch);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr(cases[i].second));
  }
  RunResult r = RunCommand({TESSEL_WARMUP_BIN, "--manifest", scratch.path(),
                            "--arch", "sm_80", "--cache-dir", cache.path()},
                           scratch);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("is a directory, not a JSON file"));
  r = RunCommand({TESSEL_WARMUP_BIN, "--manifest", SmallManifest(), "--arch",
                  "sm_12", "--cache-dir", cache.path()},
                 scratch);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--arch sm_12: sm_12 is older than sm_80"));
  // A value given to a switch, or an empty one, is refused, not ignored.
  for (const auto& [extra, why] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--dry-run=false"}, "--dry-run takes no value"},
           {{"--cache-dir", ""}, "--cache-dir: the value is empty"},
           {{"--arch", "sm_080"}, "sm_080"}}) {
    r = Warmup(scratch, cache.path(), extra);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr(why));
  }
  r = RunCommand(
      {TESSEL_CACHE_BIN, "--cache-dir", cache.path(), "stats", "--json=false"},
      scratch);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--json takes no value"));
  EXPECT_THAT(testing::FilesUnder(cache.path()), IsEmpty());
}

TEST(WarmupProcessTest, DryRunExitCodeAndProgressBar) {
  TempDir scratch, cache;
  RunResult dry = Warmup(scratch, cache.path(), {"--dry-run"});
  EXPECT_EQ(dry.exit_code, 1);
  EXPECT_THAT(dry.output, HasSubstr("3 of 3 kernels missing"));
  RunResult bar = Warmup(scratch, cache.path(), {"--progress", "bar"});
  EXPECT_EQ(bar.exit_code, 0) << bar.output;
  EXPECT_THAT(bar.output, HasSubstr("\r\033[K[##########"));
  EXPECT_THAT(bar.output, HasSubstr("3/3  compiled 3  cached 0  failed 0"));
  dry = Warmup(scratch, cache.path(), {"--dry-run"});
  EXPECT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_THAT(dry.output,
              HasSubstr("0 of 3 kernels missing from the cache, 3 cached"));
}

TEST(CacheToolTest, StatsListVerifyExportImportPruneClear) {
  TempDir scratch, cache, other;
  ASSERT_EQ(Warmup(scratch, cache.path()).exit_code, 0);
  auto tool = [&](std::vector<std::string> args,
                  const std::string& dir) -> RunResult {
    args.insert(args.begin(), {TESSEL_CACHE_BIN, "--cache-dir", dir});
    return RunCommand(args, scratch);
  };
  RunResult stats = tool({"stats"}, cache.path());
  EXPECT_EQ(stats.exit_code, 0);
  EXPECT_THAT(stats.output, HasSubstr("entries:  3"));
  EXPECT_THAT(stats.output, HasSubstr("sm_80      3"));
  // The warmup's children compiled 3 kernels: 3 misses on record.
  RunResult json = tool({"stats", "--json"}, cache.path());
  EXPECT_EQ(json.exit_code, 0) << json.output;
  nlohmann::json counts = nlohmann::json::parse(json.output, nullptr, false);
  EXPECT_EQ(counts["entries"], 3) << json.output;
  EXPECT_EQ(counts["misses"], 3) << json.output;
  EXPECT_EQ(counts["hits"], 0) << json.output;
  RunResult list = tool({"list"}, cache.path());
  EXPECT_EQ(std::count(list.output.begin(), list.output.end(), '\n'), 1 + 3);
  EXPECT_THAT(list.output, ::testing::StartsWith("key "));
  EXPECT_THAT(list.output, HasSubstr("fused_chunk_kernel"));

  // Export, import elsewhere, and an application there compiles nothing
  // and lowers nothing (the warmup's program records travel too).
  const std::string archive = scratch / "cache.tsc";
  RunResult exported = tool({"export", archive}, cache.path());
  EXPECT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_THAT(exported.output, HasSubstr("exported 3 entries"));
  EXPECT_THAT(exported.output, HasSubstr("with 3 program records"));
  RunResult imported = tool({"import", archive}, other.path());
  EXPECT_EQ(imported.exit_code, 0) << imported.output;
  EXPECT_THAT(imported.output, HasSubstr("imported 3 entries"));
  EXPECT_THAT(imported.output, HasSubstr("; 3 program records"));
  nlohmann::json probe = Probe(scratch, other.path());
  EXPECT_EQ(probe["nvrtc_compiles"], 0) << probe;
  EXPECT_EQ(probe["index_hits"], 3) << probe;
  // The probe found its 3 kernels on disk.
  counts = nlohmann::json::parse(tool({"stats", "--json"}, other.path()).output,
                                 nullptr, false);
  EXPECT_EQ(counts["hits"], 3);
  EXPECT_EQ(counts["misses"], 0);
  EXPECT_THAT(tool({"import", archive}, other.path()).output,
              HasSubstr("imported 0 entries (0 B)"));
  EXPECT_THAT(LeftoversUnder(other.path()), IsEmpty());

  // A damaged archive is refused whole.
  std::string bytes = ReadFile(archive);
  bytes[bytes.size() / 2] ^= 0x01;
  WriteFile(scratch / "damaged.tsc", bytes);
  TempDir third;
  RunResult damaged = tool({"import", scratch / "damaged.tsc"}, third.path());
  EXPECT_EQ(damaged.exit_code, 2);
  EXPECT_THAT(damaged.output, HasSubstr("not a whole tessel cache archive"));
  EXPECT_THAT(testing::FilesUnder(third.path()), IsEmpty());
  // Endless input is refused at its first long line, not read whole.
  RunResult endless = tool({"import", "/dev/zero"}, third.path());
  EXPECT_EQ(endless.exit_code, 2);
  EXPECT_THAT(endless.output, HasSubstr("a line longer than 4096 bytes"));
  RunResult folder = tool({"import", scratch.path()}, third.path());
  EXPECT_EQ(folder.exit_code, 2);
  EXPECT_THAT(folder.output, HasSubstr("is a directory"));
  EXPECT_THAT(testing::FilesUnder(third.path()), IsEmpty());

  // verify: a corrupt entry is removed (exit 1), the next warmup rebuilds it.
  absl::StatusOr<std::vector<jit::CacheEntryInfo>> entries =
      jit::CacheDirectory(cache.path()).List();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 3u);
  std::string cubin = ReadFile(entries->front().cubin_path);
  cubin[cubin.size() - 10] ^= 0x20;
  WriteFile(entries->front().cubin_path, cubin);
  RunResult verify = tool({"verify"}, cache.path());
  EXPECT_EQ(verify.exit_code, 1);
  EXPECT_THAT(verify.output, HasSubstr("2 sound, 1 corrupt (removed)"));
  EXPECT_THAT(verify.output, HasSubstr(entries->front().key));
  EXPECT_EQ(tool({"verify"}, cache.path()).exit_code, 0);
  RunResult rebuilt = Warmup(scratch, cache.path());
  EXPECT_EQ(CompiledAndCached(rebuilt.output), std::make_pair(1, 2))
      << rebuilt.output;

  RunResult pruned = tool({"prune", "--max-size", "0"}, cache.path());
  EXPECT_EQ(pruned.exit_code, 0) << pruned.output;
  EXPECT_THAT(tool({"stats"}, cache.path()).output, HasSubstr("entries:  0"));
  EXPECT_EQ(tool({"prune", "--max-size", "12X"}, cache.path()).exit_code, 2);
  EXPECT_EQ(tool({"clear"}, other.path()).exit_code, 0);
  EXPECT_THAT(testing::FilesUnder(other.path()), IsEmpty());
  EXPECT_EQ(tool({"frobnicate"}, other.path()).exit_code, 2);
}

// export renames its archive into place: what is not a regular file (a
// link, a pipe, a device) is refused rather than replaced. import reads a
// declared size only as far as the bytes go.
TEST(CacheToolTest, HostileExportTargetsAndArchiveSizes) {
  TempDir scratch, cache;
  auto tool = [&](std::vector<std::string> args) -> RunResult {
    args.insert(args.begin(), {TESSEL_CACHE_BIN, "--cache-dir", cache.path()});
    return RunCommand(args, scratch);
  };
  RunResult empty = tool({"export", ""});
  EXPECT_EQ(empty.exit_code, 2) << empty.output;
  EXPECT_THAT(empty.output, HasSubstr("needs an archive file name"));
  WriteFile(scratch / "real.tsc", "keep me");
  std::filesystem::create_symlink(scratch / "real.tsc", scratch / "link.tsc");
  RunResult link = tool({"export", scratch / "link.tsc"});
  EXPECT_EQ(link.exit_code, 2) << link.output;
  EXPECT_THAT(link.output, HasSubstr("is a symlink"));
  EXPECT_TRUE(std::filesystem::is_symlink(scratch / "link.tsc"));
  EXPECT_EQ(ReadFile(scratch / "real.tsc"), "keep me");
  const std::string fifo = scratch / "pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  RunResult pipe = tool({"export", fifo});
  EXPECT_EQ(pipe.exit_code, 2) << pipe.output;
  EXPECT_THAT(pipe.output, HasSubstr("not a regular file"));
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  RunResult missing = tool({"export", scratch / "no/such/folder/a.tsc"});
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_THAT(missing.output, HasSubstr("does not exist"));
  RunResult fresh = tool({"export", scratch / "new.tsc"});
  EXPECT_EQ(fresh.exit_code, 0) << fresh.output;

  // A few bytes that declare 200 MiB: cut short, not allocated first; more
  // than a cache file can be: refused at its line.
  const std::string path = "v2/a2/a25e40e1bac6564d0855997b3ca976cb.cubin";
  WriteFile(scratch / "short.tsc",
            "tessel-cache-archive 1\nfile " + path + " 209715200\nxx\n");
  RunResult cut = tool({"import", scratch / "short.tsc"});
  EXPECT_EQ(cut.exit_code, 2) << cut.output;
  EXPECT_THAT(cut.output, HasSubstr("is cut short"));
  WriteFile(scratch / "huge.tsc",
            "tessel-cache-archive 1\nfile " + path + " 4294967296\nxx\n");
  RunResult huge = tool({"import", scratch / "huge.tsc"});
  EXPECT_EQ(huge.exit_code, 2) << huge.output;
  EXPECT_THAT(huge.output, HasSubstr("unexpected line"));
}

// A cache folder that others can write is refused the same way by every
// tool: exit 2, the folder named, nothing created inside it.
TEST(CacheToolTest, RefusedRootExitsTwoEverywhere) {
  TempDir scratch, parent;
  const std::string root = parent / "shared";
  ASSERT_EQ(mkdir(root.c_str(), 0700), 0);
  ASSERT_EQ(chmod(root.c_str(), 0777), 0);
  for (const char* command : {"stats", "list", "verify"}) {
    RunResult r =
        RunCommand({TESSEL_CACHE_BIN, "--cache-dir", root, command}, scratch);
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr(root)) << command;
    EXPECT_THAT(r.output, HasSubstr("chmod 700")) << command;
  }
  RunResult dry = Warmup(scratch, root, {"--dry-run"});
  EXPECT_EQ(dry.exit_code, 2) << dry.output;
  EXPECT_THAT(dry.output, HasSubstr(root));
  RunResult warm = Warmup(scratch, root);
  EXPECT_EQ(warm.exit_code, 2) << warm.output;
  EXPECT_TRUE(std::filesystem::is_empty(root));
}

// TESSEL_CACHE_DIR set but empty: the tools refuse it (exit 2) instead of
// working on the default folder.
TEST(CacheToolTest, EmptyCacheDirVariableExitsTwo) {
  TempDir scratch, home;
  const std::vector<std::string> env = {"TESSEL_CACHE_DIR=",
                                        "XDG_CACHE_HOME=" + home.path()};
  RunResult stats = RunCommand({TESSEL_CACHE_BIN, "stats"}, scratch, env);
  EXPECT_EQ(stats.exit_code, 2) << stats.output;
  EXPECT_THAT(stats.output, HasSubstr("TESSEL_CACHE_DIR is set but empty"));
  RunResult warm = RunCommand({TESSEL_WARMUP_BIN, "--manifest", SmallManifest(),
                               "--arch", "sm_80", "--dry-run"},
                              scratch, env);
  EXPECT_EQ(warm.exit_code, 2) << warm.output;
  EXPECT_THAT(warm.output, HasSubstr("TESSEL_CACHE_DIR is set but empty"));
  EXPECT_THAT(testing::FilesUnder(home.path()), IsEmpty());
}

// A full disk leaves a key's .cu without its .cubin: verify names it and
// removes it.
TEST(CacheToolTest, VerifyReportsAndRemovesAnOrphanSource) {
  TempDir scratch, cache;
  ASSERT_EQ(Warmup(scratch, cache.path()).exit_code, 0);
  absl::StatusOr<std::vector<jit::CacheEntryInfo>> entries =
      jit::CacheDirectory(cache.path()).List();
  ASSERT_TRUE(entries.ok());
  ASSERT_FALSE(entries->empty());
  const std::string cubin = entries->front().cubin_path;
  ASSERT_EQ(std::remove(cubin.c_str()), 0);
  RunResult verify = RunCommand(
      {TESSEL_CACHE_BIN, "--cache-dir", cache.path(), "verify"}, scratch);
  EXPECT_EQ(verify.exit_code, 1) << verify.output;
  EXPECT_THAT(verify.output, HasSubstr("orphan"));
  EXPECT_THAT(verify.output, HasSubstr(entries->front().key));
  EXPECT_EQ(jit::CacheDirectory(cache.path()).List()->size(),
            entries->size() - 1);
  EXPECT_EQ(
      RunCommand({TESSEL_CACHE_BIN, "--cache-dir", cache.path(), "verify"},
                 scratch)
          .exit_code,
      0);
}

// Every .cubin and .cu of a cache by its path under the root: the entries
// and their code (the .json holds times, so it is compared by name only).
std::map<std::string, std::string> EntryFiles(const std::string& root) {
  std::map<std::string, std::string> files;
  for (const auto& file : std::filesystem::recursive_directory_iterator(root)) {
    if (!file.is_regular_file()) continue;
    const std::string ext = file.path().extension().string();
    if (ext != ".cubin" && ext != ".cu" && ext != ".json") continue;
    const std::string path =
        std::filesystem::relative(file.path(), root).string();
    files[path] = ext == ".json" ? "" : ReadFile(file.path().string());
  }
  return files;
}

// A CI matrix of three machines, each warming its shard into its own cache,
// and the three exports imported into one: the same entries, byte for byte,
// as one unsharded warmup.
TEST(WarmupProcessTest, ShardsImportedIntoOneCacheEqualAnUnshardedRun) {
  TempDir scratch, whole, merged;
  auto warm = [&](const std::string& cache, std::vector<std::string> extra) {
    std::vector<std::string> args = {TESSEL_WARMUP_BIN,
                                     "--manifest",
                                     SmallManifest(),
                                     "--arch",
                                     "sm_90a,sm_80",
                                     "--cache-dir",
                                     cache,
                                     "--jobs",
                                     "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunCommand(args, scratch);
  };
  RunResult unsharded = warm(whole.path(), {});
  ASSERT_EQ(unsharded.exit_code, 0) << unsharded.output;
  ASSERT_EQ(CompiledAndCached(unsharded.output), std::make_pair(6, 0));

  int jobs = 0, shards_with_jobs = 0;
  std::vector<TempDir> shard_caches(3);
  for (int i = 1; i <= 3; ++i) {
    const std::string shard = absl::StrCat(i, "/3");
    RunResult r = warm(shard_caches[i - 1].path(), {"--shard", shard});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::smatch m;
    const std::regex line(R"(shard (\d+)/3: (\d+) of the manifest's 6 jobs)");
    ASSERT_TRUE(std::regex_search(r.output, m, line)) << r.output;
    EXPECT_EQ(std::stoi(m[1]), i);
    const int mine = std::stoi(m[2]);
    EXPECT_EQ(CompiledAndCached(r.output), std::make_pair(mine, 0));
    jobs += mine;
    shards_with_jobs += mine > 0;
    // The same shard again picks the same jobs: all of them cached now.
    RunResult again = warm(shard_caches[i - 1].path(), {"--shard", shard});
    EXPECT_EQ(CompiledAndCached(again.output), std::make_pair(0, mine));

    const std::string archive = scratch / absl::StrCat("shard", i, ".tsc");
    RunResult exported =
        RunCommand({TESSEL_CACHE_BIN, "--cache-dir", shard_caches[i - 1].path(),
                    "export", archive},
                   scratch);
    ASSERT_EQ(exported.exit_code, 0) << exported.output;
    RunResult imported = RunCommand(
        {TESSEL_CACHE_BIN, "--cache-dir", merged.path(), "import", archive},
        scratch);
    ASSERT_EQ(imported.exit_code, 0) << imported.output;
  }
  EXPECT_EQ(jobs, 6);
  EXPECT_GE(shards_with_jobs, 2) << "the split put every job in one shard";
  const std::map<std::string, std::string> expected = EntryFiles(whole.path());
  EXPECT_EQ(expected.size(), 18u);  // 6 entries: .cubin, .cu, .json
  EXPECT_EQ(EntryFiles(merged.path()), expected);
  RunResult dry = warm(merged.path(), {"--dry-run"});
  EXPECT_EQ(dry.exit_code, 0) << dry.output;
}

TEST(WarmupProcessTest, BadShardExitsTwoNamingIt) {
  TempDir scratch, cache;
  for (const std::string bad :
       {"0/3", "4/3", "3", "1/0", "x/y", "-1/2", "1/99999999999", ""}) {
    RunResult r = Warmup(scratch, cache.path(), {"--shard", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr(bad.empty() ? "--shard: the value is empty"
                                                : "--shard " + bad + ":"))
        << r.output;
  }
  RunResult missing = Warmup(scratch, cache.path(), {"--shard"});
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_THAT(missing.output, HasSubstr("--shard: missing its value"));
  EXPECT_THAT(testing::FilesUnder(cache.path()), IsEmpty());
}

// docs/warmup.md's host application: its own binary with its own kernels.
TEST(HostWarmupExampleTest, BuildsAndWarmsTheApplicationsKernels) {
  TempDir scratch, cache;
  RunResult names =
      RunCommand({TESSEL_EXAMPLE_WARMUP_BIN, "--list-kernels"}, scratch);
  EXPECT_EQ(names.exit_code, 0);
  EXPECT_EQ(names.output, "my_scale\n");
  RunResult r =
      RunCommand({TESSEL_EXAMPLE_WARMUP_BIN, "--manifest",
                  SourcePath("tests/tools/example_warmup/kernels.json"),
                  "--arch", "sm_90a", "--cache-dir", cache.path()},
                 scratch);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(CompiledAndCached(r.output), std::make_pair(2, 0)) << r.output;
}

}  // namespace
}  // namespace tessel::tools
