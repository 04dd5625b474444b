// autotune() with the device and the evaluator passed in: the whole
// algorithm (space, key, store, search, progress), testable without a GPU.
//
//   FakeEvaluator eval;  // a CandidateEvaluator (search.h)
//   absl::StatusOr<tessel::TuneResult> r = tessel::autotuner::AutotuneWith(
//       request, {.store_dir = dir}, {.name = "Fake", .arch = "sm_90a"}, eval);
#ifndef TESSEL_SRC_AUTOTUNE_TUNER_H_
#define TESSEL_SRC_AUTOTUNE_TUNER_H_

#include <functional>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "src/autotune/search.h"
#include "src/autotune/tune_key.h"
#include "tessel/autotune.h"

namespace tessel::autotuner {

// request.factory, args and check are left to the evaluator; the rest of
// the request and of options is honoured here. `now` is the budget's clock.
absl::StatusOr<TuneResult> AutotuneWith(
    const TuneRequest& request, const TuneOptions& options,
    const DeviceIdentity& device, CandidateEvaluator& evaluator,
    std::function<absl::Time()> now = [] { return absl::Now(); });

}  // namespace tessel::autotuner

#endif  // TESSEL_SRC_AUTOTUNE_TUNER_H_
