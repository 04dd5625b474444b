// The JSON store: round trip, damaged and foreign files, unsafe folders,
// concurrent writers (threads and processes).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "src/autotune/tune_store.h"
#include "tests/autotune/temp_dir.h"

namespace tessel::autotuner {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TempDir;

TuneKey Key(const std::string& kernel = "gemm_NN") {
  TuneRequest r;
  r.kernel = kernel;
  r.args = {TensorView::Contiguous(uint64_t{1}, f16, {512, 512})};
  std::vector<TuneConfig> configs;
  for (int m : {64, 128, 256}) configs.push_back({{"block_m", m}});
  return MakeTuneKey(r, configs, {.name = "NVIDIA H200", .arch = "sm_90a"},
                     {.target = Target::sm90a()});
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  return names;
}

StoredTune Tune(int block_m, double ms) {
  StoredTune t{.best = {{"block_m", block_m}}, .best_ms = ms};
  t.candidates.push_back({.index = 0,
                          .total = 2,
                          .config = {{"block_m", block_m}},
                          .outcome = TuneOutcome::kTimed,
                          .ms = ms});
  t.candidates.push_back(
      {.index = 1,
       .total = 2,
       .config = {{"block_m", 256}},
       .outcome = TuneOutcome::kCompileFailed,
       .status = absl::ResourceExhaustedError("too much shared\nlog")});
  return t;
}

TEST(TuneStore, RoundTrip) {
  TempDir tmp;
  TuneStore store(tmp.path() + "/autotune");
  ASSERT_TRUE(store.enabled()) << store.disabled_reason();
  const TuneKey key = Key();
  std::string warning;
  EXPECT_FALSE(store.Load(key, &warning).has_value());
  EXPECT_EQ(warning, "");  // absent is not worth a warning

  ASSERT_TRUE(store.Save(key, Tune(128, 0.25)).ok());
  const std::string path = store.PathFor(key);
  EXPECT_EQ(path, tmp.path() + "/autotune/" + key.FileName());
  EXPECT_THAT(Files(tmp.path() + "/autotune"),
              ::testing::ElementsAre(key.FileName()));  // no temp left

  std::optional<StoredTune> back = store.Load(key, &warning);
  ASSERT_TRUE(back.has_value()) << warning;
  EXPECT_EQ(warning, "");
  EXPECT_TRUE(back->best == (TuneConfig{{"block_m", 128}}));
  EXPECT_DOUBLE_EQ(back->best_ms, 0.25);

  // The file is for people too: the key's fields and every candidate.
  nlohmann::json json = nlohmann::json::parse(Slurp(path));
  EXPECT_EQ(json["kernel"], "gemm_NN");
  EXPECT_EQ(json["device"], "NVIDIA H200");
  EXPECT_EQ(json["key"], key.Hash());
  EXPECT_EQ(json["candidates"][1]["outcome"], "compile failed");
  EXPECT_EQ(json["candidates"][1]["error"], "too much shared");
  EXPECT_EQ(json["skipped_for_budget"], 0);

  // Another key is another file.
  EXPECT_FALSE(store.Load(Key("gemm_NT"), &warning).has_value());
  EXPECT_EQ(warning, "");
}

TEST(TuneStore, FolderIsPrivate) {
  TempDir tmp;
  TuneStore store(tmp.path() + "/a/b/autotune");
  ASSERT_TRUE(store.enabled()) << store.disabled_reason();
  struct stat st;
  ASSERT_EQ(::stat((tmp.path() + "/a/b/autotune").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_TRUE(store.Save(Key(), Tune(64, 1)).ok());
  ASSERT_EQ(::stat(store.PathFor(Key()).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(TuneStore, DamagedOrForeignFilesAreIgnoredWithAWarning) {
  TempDir tmp;
  TuneStore store(tmp.path());
  const TuneKey key = Key();
  ASSERT_TRUE(store.Save(key, Tune(128, 0.25)).ok());
  const std::string path = store.PathFor(key);
  const nlohmann::json good = nlohmann::json::parse(Slurp(path));

  struct Case {
    const char* what;
    std::function<std::string()> text;
    const char* warning;
  };
  auto edited = [&](std::function<void(nlohmann::json&)> edit) {
    return [=] {
      nlohmann::json j = good;
      edit(j);
      return j.dump();
    };
  };
  std::vector<Case> cases = {
      {"garbage", [] { return std::string("\x01\x02 not json {"); },
       "not valid JSON"},
      {"truncated", [&] { return good.dump().substr(0, 40); },
       "not valid JSON"},
      {"empty", [] { return std::string(); }, "not valid JSON"},
      {"an array", [] { return std::string("[1, 2]"); }, "not valid JSON"},
      {"other schema", edited([](nlohmann::json& j) { j["schema"] = 99; }),
       "another file format"},
      {"no schema", edited([](nlohmann::json& j) { j.erase("schema"); }),
       "another file format"},
      {"other version",
       edited([](nlohmann::json& j) { j["tessel_version"] = "0.0.1"; }),
       "written by tessel \"0.0.1\""},
      {"other key", edited([](nlohmann::json& j) { j["key"] = "00"; }),
       "another key"},
      {"other device",
       edited([](nlohmann::json& j) { j["device"] = "NVIDIA H100"; }),
       "\"device\" differs"},
      {"best outside the space", edited([](nlohmann::json& j) {
         j["best"] = {{"block_m", 32}};
       }),
       "not in the space"},
      {"best not a config", edited([](nlohmann::json& j) {
         j["best"] = {{"block_m", 1.5}};
       }),
       "values are integers"},
      {"no best_ms", edited([](nlohmann::json& j) { j.erase("best_ms"); }),
       "no usable"},
      {"negative best_ms", edited([](nlohmann::json& j) { j["best_ms"] = -1; }),
       "no usable"},
  };
  for (const Case& c : cases) {
    Write(path, c.text());
    std::string warning;
    EXPECT_FALSE(store.Load(key, &warning).has_value()) << c.what;
    EXPECT_THAT(warning, HasSubstr(c.warning)) << c.what;
    EXPECT_THAT(warning, HasSubstr(path)) << c.what;
  }
  // The next Save replaces the bad file.
  ASSERT_TRUE(store.Save(key, Tune(64, 0.5)).ok());
  std::string warning;
  std::optional<StoredTune> back = store.Load(key, &warning);
  ASSERT_TRUE(back.has_value()) << warning;
  EXPECT_EQ(back->best.Int("block_m", 0), 64);
}

TEST(TuneStore, UnsafeFolderIsNotUsed) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/shared";
  ASSERT_EQ(::mkdir(dir.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  TuneStore store(dir);
  EXPECT_FALSE(store.enabled());
  EXPECT_THAT(store.disabled_reason(), HasSubstr("writable by group"));
  std::string warning;
  EXPECT_FALSE(store.Load(Key(), &warning).has_value());
  EXPECT_EQ(store.Save(Key(), Tune(64, 1)).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(TuneStore, FromOptionsFollowsTheCacheEnvironment) {
  TempDir tmp;
  ::setenv("TESSEL_CACHE_DIR", tmp.path().c_str(), 1);
  ::unsetenv("TESSEL_CACHE");
  TuneStore store = TuneStore::FromOptions("");
  EXPECT_TRUE(store.enabled()) << store.disabled_reason();
  EXPECT_EQ(store.dir(), tmp.path() + "/autotune");
  EXPECT_FALSE(store.switched_off());
  ::setenv("TESSEL_CACHE", "off", 1);
  EXPECT_FALSE(TuneStore::FromOptions("").enabled());
  EXPECT_TRUE(TuneStore::FromOptions("").switched_off());
  // An explicit folder is used anyway.
  EXPECT_TRUE(TuneStore::FromOptions(tmp.path() + "/mine").enabled());
  ::unsetenv("TESSEL_CACHE");
  // Set but empty: no store (not one in the working folder), saying why.
  ::setenv("TESSEL_CACHE_DIR", "", 1);
  TuneStore empty = TuneStore::FromOptions("");
  EXPECT_FALSE(empty.enabled());
  EXPECT_FALSE(empty.switched_off());
  EXPECT_THAT(empty.disabled_reason(), HasSubstr("TESSEL_CACHE_DIR"));
  ::unsetenv("TESSEL_CACHE_DIR");
}

// Every writer's file is whole: the survivor is one of them.
void ExpectOneWholeWinner(const TuneStore& store, const TuneKey& key) {
  std::string warning;
  std::optional<StoredTune> back = store.Load(key, &warning);
  ASSERT_TRUE(back.has_value()) << warning;
  const int64_t m = back->best.Int("block_m", 0);
  EXPECT_TRUE(m == 64 || m == 128 || m == 256) << m;
  EXPECT_DOUBLE_EQ(back->best_ms, double(m));
  for (const std::string& name : Files(store.dir())) {
    EXPECT_EQ(name, key.FileName()) << "a temp file was left";
  }
}

TEST(TuneStore, ConcurrentThreadsLeaveAValidFile) {
  TempDir tmp;
  TuneStore store(tmp.path());
  const TuneKey key = Key();
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      const int m = (t % 3 == 0) ? 64 : (t % 3 == 1) ? 128 : 256;
      for (int i = 0; i < 30; ++i) {
        EXPECT_TRUE(store.Save(key, Tune(m, m)).ok());
        std::string warning;
        // Readers in between never see half a file.
        std::optional<StoredTune> seen = store.Load(key, &warning);
        EXPECT_TRUE(seen.has_value()) << warning;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ExpectOneWholeWinner(store, key);
}

TEST(TuneStore, ConcurrentProcessesLeaveAValidFile) {
  TempDir tmp;
  const TuneKey key = Key();
  std::vector<pid_t> children;
  for (int p = 0; p < 4; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      TuneStore store(tmp.path());
      const int m = (p % 3 == 0) ? 64 : (p % 3 == 1) ? 128 : 256;
      bool ok = store.enabled();
      for (int i = 0; i < 40 && ok; ++i) {
        ok = store.Save(key, Tune(m, m)).ok();
        std::string warning;
        ok = ok && store.Load(key, &warning).has_value();
      }
      ::_exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  ExpectOneWholeWinner(TuneStore(tmp.path()), key);
}

}  // namespace
}  // namespace tessel::autotuner
