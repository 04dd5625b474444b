// How tessel-warmup shows its progress: a one-line bar redrawn in place on a
// terminal, one plain line per finished job otherwise (logs, CI).
//
//   tessel::tools::ConsoleProgress progress(stdout, /*bar=*/isatty(1));
//   RunWarmup(manifest, programs, options, &progress);
#ifndef TESSEL_TOOLS_PROGRESS_H_
#define TESSEL_TOOLS_PROGRESS_H_

#include <cstdio>

#include "tools/warmup_driver.h"

namespace tessel::tools {

class ConsoleProgress : public WarmupProgress {
 public:
  ConsoleProgress(std::FILE* out, bool bar) : out_(out), bar_(bar) {}

  void Start(int total) override;
  void JobDone(const JobResult& result, int done, int total,
               const std::vector<const WarmupJob*>& running) override;
  void Finish() override;

 private:
  std::FILE* out_;
  bool bar_;
  int compiled_ = 0;
  int cached_ = 0;
  int failed_ = 0;
  int missing_ = 0;
};

}  // namespace tessel::tools

#endif  // TESSEL_TOOLS_PROGRESS_H_
