#include "jit/event.h"

#include <utility>

#include "jit/context.h"
#include "jit/driver_api.h"

namespace tessel::jit {

absl::StatusOr<Event> Event::Create(CUcontext context) {
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  absl::StatusOr<CUcontext> ctx = ResolveContext(context);
  if (!ctx.ok()) return ctx.status();
  ScopedContext current(**api, *ctx);
  if (!current.status().ok()) return current.status();
  Event event;
  event.context_ = *ctx;
  if (absl::Status s =
          TESSEL_CU_CALL(**api, cuEventCreate(&event.event_, CU_EVENT_DEFAULT));
      !s.ok()) {
    event.event_ = nullptr;
    return s;
  }
  return event;
}

Event::~Event() { Release(); }

Event::Event(Event&& other) noexcept
    : event_(std::exchange(other.event_, nullptr)),
      context_(std::exchange(other.context_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    Release();
    event_ = std::exchange(other.event_, nullptr);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

void Event::Release() {
  if (event_ == nullptr) return;
  if (absl::StatusOr<const DriverApi*> api = Driver(); api.ok()) {
    ScopedContext current(**api, context_);
    if (current.status().ok()) (*api)->cuEventDestroy(event_);
  }
  event_ = nullptr;
}

absl::Status Event::Record(CUstream stream) {
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  ScopedContext current(**api, context_);
  if (!current.status().ok()) return current.status();
  return TESSEL_CU_CALL(**api, cuEventRecord(event_, stream));
}

absl::Status Event::Synchronize() const {
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  return TESSEL_CU_CALL(**api, cuEventSynchronize(event_));
}

absl::StatusOr<float> ElapsedMilliseconds(const Event& start,
                                          const Event& end) {
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  if (absl::Status s = end.Synchronize(); !s.ok()) return s;
  float ms = 0;
  if (absl::Status s = TESSEL_CU_CALL(
          **api, cuEventElapsedTime(&ms, start.get(), end.get()));
      !s.ok()) {
    return s;
  }
  return ms;
}

}  // namespace tessel::jit
