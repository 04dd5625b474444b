#include "tools/progress.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tessel::tools {
namespace {

constexpr int kBarWidth = 30;
constexpr size_t kLineWidth = 110;  // the bar line is cut to this

}  // namespace

void ConsoleProgress::Start(int total) {
  if (bar_) {
    absl::FPrintF(out_, "\r\033[K[%s] 0/%d", std::string(kBarWidth, '.'),
                  total);
  } else {
    absl::FPrintF(out_, "warmup: %d jobs\n", total);
  }
  std::fflush(out_);
}

void ConsoleProgress::JobDone(const JobResult& result, int done, int total,
                              const std::vector<const WarmupJob*>& running) {
  switch (result.outcome) {
    case JobOutcome::kCompiled:
      ++compiled_;
      break;
    case JobOutcome::kCached:
      ++cached_;
      break;
    case JobOutcome::kMissing:
      ++missing_;
      break;
    case JobOutcome::kFailed:
      ++failed_;
      break;
  }
  if (!bar_) {
    absl::FPrintF(out_, "[%d/%d] %-8s %6.2fs  %s\n", done, total,
                  JobOutcomeName(result.outcome), result.seconds,
                  result.job.Describe());
    std::fflush(out_);
    return;
  }
  // A failure stays visible above the bar.
  if (result.outcome == JobOutcome::kFailed) {
    absl::FPrintF(out_, "\r\033[KFAILED %s\n", result.job.Describe());
  }
  const int filled = total == 0 ? kBarWidth : kBarWidth * done / total;
  std::string line = absl::StrFormat(
      "[%s%s] %d/%d  compiled %d  cached %d  failed %d",
      std::string(filled, '#'), std::string(kBarWidth - filled, '.'), done,
      total, compiled_, cached_, failed_);
  if (missing_ > 0) absl::StrAppend(&line, "  missing ", missing_);
  if (!running.empty()) {
    absl::StrAppend(&line, "  | ", running.front()->entry->name, " ",
                    running.front()->arch);
  }
  if (line.size() > kLineWidth) line.resize(kLineWidth);
  absl::FPrintF(out_, "\r\033[K%s", line);
  std::fflush(out_);
}

void ConsoleProgress::Finish() {
  if (bar_) absl::FPrintF(out_, "\n");
  std::fflush(out_);
}

}  // namespace tessel::tools
