// CUDA events for timing work on a stream: the primitives a profiler is
// built from.
//
//   ASSIGN_OR_RETURN(Event start, Event::Create());
//   ASSIGN_OR_RETURN(Event stop, Event::Create());
//   RETURN_IF_ERROR(start.Record(stream));
//   ...launches...
//   RETURN_IF_ERROR(stop.Record(stream));
//   ASSIGN_OR_RETURN(float ms, ElapsedMilliseconds(start, stop));
#ifndef TESSEL_JIT_EVENT_H_
#define TESSEL_JIT_EVENT_H_

#include <cuda.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessel::jit {

class Event {
 public:
  // A timing event in `context` (nullptr: the current context, else device
  // 0's primary).
  static absl::StatusOr<Event> Create(CUcontext context = nullptr);

  Event() = default;
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  absl::Status Record(CUstream stream = nullptr);
  absl::Status Synchronize() const;
  CUevent get() const { return event_; }

 private:
  void Release();
  CUevent event_ = nullptr;
  CUcontext context_ = nullptr;
};

// Milliseconds between two recorded events; waits for `end`.
absl::StatusOr<float> ElapsedMilliseconds(const Event& start, const Event& end);

}  // namespace tessel::jit

#endif  // TESSEL_JIT_EVENT_H_
