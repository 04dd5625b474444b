// DeviceTensor and Stream (tessel/device.h).
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jit/context.h"
#include "jit/driver_api.h"
#include "tessel/device.h"

namespace tessel {
namespace {

std::string TypeName(DataType dtype, const std::vector<int64_t>& shape) {
  return absl::StrCat(std::string(dtype_name(dtype)), "[",
                      absl::StrJoin(shape, ","), "]");
}

}  // namespace

absl::StatusOr<DeviceTensor> DeviceTensor::Allocate(
    DataType dtype, std::vector<int64_t> shape) {
  int64_t bytes = dtype_bytes(dtype);
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && bytes > (int64_t{1} << 56) / d)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "DeviceTensor::Allocate: bad shape ", TypeName(dtype, shape)));
    }
    bytes *= d;
  }
  absl::StatusOr<DeviceMemory> memory =
      DeviceMemory::Allocate(static_cast<size_t>(bytes));
  if (!memory.ok()) return memory.status();
  DeviceTensor t;
  t.memory_ = *std::move(memory);
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  return t;
}

absl::StatusOr<DeviceTensor> DeviceTensor::FromHost(const HostTensor& host) {
  if (!host.status().ok()) return host.status();
  absl::StatusOr<DeviceTensor> t = Allocate(host.dtype(), host.shape());
  if (!t.ok()) return t.status();
  if (absl::Status s = t->Upload(host); !s.ok()) return s;
  return t;
}

int64_t DeviceTensor::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

absl::Status DeviceTensor::Upload(const HostTensor& host) {
  if (host.dtype() != dtype_ || host.shape() != shape_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DeviceTensor::Upload: the device tensor is ", TypeName(dtype_, shape_),
        ", the host tensor ", TypeName(host.dtype(), host.shape())));
  }
  if (host.num_bytes() == 0) return absl::OkStatus();
  return memory_.CopyFromHost(host.data(), host.num_bytes());
}

absl::Status DeviceTensor::Download(HostTensor& host) const {
  if (host.dtype() != dtype_ || host.shape() != shape_) {
    return absl::InvalidArgumentError(
        absl::StrCat("DeviceTensor::Download: the device tensor is ",
                     TypeName(dtype_, shape_), ", the host tensor ",
                     TypeName(host.dtype(), host.shape())));
  }
  if (host.num_bytes() == 0) return absl::OkStatus();
  return memory_.CopyToHost(host.data(), host.num_bytes());
}

absl::StatusOr<HostTensor> DeviceTensor::Download() const {
  HostTensor host(dtype_, shape_);
  if (absl::Status s = Download(host); !s.ok()) return s;
  return host;
}

absl::StatusOr<Stream> Stream::Create() {
  absl::StatusOr<const jit::DriverApi*> api = jit::Driver();
  if (!api.ok()) return api.status();
  absl::StatusOr<CUcontext> context = jit::ResolveContext(nullptr);
  if (!context.ok()) return context.status();
  jit::ScopedContext current(**api, *context);
  if (!current.status().ok()) return current.status();
  CUstream stream = nullptr;
  if (absl::Status s = TESSEL_CU_CALL(
          **api, cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
      !s.ok()) {
    return s;
  }
  Stream out;
  out.stream_ = stream;
  return out;
}

Stream::~Stream() { Release(); }

Stream::Stream(Stream&& other) noexcept
    : stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    Release();
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

void Stream::Release() {
  if (stream_ == nullptr) return;
  absl::StatusOr<const jit::DriverApi*> api = jit::Driver();
  absl::StatusOr<CUcontext> context = jit::StreamContext(stream_);
  if (api.ok() && context.ok()) {
    jit::ScopedContext current(**api, *context);
    if (current.status().ok()) (*api)->cuStreamDestroy(stream_);
  }
  stream_ = nullptr;
}

absl::Status Stream::Synchronize() const {
  if (stream_ == nullptr) {
    return absl::FailedPreconditionError("Synchronize of an empty Stream");
  }
  return tessel::Synchronize(stream_);
}

}  // namespace tessel
