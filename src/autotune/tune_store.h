// Autotuning winners on disk: one JSON file per TuneKey.
//
//   tessel::autotuner::TuneStore store =
//       tessel::autotuner::TuneStore::FromOptions(options.store_dir);
//   std::string warning;
//   if (std::optional<StoredTune> hit = store.Load(key, &warning)) ...
//   if (!warning.empty()) ... the file was there but unusable ...
//   absl::Status saved = store.Save(key, {.best = config, .best_ms = 0.41});
//
// Layout: <dir>/<TuneKey::FileName()>, by default <kernel cache root>/autotune.
// Files are written through a temp file and a rename, so concurrent writers
// (threads or processes) leave one whole file: the last one's. A file that is
// not valid JSON, has another schema or tessel version, belongs to another
// key or names a config outside the space is ignored with a warning (and
// replaced by the next Save). A folder owned by someone else or writable by
// group or others is not used at all.
#ifndef TESSEL_SRC_AUTOTUNE_TUNE_STORE_H_
#define TESSEL_SRC_AUTOTUNE_TUNE_STORE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "src/autotune/tune_key.h"
#include "tessel/autotune.h"

namespace tessel::autotuner {

// Bump when the file's format changes.
inline constexpr int kStoreSchema = 1;

struct StoredTune {
  TuneConfig best;
  double best_ms = 0;
  // Every candidate, for the record (written, not read back).
  std::vector<TuneCandidate> candidates;
};

class TuneStore {
 public:
  // `dir` as TuneOptions::store_dir: empty is the default folder (off when
  // TESSEL_CACHE=off).
  static TuneStore FromOptions(const std::string& dir);
  // Creates `dir` (mode 0700) when missing; disabled when it cannot be made
  // or is unsafe.
  explicit TuneStore(std::string dir);

  bool enabled() const { return enabled_; }
  // Off on purpose (TESSEL_CACHE=off), not for a broken folder.
  bool switched_off() const { return switched_off_; }
  const std::string& disabled_reason() const { return disabled_reason_; }
  const std::string& dir() const { return dir_; }
  std::string PathFor(const TuneKey& key) const;

  // The winner stored for `key`, or nullopt: absent (no warning) or
  // unusable (why in *warning).
  std::optional<StoredTune> Load(const TuneKey& key,
                                 std::string* warning) const;
  absl::Status Save(const TuneKey& key, const StoredTune& tune) const;

 private:
  TuneStore() = default;

  std::string dir_;
  bool enabled_ = false;
  bool switched_off_ = false;
  std::string disabled_reason_;
};

}  // namespace tessel::autotuner

#endif  // TESSEL_SRC_AUTOTUNE_TUNE_STORE_H_
